//! A scenario step's own settings (its step keys), end to end
//! against the built-in target on io_uring, epoll and tokio: `once` (only
//! in a user's first iteration), `think` (the pause before that step),
//! `timeout` (the step's response timeout over `--timeout`), `keep_alive =
//! false` (the connection closes after that step: the server counts the
//! connections) and `follow_redirects` (per step, over `--redirects`).

use stampede_testkit::workload as workload_support;

use stampede_testkit::{event_loop_or_skip, one_thread, run_ok_on_loop, spawn_target, EVENT_LOOPS};
use workload_support::*;

/// A one-group scenario: `keys` (load, limits) and steps (name, path, keys).
fn scenario(base: &str, keys: &str, steps: &[(&str, &str, &str)]) -> String {
    let mut text = format!("[[group]]\nname = \"g\"\n{keys}\n\n");
    for (name, path, extra) in steps {
        text.push_str(&format!(
            "[[group.step]]\nname = \"{name}\"\nurl = \"{base}{path}\"\n{extra}\n\n"
        ));
    }
    text
}

#[test]
fn a_once_step_runs_in_each_users_first_iteration_only() {
    for io in EVENT_LOOPS {
        let dir = temp_dir("steps-once");
        let target = LoggedTarget::start(&dir);
        let text = scenario(
            &target.url(""),
            "connections = 2\niterations = 3",
            &[("login", "/?login", "once = true"), ("home", "/?home", "")],
        );
        let file = write(&dir, "once.toml", &text);
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file]) else {
            continue;
        };
        assert_eq!(
            run.count("/requests/sent"),
            8,
            "{io}: 2 logins + 2 × 3 homes"
        );
        let paths = target.stop_and_paths();
        let count = |p: &str| paths.iter().filter(|x| *x == p).count();
        assert_eq!(
            (count("/?login"), count("/?home")),
            (2, 6),
            "{io}: {paths:?}"
        );
    }
}

/// The `t_s` of the `--log-requests` lines of the target ending in `suffix`.
fn times(log: &std::path::Path, suffix: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(log).expect("the request log");
    let mut times: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.split(' ').nth(5).is_some_and(|t| t.ends_with(suffix)))
        .map(|l| {
            l.split(' ')
                .next()
                .and_then(|t| t.parse().ok())
                .expect("t_s")
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

#[test]
fn a_steps_think_is_the_pause_before_it() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("steps-think");
        let text = scenario(
            &base,
            "connections = 1\niterations = 2",
            &[("a", "/?a", ""), ("b", "/?b", "think = \"300ms\"")],
        );
        let file = write(&dir, "think.toml", &text);
        let log = dir.join("requests.log");
        let log_arg = log.display().to_string();
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file, "--log-requests", &log_arg])
        else {
            continue;
        };
        assert_eq!(run.count("/requests/sent"), 4, "{io}");
        let (a, b) = (times(&log, "?a"), times(&log, "?b"));
        assert_eq!((a.len(), b.len()), (2, 2), "{io}");
        for i in 0..2 {
            assert!(b[i] - a[i] >= 0.3, "{io}: a at {a:?}, b at {b:?}");
        }
        assert!(a[1] - b[0] < 0.25, "{io}: no pause before a: {a:?} {b:?}");
        drop(target);
    }
}

#[test]
fn a_steps_timeout_is_its_own() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("steps-timeout");
        let text = scenario(
            &base,
            "connections = 1\niterations = 2",
            &[
                ("impatient", "/delay/1500", "timeout = \"200ms\""),
                ("patient", "/delay/300", ""),
            ],
        );
        let file = write(&dir, "timeout.toml", &text);
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file, "--timeout", "5s"]) else {
            continue;
        };
        assert_eq!(
            run.count("/errors/timeout"),
            2,
            "{io}: {}",
            run.result()["errors"]
        );
        assert_eq!(
            run.count("/requests/success"),
            2,
            "{io}: the 300 ms step is in time"
        );
        drop(target);
    }
}

#[test]
fn keep_alive_false_closes_the_connection_after_that_step() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("steps-keepalive");
        let text = scenario(
            &base,
            "connections = 1\niterations = 4",
            &[
                ("bye", "/?bye", "keep_alive = false"),
                ("stay", "/?stay", ""),
            ],
        );
        let file = write(&dir, "keepalive.toml", &text);
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file]) else {
            continue;
        };
        assert_eq!(run.count("/requests/success"), 8, "{io}");
        // The first connection, then one per iteration after each close.
        assert_eq!(run.count("/connections/opened"), 5, "{io}");
        assert_eq!(
            run.count("/connections/reconnects"),
            0,
            "{io}: planned closes"
        );
        let stats = target.shutdown().expect("target stats");
        assert_eq!(stats.connections_accepted, 5, "{io}");
        assert_eq!(stats.requests_total, 8, "{io}");
    }
}

