//! HTTP/2 request timeouts: each stream keeps one timer and moves its deadline
//! forward for every request (issue 17), so a stream that runs for longer than
//! `--timeout` must see no spurious timeout, and a response that takes longer
//! than `--timeout` must be a `timeout` error however many came before it.

use stampede_testkit::{run_stampede, spawn_target, TargetConfig};
use std::path::Path;

fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_stampede"))
}

fn h2c_target() -> stampede_testkit::ServerHandle {
    spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    })
}

#[test]
fn a_stream_busy_for_longer_than_the_timeout_sees_no_timeout() {
    let target = h2c_target();
    let url = format!("http://{}/index.html", target.local_addr());
    // Every response is fast; the run lasts several timeouts long, so a timer
    // left at its first deadline would fire during a later request.
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "-c",
            "1",
            "--streams",
            "2",
            "-t",
            "1",
            "-d",
            "1500ms",
            "--timeout",
            "300ms",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.count("/requests/success") > 10, "{}", run.result());
    assert_eq!(
        run.count("/requests/errors"),
        0,
        "{}",
        run.result()["errors"]
    );
}

#[test]
fn a_response_slower_than_the_timeout_is_a_timeout_every_time() {
    let target = h2c_target();
    let url = format!("http://{}/delay/2000", target.local_addr());
    // Two streams, two requests each: the second request of a stream starts
    // after its timer has fired once and must time out again.
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "-c",
            "1",
            "--streams",
            "2",
            "-t",
            "1",
            "-n",
            "4",
            "--timeout",
            "200ms",
        ],
    );
    assert_eq!(
        run.count("/errors/timeout"),
        4,
        "{}",
        run.result()["errors"]
    );
    assert_eq!(run.count("/requests/success"), 0, "{}", run.result());
}
