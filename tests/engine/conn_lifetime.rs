//! `--conn-max-requests N` and `--conn-max-age DUR` against the
//! built-in target, whose `/stats` counts the connections it accepted: on
//! every path (io_uring, epoll, tokio, HTTP/2, the open model) a connection
//! is retired after N responses or once it is DUR old, its successor is a
//! planned reconnect (neither an error nor an idle-close reconnect), and
//! `-n` stays exact. nginx's own count of connections is
//! tests/engine/conn_lifetime_nginx.rs.

use stampede_testkit::{one_thread, run_ok, spawn_target, stampede, text, Run};

/// The HTTP/1.1 event loops (`auto` is io_uring where the kernel offers it).
const EVENT_LOOPS: [&str; 3] = ["auto", "epoll", "tokio"];

/// What every retiring run shows: no error of any class, no idle-close
/// reconnect, and every connection after each slot's first is a planned one.
fn assert_planned(run: &Run, slots: u64, what: &str) {
    assert_eq!(run.count("/requests/errors"), 0, "{what}: {}", run.result());
    assert_eq!(run.count("/connections/reconnects"), 0, "{what}");
    let opened = run.count("/connections/opened");
    assert_eq!(
        run.count("/connections/planned_reconnects"),
        opened - slots,
        "{what}: {}",
        run.result()["connections"]
    );
}

#[test]
fn every_nth_response_ends_a_connection_on_every_event_loop() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for io in EVENT_LOOPS {
        let what = format!("--io {io}");
        let before = target.stats().connections_accepted;
        let run = run_ok(&[
            &url,
            "--io",
            io,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "100",
            "--conn-max-requests",
            "10",
        ]);
        assert_eq!(run.count("/requests/sent"), 100, "{what}");
        assert_eq!(run.count("/requests/success"), 100, "{what}");
        assert_eq!(run.count("/connections/opened"), 10, "{what}");
        assert_planned(&run, 1, &what);
        // The server saw exactly the ten connections.
        let accepted = target.stats().connections_accepted - before;
        assert_eq!(accepted, 10, "{what}");
    }
}

#[test]
fn several_connections_each_retire_after_n() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for io in EVENT_LOOPS {
        let what = format!("--io {io}");
        let before = target.stats().connections_accepted;
        let run = run_ok(&[
            &url,
            "--io",
            io,
            "-t",
            "2",
            "-c",
            "4",
            "-n",
            "203",
            "--conn-max-requests",
            "7",
        ]);
        assert_eq!(run.count("/requests/sent"), 203, "{what}: -n stays exact");
        assert_eq!(run.count("/requests/success"), 203, "{what}");
        // Each slot needs ceil(its requests / 7) connections: at least
        // ceil(203 / 7) = 29 in all, at most one more per slot.
        let accepted = target.stats().connections_accepted - before;
        assert!((29..=33).contains(&accepted), "{what}: {accepted}");
        assert_eq!(run.count("/connections/opened"), accepted, "{what}");
        assert_planned(&run, 4, &what);
    }
}

#[test]
fn without_the_flags_one_connection_carries_everything() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for io in EVENT_LOOPS {
        let before = target.stats().connections_accepted;
        let run = run_ok(&[&url, "--io", io, "-t", "1", "-c", "1", "-n", "50"]);
        assert_eq!(target.stats().connections_accepted - before, 1, "--io {io}");
        assert!(
            run.result()["connections"]
                .get("planned_reconnects")
                .is_none(),
            "--io {io}: the key is written only when a connection was retired"
        );
    }
}

#[test]
fn connections_retire_by_age() {
    let target = spawn_target(one_thread());
    // Each response takes about 20 ms, so a 150 ms lifetime ends after
    // about eight of them; the bounds leave room for a slow machine.
    let url = format!("http://{}/delay/20", target.local_addr());
    for io in EVENT_LOOPS {
        let what = format!("--io {io}");
        let run = run_ok(&[
            &url,
            "--io",
            io,
            "-t",
            "1",
            "-c",
            "1",
            "-d",
            "1500ms",
            "--conn-max-age",
            "150ms",
        ]);
        let opened = run.count("/connections/opened");
        assert!((4..=20).contains(&opened), "{what}: {opened} connections");
        assert_planned(&run, 1, &what);
        let completed = run.count("/requests/completed");
        // Retired by age, not after every response.
        assert!(
            completed > opened,
            "{what}: {completed} responses on {opened} connections"
        );
    }
}

#[test]
fn the_open_model_retires_connections_too() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for io in EVENT_LOOPS {
        let what = format!("--io {io} -r");
        let before = target.stats().connections_accepted;
        let run = run_ok(&[
            &url,
            "--io",
            io,
            "-t",
            "1",
            "-r",
            "200",
            "-n",
            "120",
            "-c",
            "8",
            "--conn-max-requests",
            "6",
        ]);
        assert_eq!(run.count("/requests/sent"), 120, "{what}");
        assert_eq!(run.count("/requests/success"), 120, "{what}");
        let accepted = target.stats().connections_accepted - before;
        assert!((20..=28).contains(&accepted), "{what}: {accepted}");
        assert_eq!(run.count("/requests/errors"), 0, "{what}");
        assert_eq!(run.count("/connections/reconnects"), 0, "{what}");
        assert!(run.count("/connections/planned_reconnects") >= 12, "{what}");
    }
}

#[test]
fn http2_stops_opening_streams_and_reconnects() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let before = target.stats();
    let run = run_ok(&[
        &url,
        "--http2",
        "--streams",
        "4",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "120",
        "--conn-max-requests",
        "12",
    ]);
    let after = target.stats();
    assert_eq!(run.count("/requests/sent"), 120);
    assert_eq!(run.count("/requests/success"), 120);
    // Exactly twelve streams per connection: ten connections.
    assert_eq!(after.h2_connections - before.h2_connections, 10);
    assert_eq!(after.h2_streams_total - before.h2_streams_total, 120);
    assert_planned(&run, 1, "--http2");

    // The open model's streams ask the same lifetime: twelve a connection.
    let before = target.stats();
    let run = run_ok(&[
        &url,
        "--http2",
        "--streams",
        "4",
        "-t",
        "1",
        "-c",
        "1",
        "-r",
        "400",
        "-n",
        "120",
        "--conn-max-requests",
        "12",
    ]);
    let after = target.stats();
    assert_eq!(run.count("/requests/success"), 120, "--http2 -r");
    assert_eq!(after.h2_connections - before.h2_connections, 10, "-r");
    assert_eq!(after.h2_streams_total - before.h2_streams_total, 120);
    assert_planned(&run, 1, "--http2 -r");
}

#[test]
fn the_summary_names_planned_reconnects() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let out = stampede(&[
        "run",
        &url,
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "20",
        "--conn-max-requests",
        "5",
        "--quiet",
    ]);
    let summary = text(&out.stdout);
    assert!(
        summary.contains("3 planned (connection lifetime)"),
        "{summary}"
    );
}

#[test]
fn bad_lifetimes_are_one_line_and_exit_2() {
    for (args, needle) in [
        (
            &["--conn-max-requests", "0"][..],
            "requests per connection must be at least 1 (--conn-max-requests)",
        ),
        (
            &["--conn-max-age", "0s"][..],
            "connection age must be above zero (--conn-max-age)",
        ),
        (
            &["--conn-max-age", "soon"][..],
            "--conn-max-age: invalid duration 'soon'",
        ),
    ] {
        let mut all = vec!["run", "http://127.0.0.1:9/", "-n", "1"];
        all.extend(args);
        let out = stampede(&all);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}
