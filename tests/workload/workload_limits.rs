//! A scenario group's own bounds and order (its group keys), end to
//! end against the built-in target, on io_uring, epoll and tokio:
//! `iterations` (each user walks its steps N times, then the run ends by
//! itself: the server counts exactly users × iterations × steps),
//! `duration` and `start_delay` (the group's own clock), `phase` (setup
//! before main before teardown, as the target's access log orders them),
//! `on_error` (what a failed step does: carry on, next iteration, stop the
//! user, stop the run) and the combinations refused with one line.

use stampede_testkit::workload as workload_support;

use stampede_testkit::{one_thread, run_ok_on_loop, spawn_target, EVENT_LOOPS};
use workload_support::*;

/// A step of `url` named `name`, with `extra` step keys.
fn step(name: &str, url: &str, extra: &str) -> String {
    format!("[[group.step]]\nname = \"{name}\"\nurl = \"{url}\"\n{extra}\n")
}

/// A group named `name` with its `keys` (load and limits) and `steps`.
fn group(name: &str, keys: &str, steps: &[String]) -> String {
    format!(
        "[[group]]\nname = \"{name}\"\n{keys}\n\n{}\n",
        steps.concat()
    )
}

fn stop_reason(run: &Run) -> &str {
    run.result()["stop_reason"].as_str().unwrap_or("")
}

#[test]
fn iterations_walk_each_users_steps_exactly_n_times_then_the_run_ends() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("limits-iterations");
        let file = write(
            &dir,
            "iter.toml",
            &group(
                "browse",
                "connections = 5\niterations = 3",
                &[
                    step("home", &format!("{base}/?i={{{{iter}}}}"), ""),
                    step("json", &format!("{base}/json"), ""),
                ],
            ),
        );
        // No -d and no -n: the run lasts as long as the iterations.
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file, "-t", "2"]) else {
            continue;
        };
        assert_eq!(
            run.count("/requests/sent"),
            30,
            "{io}: 3 × 5 users × 2 steps"
        );
        assert_eq!(run.count("/requests/success"), 30, "{io}");
        assert_eq!(stop_reason(&run), "groups_done", "{io}");
        let stats = target.shutdown().expect("target stats");
        assert_eq!(
            stats.requests_total, 30,
            "{io}: the server served exactly 30"
        );
    }
}

#[test]
fn a_group_duration_ends_the_group_and_a_rate_sends_exactly_its_instants() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("limits-duration");
        let file = write(
            &dir,
            "duration.toml",
            &group(
                "paced",
                "rate = 4\nduration = \"1s\"",
                &[step("home", &format!("{base}/"), "")],
            ),
        );
        let started = std::time::Instant::now();
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file, "-d", "30s"]) else {
            continue;
        };
        assert!(
            started.elapsed() < std::time::Duration::from_secs(15),
            "{io}: the group's 1 s ended the run long before -d 30s"
        );
        // Instants at 0, 250, 500 and 750 ms: the last is well inside the 1 s.
        assert_eq!(run.count("/requests/sent"), 4, "{io}: 4/s for 1 s");
        assert_eq!(stop_reason(&run), "groups_done", "{io}");
        let stats = target.shutdown().expect("target stats");
        assert_eq!(stats.requests_total, 4, "{io}");
    }
}

/// The `t_s` of each `--log-requests` line whose target contains `marker`.
fn logged_times(log: &std::path::Path, marker: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(log).expect("the request log");
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains(marker))
        .map(|l| {
            l.split(' ')
                .next()
                .and_then(|t| t.parse().ok())
                .expect("t_s")
        })
        .collect()
}

#[test]
fn a_start_delay_holds_its_group_back_while_the_others_run() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("limits-delay");
        let scenario = [
            group(
                "early",
                "connections = 1\niterations = 4",
                &[step("a", &format!("{base}/?early"), "")],
            ),
            group(
                "late",
                "connections = 2\niterations = 2\nstart_delay = \"600ms\"",
                &[step("b", &format!("{base}/?late"), "")],
            ),
        ]
        .concat();
        let file = write(&dir, "delay.toml", &scenario);
        let log = dir.join("requests.log");
        let log_arg = log.display().to_string();
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file, "--log-requests", &log_arg])
        else {
            continue;
        };
        assert_eq!(run.count("/requests/sent"), 8, "{io}: 4 + 2 × 2");
        let late = logged_times(&log, "?late");
        assert_eq!(late.len(), 4, "{io}");
        assert!(late.iter().all(|&t| t >= 0.6), "{io}: {late:?}");
        let early = logged_times(&log, "?early");
        assert_eq!(early.len(), 4, "{io}");
        assert!(early.iter().any(|&t| t < 0.6), "{io}: {early:?}");
        drop(target);
    }
}