#[test]
fn follow_redirects_is_per_step_over_the_runs_redirects() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("steps-redirects");
        let text = scenario(
            &base,
            "connections = 1\niterations = 2",
            &[
                ("follows", "/redirect/2", "follow_redirects = true"),
                ("plain", "/redirect/2", ""),
            ],
        );
        let file = write(&dir, "follow.toml", &text);
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file]) else {
            continue;
        };
        assert_eq!(run.count("/status/200"), 2, "{io}: the followed chains");
        assert_eq!(run.count("/status/302"), 2, "{io}: without --redirects");
        assert_eq!(run.count("/redirects/followed"), 4, "{io}");
        let stats = target.shutdown().expect("target stats");
        assert_eq!(stats.requests_total, 8, "{io}: 2 × (3 + 1)");

        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let text = scenario(
            &base,
            "connections = 1\niterations = 2",
            &[
                ("stays", "/redirect/2", "follow_redirects = false"),
                ("follows", "/redirect/2", ""),
            ],
        );
        let file = write(&dir, "nofollow.toml", &text);
        let run =
            run_ok_on_loop(io, &["--scenario", &file, "--redirects", "5"]).expect("ran above");
        assert_eq!(run.count("/status/302"), 2, "{io}: the step that stays");
        assert_eq!(
            run.count("/status/200"),
            2,
            "{io}: --redirects for the other"
        );
        drop(target);
    }
}

#[test]
fn once_in_the_open_model_is_refused_in_one_line() {
    let dir = temp_dir("steps-refused");
    let text = scenario(
        "http://127.0.0.1:9",
        "rate = 5",
        &[("login", "/", "once = true")],
    );
    let file = write(&dir, "open.toml", &text);
    let run = run_stampede(binary(), &["--scenario", &file]);
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    let stderr = run.stderr();
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("step login: once needs connections"),
        "{stderr}"
    );
}

#[test]
fn steps_sharing_a_transaction_are_counted_together_too() {
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let dir = temp_dir("steps-transaction");
    let text = scenario(
        &base,
        "connections = 2\niterations = 3",
        &[
            ("cart", "/?cart", "transaction = \"buy\""),
            ("browse", "/?browse", ""),
            ("pay", "/status/503", "transaction = \"buy\""),
        ],
    );
    let file = write(&dir, "transaction.toml", &text);
    let run = run_stampede(binary(), &["--scenario", &file]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(!run.stderr().contains("not acted on"), "{}", run.stderr());
    let groups = run.result()["groups"].as_array().expect("groups[]").clone();
    assert_eq!(groups.len(), 1, "one group: only the transaction's row");
    let buy = &groups[0];
    assert_eq!(
        (buy["name"].as_str(), buy["load"].as_str()),
        (Some("buy"), Some("transaction"))
    );
    assert_eq!(buy["steps"], serde_json::json!(["cart", "pay"]));
    assert_eq!(buy["finished"], 12, "2 users × 3 × 2 steps");
    assert_eq!(
        (buy["success"].as_u64(), buy["failed_status"].as_u64()),
        (Some(6), Some(6))
    );
    drop(target);
}

/// A loopback listener that never accepts, its accept queue full: the
/// kernel drops a further SYN, so a connect to it can only end by its
/// connect timeout. Keep the returned parts alive while it is used.
fn silent_listener() -> (socket2::Socket, Vec<std::net::TcpStream>, u16) {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a socket");
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().expect("an address");
    socket.bind(&any.into()).expect("bind");
    socket.listen(0).expect("listen");
    let addr = socket
        .local_addr()
        .expect("bound")
        .as_socket()
        .expect("inet");
    let fillers = (0..4)
        .filter_map(|_| {
            std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200)).ok()
        })
        .collect();
    (socket, fillers, addr.port())
}

#[test]
fn a_steps_connect_timeout_is_its_own() {
    let (_listener, _fillers, port) = silent_listener();
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let dir = temp_dir("steps-connect-timeout");
        let text = scenario(
            &format!("http://127.0.0.1:{port}"),
            "connections = 1\niterations = 1",
            &[("silent", "/", "connect_timeout = \"200ms\"")],
        );
        let file = write(&dir, "connect.toml", &text);
        let started = std::time::Instant::now();
        let args = [
            "--scenario",
            &file,
            "--connect-timeout",
            "20s",
            "-d",
            "60s",
            "--io",
            io,
        ];
        let run = run_stampede(binary(), &args);
        let stderr = run.stderr();
        // No connection ever opened: the run says so, and exits 2.
        assert_eq!(run.code(), Some(2), "{io}: {stderr}");
        let said = "no connection could be opened: 1 connect_timeout";
        assert!(stderr.contains(said), "{io}: {stderr}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{io}: the step's 200 ms, not --connect-timeout 20s"
        );
    }
}
