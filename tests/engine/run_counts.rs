//! `stampede run` end to end against the built-in target: exact `-n`, the
//! accounting invariant, keep-alive versus new connections, body framings,
//! and the result file (schema, histogram round trip).

use stampede_metrics::RunResult;
use stampede_testkit::{
    binary, event_loop_or_skip, one_thread, read_request_head, run_stampede, spawn_target,
    RawServer, EVENT_LOOPS,
};
use std::io::Write;
use std::time::Duration;

#[test]
fn requests_flag_sends_exactly_n_and_the_server_agrees() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/index.html", target.local_addr());
    let run = run_stampede(binary(), &[&url, "-n", "12345", "-c", "37", "-t", "2"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), 12345);
    assert_eq!(run.count("/requests/success"), 12345);
    assert_eq!(run.count("/status/200"), 12345);
    run.assert_accounted("");
    let stats = target.shutdown().unwrap();
    assert_eq!(
        stats.requests_total, 12345,
        "the server counted the same requests"
    );
    assert_eq!(run.count("/connections/opened"), 37);
}

#[test]
fn no_keepalive_opens_a_connection_per_request() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let keepalive = run_stampede(binary(), &[&url, "-n", "400", "-c", "4", "-t", "1"]);
    assert_eq!(keepalive.count("/connections/opened"), 4);
    let short = run_stampede(
        binary(),
        &[&url, "-n", "400", "-c", "4", "-t", "1", "--no-keepalive"],
    );
    assert_eq!(short.code(), Some(0), "{}", short.stderr());
    assert_eq!(short.count("/connections/opened"), 400);
    assert_eq!(short.count("/requests/success"), 400);
    assert_eq!(
        short.count("/connections/reconnects"),
        0,
        "planned closes are not reconnects"
    );
    let stats = target.shutdown().unwrap();
    assert_eq!(stats.connections_accepted, 404);
}

#[test]
fn counts_chunked_bodies_exactly() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/chunked/5000", target.local_addr());
    let run = run_stampede(binary(), &[&url, "-n", "200", "-c", "2", "-t", "1"]);
    assert_eq!(run.count("/requests/success"), 200, "{}", run.stderr());
    assert_eq!(run.count("/bytes/body"), 200 * 5000);
}

#[test]
fn duration_runs_account_for_every_request() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/index.html", target.local_addr());
    let run = run_stampede(binary(), &[&url, "-d", "1s", "-c", "20", "-t", "2"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.assert_accounted("");
    let elapsed = run.result()["elapsed_s"].as_f64().unwrap();
    assert!((0.95..1.5).contains(&elapsed), "elapsed {elapsed}");
    assert_eq!(
        run.count("/bytes/body"),
        515 * run.count("/requests/success")
    );
    // Every request stampede sent reached the server (unfinished ones too).
    let stats = target.shutdown().unwrap();
    let sent = run.count("/requests/sent");
    assert!(
        stats.requests_total >= run.count("/requests/completed") && stats.requests_total <= sent,
        "server {} vs client sent {sent}",
        stats.requests_total
    );
}

#[test]
fn result_file_is_self_describing_and_its_histogram_decodes() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/status/404", target.local_addr());
    let run = run_stampede(binary(), &[&url, "-n", "300", "-c", "3", "-t", "1"]);
    let json = run.result();
    assert_eq!(json["schema"], "stampede.result/1");
    assert_eq!(json["plan"]["requests"], 300);
    assert_eq!(json["plan"]["connections"], 3);
    assert!(json["environment"]["cpus"].as_u64().unwrap() >= 1);
    assert!(json["started_at"].as_str().unwrap().contains('T'));
    assert_eq!(run.count("/requests/failed_status"), 300);
    assert_eq!(run.count("/status/404"), 300);
    let parsed = RunResult::from_json(&json.to_string()).expect("reads back");
    let histogram = parsed.latency_histogram().expect("histogram decodes");
    assert_eq!(
        histogram.len(),
        300,
        "one latency sample per completed response"
    );
    assert_eq!(histogram.max(), parsed.latency_us.max);
}

#[test]
fn post_body_and_headers_reach_the_server() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/echo", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "5",
            "-c",
            "1",
            "-m",
            "POST",
            "-H",
            "X-A: 1",
            "-b",
            "{\"k\":1}",
            "-T",
            "application/json",
            // /echo answers with the request's head and body: the header
            // and the content type in the head, the body after the blank line
            // and nothing after it (a byte count cannot tell: the head alone
            // is longer than the body).
            "--check",
            "body ~ (?i)\\r\\nx-a: 1\\r\\n",
            "--check",
            "body ~ (?i)\\r\\ncontent-type: application/json\\r\\n",
            "--check",
            "body ~ \\r\\n\\r\\n\\{\"k\":1\\}$",
        ],
    );
    assert_eq!(run.count("/requests/success"), 5, "{}", run.stderr());
    assert_eq!(run.count("/requests/check_failed"), 0, "{}", run.result());
    for check in 0..3 {
        assert_eq!(
            run.result()["checks"][check]["passed"],
            5,
            "{}",
            run.result()
        );
    }
}

#[test]
fn every_event_loop_counts_exactly_and_says_which_ran() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/index.html", target.local_addr());
    let mut runs = 0;
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        for keepalive in [true, false] {
            let mut args = vec![url.as_str(), "-n", "3001", "-c", "7", "-t", "2", "--io", io];
            if !keepalive {
                args.push("--no-keepalive");
            }
            let run = run_stampede(binary(), &args);
            assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
            assert_eq!(run.count("/requests/success"), 3001, "--io {io}");
            let opened = if keepalive { 7 } else { 3001 };
            assert_eq!(run.count("/connections/opened"), opened, "--io {io}");
            run.assert_accounted("");
            assert_eq!(run.result()["plan"]["io"], io);
            runs += 1;
        }
    }
    let stats = target.shutdown().unwrap();
    assert_eq!(stats.requests_total, runs * 3001);
}

