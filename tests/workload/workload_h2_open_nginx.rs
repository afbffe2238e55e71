//! A workload over HTTP/2 in the open model as nginx sees it: a `unique`
//! feeder at `-r` over h2c, with nginx closing each connection after a few
//! requests (`keepalive_requests`, a graceful GOAWAY). nginx's log holds
//! every row exactly once, each over HTTP/2: a request above the GOAWAY's
//! last stream id was never processed, went again on the next connection,
//! and stayed one request.

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::workload::write;
use stampede_testkit::{free_port, require_tool, run_clean, temp_dir};

#[test]
fn nginx_logs_each_row_once_over_http2_through_goaways() {
    let program = require_tool!("nginx");
    let dir = temp_dir("h2-open-nginx");
    let port = free_port();
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{port} http2")],
        log_format: "$request_uri $server_protocol $status",
        http_extra: "keepalive_requests 7;",
        netns: None,
    };
    let ready = || listening(&format!("127.0.0.1:{port}"));
    let nginx = Nginx::start(&program, &dir, &setup, ready);
    let mut csv = String::from("id\n");
    for id in 0..60 {
        csv.push_str(&format!("{id}\n"));
    }
    let feed = format!("{}:unique", write(&dir, "ids.csv", &csv));
    let url = format!("http://127.0.0.1:{port}/u?id={{{{id}}}}");
    let run = run_clean(&[
        &url,
        "--http2",
        // Fast enough that streams overlap, so some are in flight when
        // nginx's GOAWAY comes.
        "-r",
        "2000",
        "-d",
        "20s",
        "-c",
        "2",
        "--streams",
        "4",
        "-t",
        "1",
        "--feed",
        &feed,
        "--check",
        "status == 200",
    ]);
    let lines = nginx.take_lines();
    assert_eq!(run.result()["stop_reason"], "feed_exhausted");
    assert_eq!(run.count("/requests/sent"), 60);
    assert_eq!(run.count("/requests/success"), 60, "{}", run.result());
    let mut ids: Vec<u64> = lines
        .iter()
        .map(|fields| {
            assert_eq!(fields[1], "HTTP/2.0", "{fields:?}");
            assert_eq!(fields[2], "200", "{fields:?}");
            fields[0]
                .rsplit('=')
                .next()
                .and_then(|id| id.parse().ok())
                .unwrap_or_else(|| panic!("unexpected line {fields:?}"))
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..60).collect::<Vec<_>>(), "every row once");
    // 60 requests at 7 per connection: nginx closed at least 8.
    assert!(run.count("/connections/opened") >= 9, "{}", run.result());
}
