//! A check that no response reached (every body
//! failed to decode, so no check ran) is shown as not evaluated, not as
//! 100% passed; the JSON keeps its counts (0 passed, 0 failed) and no ratio.

use stampede_testkit::{binary, run_stampede, RawServer};
use std::io::Write;

/// Every response says gzip but its body is not gzip.
fn bad_gzip_server() -> RawServer {
    RawServer::start(|mut stream| {
        let body = b"this is not gzip at all";
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        while stampede_testkit::read_request_head(&mut stream) {
            let _ = stream.write_all(head.as_bytes());
            if stream.write_all(body).is_err() {
                return;
            }
        }
    })
}

#[test]
fn a_check_no_response_reached_says_so() {
    let server = bad_gzip_server();
    let url = server.url("/");
    let run = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "4",
            "-c",
            "1",
            "-t",
            "1",
            "--io",
            "tokio",
            "--check",
            "body contains \"gzip\"",
        ],
    );
    let at = format!("{}\n{}", run.stdout(), run.result());
    assert_eq!(run.count("/errors/undecodable_body"), 4, "{at}");
    let check = &run.result()["checks"][0];
    assert_eq!(check["passed"], 0, "{at}");
    assert_eq!(check["failed"], 0, "{at}");
    let line = run
        .stdout()
        .lines()
        .find(|l| l.contains("body contains \"gzip\""))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no check line: {at}"));
    assert!(!line.contains('%'), "{line}");
    assert!(line.contains("not evaluated"), "{line}");
}
