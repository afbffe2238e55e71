//! `--sse`: one request is one stream, watched on every HTTP/1.1
//! event loop (epoll, io_uring, tokio) against the built-in target's
//! `/sse/{n}/{ms}` and `/stream/{n}/{ms}`. The event counts are exact,
//! the median gap is the route's interval, one stall shows in the gap
//! maximum, `--sse-for` ends a stream as a success, and a plain run has no
//! `stream` in its result. HTTP/2's streams: sse_h2.rs.

use stampede_testkit::{
    event_loop_or_skip, one_thread, run_on_loop, spawn_target, Run, EVENT_LOOPS,
};

/// `--sse` run on event loop `io` with one thread; `None` when io_uring
/// is not available here.
fn sse_run(io: &str, url: &str, extra: &[&str]) -> Option<Run> {
    let mut args = vec![url, "--sse", "-t", "1"];
    args.extend_from_slice(extra);
    run_on_loop(io, &args)
}

fn gap(run: &Run, figure: &str) -> u64 {
    run.count(&format!("/stream/gap/{figure}"))
}

#[test]
fn events_are_counted_exactly_and_the_median_gap_is_the_interval_on_every_loop() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/sse/20/50", target.local_addr());
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = sse_run(io, &url, &["-n", "4", "-c", "2"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.code(), Some(0), "{at}");
        assert_eq!(run.count("/requests/success"), 4, "{at}");
        assert_eq!(run.count("/stream/streams"), 4, "{at}");
        assert_eq!(run.count("/stream/events"), 4 * 20, "{at}");
        assert_eq!(gap(&run, "count"), 4 * 19, "{at}");
        assert_eq!(run.count("/stream/first_event/count"), 4, "{at}");
        // 50 ms apart, within 5 ms on a loaded 2-core machine.
        let p50 = gap(&run, "p50_us");
        assert!(p50.abs_diff(50_000) <= 5_000, "{at}: p50 {p50} µs");
        // The first event leaves with the head, at once.
        let first = run.count("/stream/first_event/p50_us");
        assert!(first < 40_000, "{at}: first event after {first} µs");
        // A stream lasts its 19 gaps.
        let length = run.count("/stream/length/p50_us");
        assert!(length >= 19 * 50_000 - 5_000, "{at}: length {length} µs");
    }
}

#[test]
fn one_stall_of_a_second_is_the_gap_maximum() {
    let target = spawn_target(one_thread());
    let url = format!(
        "http://{}/sse/10/20?stall_at=5&stall_ms=1000",
        target.local_addr()
    );
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = sse_run(io, &url, &["-n", "1", "-c", "1"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.code(), Some(0), "{at}");
        assert_eq!(run.count("/stream/events"), 10, "{at}");
        let max = gap(&run, "max_us");
        assert!((1_000_000..1_500_000).contains(&max), "{at}: max {max} µs");
        let p50 = gap(&run, "p50_us");
        assert!(p50 < 100_000, "{at}: p50 {p50} µs");
    }
}

#[test]
fn a_chunked_stream_counts_each_chunk_as_an_event() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/stream/6/10", target.local_addr());
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = sse_run(io, &url, &["-n", "3", "-c", "1"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.code(), Some(0), "{at}");
        assert_eq!(run.count("/stream/events"), 3 * 6, "{at}");
        assert_eq!(gap(&run, "count"), 3 * 5, "{at}");
    }
}

#[test]
fn sse_for_ends_a_long_stream_as_a_success() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/sse/1000/50", target.local_addr());
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = sse_run(io, &url, &["-n", "2", "-c", "2", "--sse-for", "500ms"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.code(), Some(0), "{at}");
        assert_eq!(run.count("/requests/success"), 2, "{at}");
        assert_eq!(run.count("/requests/errors"), 0, "{at}");
        // About 500 ms of events 50 ms apart, each stream.
        let events = run.count("/stream/events");
        assert!((2 * 8..=2 * 12).contains(&events), "{at}: {events} events");
    }
}

#[test]
fn a_plain_run_has_no_stream_and_sse_for_needs_sse() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/sse/3/1", target.local_addr());
    let plain = run_on_loop("tokio", &[&url, "-n", "2", "-c", "1"]).expect("tokio is here");
    assert_eq!(plain.code(), Some(0), "{}", plain.stderr());
    assert!(plain.result().get("stream").is_none());
    let h2 = run_on_loop("tokio", &[&url, "--http2", "-n", "2"]).expect("tokio is here");
    assert_eq!(h2.code(), Some(0), "{}", h2.stderr());
    assert!(h2.result().get("stream").is_none(), "nor over HTTP/2");
    let lone = run_on_loop("auto", &[&url, "--sse-for", "1s", "-n", "1"]).expect("auto is here");
    assert_eq!(lone.code(), Some(2), "{}", lone.stderr());
}

/// A healthy stream longer than `--timeout` is a timeout whose sample says
/// so and names `--sse-for`; one still open when `-d` ends is named in a
/// warning, since a stream is counted at its end.
#[test]
fn a_stream_longer_than_its_time_says_which_time_ran_out() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/sse/300/10", target.local_addr());
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = sse_run(io, &url, &["-n", "1", "-c", "1", "--timeout", "500ms"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.count("/errors/timeout"), 1, "{at}");
        let sample = run.result()["error_samples"]["timeout"][0].to_string();
        assert!(
            sample.contains("still open after --timeout 500ms"),
            "{at}: {sample}"
        );
        assert!(sample.contains("--sse-for"), "{at}: {sample}");
        let Some(cut) = sse_run(io, &url, &["-d", "500ms", "-c", "2"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", cut.stderr());
        assert_eq!(cut.count("/requests/unfinished"), 2, "{at}");
        let warned = cut.result()["warnings"].to_string();
        assert!(
            warned.contains("2 streams were still open when the run ended"),
            "{at}: {warned}"
        );
    }
}