#[test]
fn setup_runs_before_main_and_teardown_after_every_main_group() {
    for io in EVENT_LOOPS {
        let dir = temp_dir("limits-phases");
        let target = LoggedTarget::start(&dir);
        let scenario = [
            // Written out of order: the phase, not the file, orders them.
            group(
                "cleanup",
                "connections = 1\niterations = 1\nphase = \"teardown\"",
                &[step("bye", &target.url("/?teardown"), "")],
            ),
            group(
                "browse",
                "connections = 3\niterations = 2",
                &[step("home", &target.url("/?main-a"), "")],
            ),
            group(
                "prepare",
                "connections = 2\niterations = 1\nphase = \"setup\"",
                &[step("seed", &target.url("/?setup"), "")],
            ),
            group(
                "poll",
                "rate = 4\nduration = \"1s\"",
                &[step("poll", &target.url("/?main-b"), "")],
            ),
        ]
        .concat();
        let file = write(&dir, "phases.toml", &scenario);
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file]) else {
            continue;
        };
        assert_eq!(stop_reason(&run), "groups_done", "{io}");
        let paths = target.stop_and_paths();
        let phase = |p: &String| match p.as_str() {
            "/?setup" => 0,
            "/?main-a" | "/?main-b" => 1,
            "/?teardown" => 2,
            other => panic!("{io}: unexpected {other}"),
        };
        let order: Vec<i32> = paths.iter().map(phase).collect();
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{io}: {paths:?}");
        let count = |p: &str| paths.iter().filter(|x| *x == p).count();
        assert_eq!(count("/?setup"), 2, "{io}");
        assert_eq!(count("/?main-a"), 6, "{io}");
        assert_eq!(count("/?main-b"), 4, "{io}: 4/s for 1 s");
        assert_eq!(count("/?teardown"), 1, "{io}");
    }
}

/// Two users, three iterations of a failing step then a good one, under
/// `on_error`: what the server was asked for.
fn on_error_paths(io: &str, on_error: &str) -> Option<(Run, Vec<String>)> {
    let dir = temp_dir("limits-on-error");
    let target = LoggedTarget::start(&dir);
    let file = write(
        &dir,
        "on_error.toml",
        &group(
            "shop",
            &format!("connections = 2\niterations = 3\non_error = \"{on_error}\""),
            &[
                step("broken", &target.url("/status/500"), ""),
                step("fine", &target.url("/"), ""),
            ],
        ),
    );
    let run = run_ok_on_loop(io, &["--scenario", &file, "-d", "30s"])?;
    Some((run, target.stop_and_paths()))
}

#[test]
fn on_error_decides_what_a_user_does_after_a_failed_step() {
    for io in EVENT_LOOPS {
        let Some((run, paths)) = on_error_paths(io, "continue") else {
            continue;
        };
        assert_eq!(paths.len(), 12, "{io} continue: 2 users × 3 × 2 steps");
        assert_eq!(run.count("/requests/failed_status"), 6, "{io}");
        assert_eq!(stop_reason(&run), "groups_done", "{io}");

        let (_, paths) = on_error_paths(io, "next_iteration").expect("ran above");
        assert_eq!(paths.len(), 6, "{io} next_iteration: {paths:?}");
        assert!(paths.iter().all(|p| p == "/status/500"), "{io}: {paths:?}");

        let (run, paths) = on_error_paths(io, "stop_user").expect("ran above");
        assert_eq!(paths, ["/status/500"; 2], "{io} stop_user");
        assert_eq!(stop_reason(&run), "groups_done", "{io}: every user is done");
    }
}

