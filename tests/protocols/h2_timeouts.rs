//! HTTP/2 request timeouts: each stream keeps one timer and moves its deadline
//! forward for every request, so a stream that runs for longer than
//! `--timeout` must see no spurious timeout, and a response that takes longer
//! than `--timeout` must be a `timeout` error however many came before it.

use stampede_testkit::{run_stampede, spawn_target, Run, TargetConfig};
use std::path::Path;

/// One h2c connection with two streams against the built-in target's `path`,
/// plus `extra` arguments.
fn run_h2c(path: &str, extra: &[&str]) -> Run {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}{path}", target.local_addr());
    let mut args = vec![
        url.as_str(),
        "--http2",
        "-c",
        "1",
        "--streams",
        "2",
        "-t",
        "1",
    ];
    args.extend_from_slice(extra);
    run_stampede(Path::new(env!("CARGO_BIN_EXE_stampede")), &args)
}

#[test]
fn a_stream_busy_for_longer_than_the_timeout_sees_no_timeout() {
    // Every response is fast; the run lasts several timeouts long, so a timer
    // left at its first deadline would fire during a later request.
    let run = run_h2c("/index.html", &["-d", "1500ms", "--timeout", "300ms"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.count("/requests/success") > 10, "{}", run.result());
    let errors = run.count("/requests/errors");
    assert_eq!(errors, 0, "{}", run.result()["errors"]);
}

#[test]
fn a_response_slower_than_the_timeout_is_a_timeout_every_time() {
    // Two streams, two requests each: the second request of a stream starts
    // after its timer has fired once and must time out again.
    let run = run_h2c("/delay/2000", &["-n", "4", "--timeout", "200ms"]);
    assert_eq!(
        run.count("/errors/timeout"),
        4,
        "{}",
        run.result()["errors"]
    );
    assert_eq!(run.count("/requests/success"), 0, "{}", run.result());
}