#[test]
fn auto_falls_back_to_tokio_where_the_reactor_cannot_drive() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    // h2c with fixed requests runs on epoll (the stampede-h2 codec); with
    // a connection lifetime, which epoll does not drive over HTTP/2, on tokio.
    let h2c = run_stampede(
        binary(),
        &[&url, "-n", "20", "-c", "2", "--http2", "--io", "auto"],
    );
    assert_eq!(h2c.code(), Some(0), "{}", h2c.stderr());
    assert_eq!(h2c.result()["plan"]["io"], "epoll");
    let retired = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "20",
            "-c",
            "2",
            "--http2",
            "--conn-max-requests",
            "5",
            "--io",
            "auto",
        ],
    );
    assert_eq!(retired.code(), Some(0), "{}", retired.stderr());
    assert_eq!(retired.result()["plan"]["io"], "tokio");
    assert_eq!(retired.count("/requests/success"), 20);
    // The open model runs on a reactor (tests/engine/open_model_reactors.rs).
    let paced = run_stampede(
        binary(),
        &[&url, "-r", "200", "-d", "300ms", "-c", "4", "--io", "auto"],
    );
    assert_eq!(paced.code(), Some(0), "{}", paced.stderr());
    assert_ne!(paced.result()["plan"]["io"], "tokio");
    // epoll drives h2c (tests/protocols/h2_reactor.rs), not yet redirects.
    let refused = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "5",
            "--redirects",
            "2",
            "--http2",
            "--io",
            "epoll",
        ],
    );
    assert_eq!(refused.code(), Some(2));
    assert!(
        refused.stderr().contains("--io epoll") && refused.stderr().lines().count() == 1,
        "{}",
        refused.stderr()
    );
    // io_uring drives h2c too, not yet a connection lifetime.
    let refused = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "5",
            "--conn-max-requests",
            "2",
            "--http2",
            "--io",
            "uring",
        ],
    );
    assert_eq!(refused.code(), Some(2));
    assert!(
        refused
            .stderr()
            .contains("--io uring drives HTTP/1.1 (plain, TLS or a Unix socket)")
            && refused
                .stderr()
                .contains("HTTP/2 with a connection lifetime"),
        "{}",
        refused.stderr()
    );
}

#[test]
fn large_request_bodies_go_out_whole_on_every_event_loop() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/echo", target.local_addr());
    let dir = stampede_testkit::temp_dir("large-body");
    let fits = dir.join("fits.bin");
    let too_large = dir.join("too-large.bin");
    // Larger than a socket buffer (the send goes out in pieces) but under the
    // target's 1 MiB limit; and one over the limit, answered 413 early.
    std::fs::write(&fits, vec![b'x'; 300_000]).unwrap();
    std::fs::write(&too_large, vec![b'y'; 2_500_000]).unwrap();
    let fits_arg = fits.display().to_string();
    let too_large_arg = too_large.display().to_string();
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let args = [
            &url, "-n", "12", "-c", "3", "-m", "POST", "-D", &fits_arg, "--io", io,
        ];
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        assert_eq!(run.count("/requests/success"), 12, "--io {io}");
        assert!(
            run.count("/bytes/body") >= 12 * 300_000,
            "--io {io}: the echo holds the body"
        );
        let args = [
            &url,
            "-n",
            "6",
            "-c",
            "2",
            "-m",
            "POST",
            "-D",
            &too_large_arg,
            "--io",
            io,
            "--timeout",
            "5s",
        ];
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        run.assert_accounted("");
        assert_eq!(
            run.count("/requests/failed_status"),
            6,
            "--io {io}: every request answered 413: {}",
            run.result()["requests"]
        );
    }
}

/// A server that answers 413 as soon as it has the head, then closes without
/// reading the body, so that its kernel resets the connection while the
/// client is still writing: the answer that came first is the response
/// (RFC 9112 §9.3: a client sending a body watches for an early answer; Linux
/// keeps data queued before a reset readable). Before, the reset turned the
/// 413 into a transport error on epoll and io_uring, as often as the reset
/// overtook the client's next read.
#[test]
fn an_early_answer_survives_the_reset_of_an_unread_body() {
    let server = RawServer::start(|mut stream| {
        if read_request_head(&mut stream) {
            let _ = stream.write_all(
                b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            // Let the answer reach the client before the reset does.
            std::thread::sleep(Duration::from_millis(50));
        }
        // Dropped with the body unread: the close is a reset.
    });
    let dir = stampede_testkit::temp_dir("early-answer");
    let body = dir.join("body.bin");
    std::fs::write(&body, vec![b'z'; 8_000_000]).unwrap();
    let body_arg = body.display().to_string();
    let url = server.url("/upload");
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let args = [
            &url,
            "-n",
            "4",
            "-c",
            "1",
            "-t",
            "1",
            "-m",
            "POST",
            "-D",
            &body_arg,
            "--io",
            io,
            "--timeout",
            "5s",
        ];
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        run.assert_accounted("");
        assert_eq!(
            run.count("/requests/failed_status"),
            4,
            "--io {io}: each 413 counts, none is a reset: {}",
            run.result()["requests"]
        );
    }
}