#[test]
fn a_failed_check_or_a_timeout_is_a_failed_step_too() {
    for io in EVENT_LOOPS {
        let dir = temp_dir("limits-check-fails");
        let target = LoggedTarget::start(&dir);
        let file = write(
            &dir,
            "checks.toml",
            &group(
                "judged",
                "connections = 2\niterations = 4\non_error = \"next_iteration\"",
                &[
                    step("wrong", &target.url("/?a"), "check = [\"status == 201\"]"),
                    step("never", &target.url("/?b"), ""),
                ],
            ),
        );
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file, "-d", "30s"]) else {
            continue;
        };
        assert_eq!(run.count("/requests/check_failed"), 8, "{io}");
        let paths = target.stop_and_paths();
        assert_eq!(paths, ["/?a"; 8], "{io}: the second step never ran");

        let dir = temp_dir("limits-timeout");
        let mut target = LoggedTarget::start(&dir);
        let file = write(
            &dir,
            "slow.toml",
            &group(
                "slow",
                "connections = 2\niterations = 5\non_error = \"stop_user\"",
                &[step("slow", &target.url("/delay/3000"), "")],
            ),
        );
        let started = std::time::Instant::now();
        let run = run_ok_on_loop(
            io,
            &["--scenario", &file, "--timeout", "200ms", "-d", "30s"],
        )
        .expect("ran above");
        assert_eq!(
            run.count("/requests/errors"),
            2,
            "{io}: one timeout per user"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{io}"
        );
        target.stop();
    }
}

#[test]
fn stop_run_stops_every_group() {
    for io in EVENT_LOOPS {
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("limits-stop-run");
        let scenario = [
            group(
                "steady",
                "connections = 2",
                &[step("home", &format!("{base}/"), "")],
            ),
            group(
                "canary",
                "connections = 1\non_error = \"stop_run\"\nthink = \"300ms\"",
                &[
                    step("ok", &format!("{base}/?ok"), ""),
                    step("fails", &format!("{base}/status/503"), ""),
                ],
            ),
        ]
        .concat();
        let file = write(&dir, "stop.toml", &scenario);
        let started = std::time::Instant::now();
        let Some(run) = run_ok_on_loop(io, &["--scenario", &file, "-d", "60s"]) else {
            continue;
        };
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{io}: the 503 stopped the run long before -d 60s"
        );
        assert_eq!(stop_reason(&run), "stop_run", "{io}");
        assert_eq!(run.count("/requests/failed_status"), 1, "{io}: one 503");
        assert_eq!(
            run.count("/requests/unfinished"),
            0,
            "{io}: in flight finished"
        );
        drop(target);
    }
}

#[test]
fn combinations_that_cannot_work_are_refused_in_one_line() {
    let dir = temp_dir("limits-refused");
    let url = "http://127.0.0.1:9/";
    let cases = [
        (
            group(
                "g",
                "rate = 5\non_error = \"stop_user\"",
                &[step("s", url, "")],
            ),
            "on_error = \"stop_user\" needs connections",
        ),
        (
            group(
                "g",
                "connections = 1\nphase = \"setup\"",
                &[step("s", url, "")],
            ),
            "phase = \"setup\" needs iterations or duration",
        ),
        (
            [
                group("main", "connections = 1", &[step("s", url, "")]),
                group(
                    "bye",
                    "connections = 1\niterations = 1\nphase = \"teardown\"",
                    &[step("s", url, "")],
                ),
            ]
            .concat(),
            "group main: teardown group bye starts when every main group has ended",
        ),
    ];
    for (text, expected) in cases {
        let file = write(&dir, "refused.toml", &text);
        let run = run_stampede(binary(), &["--scenario", &file]);
        assert_eq!(run.code(), Some(2), "{expected}: {}", run.stderr());
        let stderr = run.stderr();
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
    let file = write(
        &dir,
        "warm.toml",
        &group(
            "g",
            "connections = 1\niterations = 2",
            &[step("s", url, "")],
        ),
    );
    let run = run_stampede(binary(), &["--scenario", &file, "--warmup", "1s"]);
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(run.stderr().contains("drop --warmup"), "{}", run.stderr());
}

#[test]
fn a_group_that_ends_by_itself_is_not_an_open_model_falling_behind() {
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let dir = temp_dir("limits-no-warning");
    let scenario = [
        group(
            "paced",
            "rate = 4\nduration = \"1s\"",
            &[step("a", &format!("{base}/?paced"), "")],
        ),
        group(
            "late",
            "connections = 1\niterations = 1\nstart_delay = \"1500ms\"",
            &[step("b", &format!("{base}/?late"), "")],
        ),
    ]
    .concat();
    let file = write(&dir, "quiet.toml", &scenario);
    let run = run_ok_on_loop("epoll", &["--scenario", &file]).expect("epoll runs");
    assert_eq!(run.count("/requests/sent"), 5, "4/s for 1 s, then 1");
    assert_eq!(stop_reason(&run), "groups_done");
    // The plan's rate is the first group's alone, for 1 s of a 1.5 s run.
    let warnings = run.result()["warnings"].to_string();
    assert!(!warnings.contains("fell behind"), "{warnings}");
    drop(target);
}
