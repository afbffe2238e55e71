//! `--redirects N` against the built-in target's `/redirect/{n}`
//! chain, on both engine paths: hops are followed on the same origin and
//! counted apart from requests (`-n` counts first requests), the limit is
//! the `redirect_limit` error, a POST answered 302 goes on as a GET, and
//! through a Unix socket a redirect to another origin is the response
//! (counted as offsite; straight to a host it is followed:
//! tests/protocols/redirect_origins.rs). Over HTTP/2 (h2c) the same rules hold, each
//! hop a stream on the same connection, in both load models; a hop to
//! another origin goes to it (tests/protocols/redirect_origins_h2.rs).

use stampede_testkit::{binary, one_thread, run_stampede, spawn_target, RawServer, Run};
use std::io::Write;

const EVENT_LOOPS: [&str; 2] = ["auto", "tokio"];

fn run(io: &str, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["--io", io, "-t", "1"]);
    run_stampede(binary(), &all)
}

#[test]
fn a_chain_is_followed_and_hops_are_not_requests() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/redirect/3", target.local_addr());
    for io in EVENT_LOOPS {
        let before = target.stats().requests_total;
        let run = run(io, &[&url, "--redirects", "5", "-n", "20", "-c", "2"]);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        assert_eq!(run.count("/requests/sent"), 20, "--io {io}");
        assert_eq!(run.count("/requests/success"), 20, "--io {io}");
        assert_eq!(
            run.count("/status/200"),
            20,
            "--io {io}: no 302 is an answer"
        );
        assert_eq!(run.count("/redirects/followed"), 60, "--io {io}");
        assert_eq!(run.count("/redirects/max_hops"), 5, "--io {io}");
        // The server saw every hop: 4 requests per chain.
        assert_eq!(target.stats().requests_total - before, 80, "--io {io}");
    }
}

#[test]
fn past_the_limit_is_a_redirect_limit_error() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/redirect/3", target.local_addr());
    for io in EVENT_LOOPS {
        let run = run(io, &[&url, "--redirects", "2", "-n", "10", "-c", "1"]);
        assert_eq!(run.count("/requests/sent"), 10, "--io {io}");
        assert_eq!(run.count("/errors/redirect_limit"), 10, "--io {io}");
        assert_eq!(run.count("/redirects/followed"), 20, "--io {io}");
    }
}

#[test]
fn without_redirects_the_302_is_the_answer() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/redirect/3", target.local_addr());
    let run = run("auto", &[&url, "-n", "5", "-c", "1"]);
    assert_eq!(run.count("/status/302"), 5);
    assert!(
        run.result().get("redirects").is_none(),
        "no redirects asked for"
    );
}

#[test]
fn a_post_answered_302_goes_on_as_a_get() {
    // A server that answers the POST with 302 and records what followed.
    let server = RawServer::start(|mut stream| {
        let mut buf = [0u8; 4096];
        loop {
            let n = match std::io::Read::read(&mut stream, &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let request = String::from_utf8_lossy(&buf[..n]).into_owned();
            let response: &[u8] = if request.starts_with("POST /form ") {
                b"HTTP/1.1 302 Found\r\nLocation: /done\r\nContent-Length: 0\r\n\r\n"
            } else if request.starts_with("GET /done ") && !request.contains("Content-Length") {
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            } else {
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
            };
            if stream.write_all(response).is_err() {
                return;
            }
        }
    });
    let url = server.url("/form");
    for io in EVENT_LOOPS {
        let run = run(
            io,
            &[
                &url,
                "-m",
                "POST",
                "-b",
                "{\"a\":1}",
                "--redirects",
                "1",
                "-n",
                "4",
                "-c",
                "1",
            ],
        );
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        assert_eq!(run.count("/status/200"), 4, "--io {io}: {}", run.result());
        assert_eq!(run.count("/redirects/followed"), 4, "--io {io}");
    }
}

#[test]
fn through_a_unix_socket_another_origin_is_not_followed() {
    // A Unix socket reaches one origin: a hop elsewhere is the response.
    let sock = stampede_testkit::temp_dir("redirect-unix").join("t.sock");
    let _target = spawn_target(stampede_testkit::TargetConfig {
        unix_socket: Some(sock.clone()),
        ..one_thread()
    });
    let url = "http://localhost/redirect-to?url=http%3A%2F%2F127.0.0.1%3A1%2Fx";
    for io in EVENT_LOOPS {
        let sock = sock.to_str().unwrap();
        let run = run(
            io,
            &[
                url,
                "--unix-socket",
                sock,
                "--redirects",
                "3",
                "-n",
                "3",
                "-c",
                "1",
            ],
        );
        assert_eq!(run.count("/status/302"), 3, "--io {io}: {}", run.stderr());
        assert_eq!(run.count("/redirects/offsite"), 3, "--io {io}");
        assert_eq!(run.count("/redirects/followed"), 0, "--io {io}");
    }
}

#[test]
fn over_http2_hops_are_streams_on_the_same_connection() {
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let url = format!("{base}/redirect/3");
    for (model, extra) in [("closed", &[][..]), ("open", &["-r", "200"][..])] {
        let before = target.stats();
        let mut args = vec![
            url.as_str(),
            "--http2",
            "--redirects",
            "5",
            "-n",
            "20",
            "-c",
            "2",
            "--streams",
            "2",
            "-t",
            "1",
        ];
        args.extend_from_slice(extra);
        let run = run_stampede(binary(), &args);
        let after = target.stats();
        assert_eq!(run.code(), Some(0), "{model}: {}", run.stderr());
        assert_eq!(run.count("/requests/sent"), 20, "{model}");
        assert_eq!(run.count("/status/200"), 20, "{model}: no 302 is an answer");
        assert_eq!(run.count("/redirects/followed"), 60, "{model}");
        // The server saw every hop as a stream: 4 per chain, on at most
        // the run's 2 connections.
        assert_eq!(after.h2_streams_total - before.h2_streams_total, 80);
        assert!(after.h2_connections - before.h2_connections <= 2, "{model}");
    }
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "--redirects",
            "2",
            "-n",
            "10",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.count("/errors/redirect_limit"), 10);
    assert_eq!(run.count("/redirects/followed"), 20);
    // Another origin: followed over HTTP/2 too (redirect_origins_h2.rs);
    // nothing listens there, so each chain ends refused.
    let away = format!("{base}/redirect-to?url=http%3A%2F%2F127.0.0.1%3A1%2Fx");
    let run = run_stampede(
        binary(),
        &[
            &away,
            "--http2",
            "--redirects",
            "3",
            "-n",
            "3",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.count("/errors/connect_refused"), 3, "{}", run.stderr());
    assert_eq!(run.count("/redirects/offsite"), 0);
    assert_eq!(run.count("/redirects/followed"), 3);
}

#[test]
fn redirects_with_pipelining_are_refused() {
    let run = run_stampede(
        binary(),
        &[
            "http://127.0.0.1:1/",
            "--redirects",
            "2",
            "--pipeline",
            "4",
            "-n",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("--redirects"), "{}", run.stderr());
}
