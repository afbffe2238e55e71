//! Issue 16, the engine's share: `--targets` files of every size on every
//! event loop, connect backoff (attempts counted, bounded against a dead
//! port, ended on time), and exact open-model counts split over threads.
//! Every run goes through the binary with a time limit of its own, so a hang
//! fails the test instead of stalling the suite.

use stampede_testkit::{
    binary, event_loop_or_skip, free_port, one_thread, spawn_target, temp_dir, Run, EVENT_LOOPS,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary with `args` plus `--json FILE --quiet`; kills it and
/// fails when it has not ended within `limit`.
fn run_within(limit: Duration, args: &[&str]) -> (Run, Duration) {
    let dir = temp_dir("engine");
    let json_path = dir.join("result.json");
    let started = Instant::now();
    let mut child = Command::new(binary())
        .args(args)
        .arg("--json")
        .arg(&json_path)
        .arg("--quiet")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the stampede binary runs");
    while child.try_wait().expect("wait for stampede").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().expect("collect output");
            panic!(
                "stampede {args:?} still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = started.elapsed();
    let output = child.wait_with_output().expect("collect output");
    let json = std::fs::read_to_string(&json_path)
        .ok()
        .map(|text| serde_json::from_str(&text).expect("the result file is valid JSON"));
    let _ = std::fs::remove_dir_all(&dir);
    (Run { output, json }, took)
}

/// A targets file of `blocks` blocks, each a different path of `origin`.
fn targets_file(dir: &Path, origin: &str, blocks: usize) -> PathBuf {
    let paths = ["/", "/index.html", "/1k.html"];
    let text: Vec<String> = paths[..blocks]
        .iter()
        .map(|path| format!("GET {origin}{path}\n"))
        .collect();
    let file = dir.join(format!("targets-{blocks}.txt"));
    std::fs::write(&file, text.join("\n")).expect("write the targets file");
    file
}

#[test]
fn targets_files_of_one_to_three_blocks_run_on_every_event_loop() {
    let dir = temp_dir("targets-sizes");
    for blocks in 1..=3 {
        for io in EVENT_LOOPS {
            if !event_loop_or_skip(io) {
                continue;
            }
            for threads in ["1", "2"] {
                let target = spawn_target(one_thread());
                let origin = format!("http://{}", target.local_addr());
                let file = targets_file(&dir, &origin, blocks);
                let file = file.to_str().expect("utf-8 path");
                let label = format!("{blocks} block(s), --io {io}, -t {threads}");

                let (exact, _) = run_within(
                    Duration::from_secs(30),
                    &[
                        "run",
                        "--targets",
                        file,
                        "-n",
                        "10",
                        "--io",
                        io,
                        "-t",
                        threads,
                    ],
                );
                assert_eq!(exact.code(), Some(0), "{label} -n: {}", exact.stderr());
                assert_eq!(exact.count("/requests/sent"), 10, "{label} -n");
                assert_eq!(exact.count("/requests/success"), 10, "{label} -n");
                let per_target = exact.result()["targets"].as_array().expect("targets[]");
                assert_eq!(per_target.len(), blocks, "{label}");
                let finished: Vec<u64> = per_target
                    .iter()
                    .map(|t| t["finished"].as_u64().expect("finished"))
                    .collect();
                assert_eq!(finished.iter().sum::<u64>(), 10, "{label}: {finished:?}");
                assert!(finished.iter().all(|&n| n > 0), "{label}: {finished:?}");

                let (timed, _) = run_within(
                    Duration::from_secs(30),
                    &[
                        "run",
                        "--targets",
                        file,
                        "-d",
                        "300ms",
                        "-c",
                        "4",
                        "--io",
                        io,
                        "-t",
                        threads,
                    ],
                );
                assert_eq!(timed.code(), Some(0), "{label} -d: {}", timed.stderr());
                assert!(timed.count("/requests/success") > 0, "{label} -d");
                assert_eq!(timed.count("/requests/errors"), 0, "{label} -d");
                timed.assert_accounted(&label);

                let served = target.shutdown().expect("target stats").requests_total;
                let completed = 10 + timed.count("/requests/success");
                assert!(
                    served >= completed && served <= completed + 4,
                    "{label}: the target served {served}, the client counted {completed}"
                );
            }
        }
    }
}

#[test]
fn a_weight_on_the_request_line_is_refused_with_the_place() {
    let dir = temp_dir("targets-weight");
    let file = dir.join("weighted.txt");
    std::fs::write(&file, "GET http://127.0.0.1:9/ weight=2\n").unwrap();
    let (run, _) = run_within(
        Duration::from_secs(10),
        &["run", "--targets", file.to_str().unwrap(), "-n", "1"],
    );
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    let stderr = run.stderr();
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("weighted.txt:1") && stderr.contains("weight=N"),
        "{stderr}"
    );
}

#[test]
fn a_weight_line_still_weighs_the_mix() {
    let target = spawn_target(one_thread());
    let origin = format!("http://{}", target.local_addr());
    let dir = temp_dir("targets-weight-line");
    let file = dir.join("weighted.txt");
    std::fs::write(
        &file,
        format!("GET {origin}/\nweight=3\n\nGET {origin}/index.html\n"),
    )
    .unwrap();
    let (run, _) = run_within(
        Duration::from_secs(30),
        &[
            "run",
            "--targets",
            file.to_str().unwrap(),
            "-n",
            "40",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let targets = run.result()["targets"].as_array().unwrap();
    assert_eq!(targets[0]["finished"], 30);
    assert_eq!(targets[1]["finished"], 10);
}

/// Runs the open model with `args` on `threads` threads against a fresh
/// target, on every event loop, and checks that exactly `expected` requests
/// were sent, answered and seen by the target, and that the run lasted its
/// whole duration.
fn assert_open_model_sends(args: &[&str], threads: &str, expected: u64, duration_s: f64) {
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let target = spawn_target(one_thread());
        let url = format!("http://{}/", target.local_addr());
        let mut all = vec![url.as_str(), "-t", threads, "--io", io];
        all.extend_from_slice(args);
        let label = format!("{all:?}");
        let (run, _) = run_within(Duration::from_secs(30), &all);
        assert_eq!(run.code(), Some(0), "{label}: {}", run.stderr());
        assert_eq!(run.result()["plan"]["io"], io, "{label}");
        assert_eq!(run.count("/requests/sent"), expected, "{label}");
        assert_eq!(run.count("/requests/success"), expected, "{label}");
        let served = target.shutdown().expect("target stats").requests_total;
        assert_eq!(served, expected, "{label}: the target's counter");
        let elapsed = run.result()["elapsed_s"].as_f64().expect("elapsed_s");
        assert!(
            elapsed >= duration_s - 0.01,
            "{label}: the run lasts its duration, {elapsed} s"
        );
    }
}

#[test]
fn the_open_model_sends_exactly_rate_times_duration_on_any_thread_count() {
    // The last instant is 1/r before the end: a wide margin on a busy machine.
    std::thread::scope(|scope| {
        for threads in ["1", "2", "3"] {
            scope.spawn(move || {
                assert_open_model_sends(&["-r", "10", "-d", "2s"], threads, 20, 2.0);
            });
            scope.spawn(move || {
                assert_open_model_sends(&["-r", "8", "-d", "2500ms"], threads, 20, 2.5);
            });
        }
    });
}

#[test]
fn open_model_stages_send_exactly_the_area_under_the_rate() {
    // 0 -> 10/s over 1 s (5 requests), then 10/s for 1 s (10 more).
    std::thread::scope(|scope| {
        for threads in ["1", "2", "3"] {
            scope.spawn(move || {
                assert_open_model_sends(&["-r", "10", "--stages", "1s:10,1s:10"], threads, 15, 2.0);
            });
        }
    });
}

/// The connection counts and errors of a run against a port nothing listens on.
fn assert_only_refused(run: &Run, label: &str) -> u64 {
    let attempts = run.count("/connections/attempts");
    let refused = run.count("/errors/connect_refused");
    // A connect still under way at the deadline is an attempt whose request
    // is unfinished.
    let unfinished = run.count("/requests/unfinished");
    assert_eq!(run.count("/connections/opened"), 0, "{label}");
    assert!(
        refused <= attempts && attempts <= refused + unfinished,
        "{label}: {attempts} attempts, {refused} refused, {unfinished} unfinished"
    );
    assert_eq!(
        run.count("/requests/sent"),
        attempts,
        "{label}: one request per attempt"
    );
    run.assert_accounted(label);
    attempts
}

#[test]
fn connect_backoff_bounds_attempts_against_a_closed_port_on_every_event_loop() {
    let url = format!("http://127.0.0.1:{}/", free_port());
    std::thread::scope(|scope| {
        for io in EVENT_LOOPS {
            if !event_loop_or_skip(io) {
                continue;
            }
            let url = url.as_str();
            scope.spawn(move || {
                let label = format!("--io {io} -c 20 -d 2s");
                let (run, _) = run_within(
                    Duration::from_secs(20),
                    &[url, "-c", "20", "-t", "2", "-d", "2s", "--io", io],
                );
                let attempts = assert_only_refused(&run, &label);
                // Without backoff: hundreds of thousands.
                assert!(
                    (20..=2000).contains(&attempts),
                    "{label}: {attempts} attempts"
                );
                let elapsed = run.result()["elapsed_s"].as_f64().unwrap();
                assert!(elapsed < 2.5, "{label}: ends at its deadline, {elapsed} s");

                // One connection is in a 1 s backoff around the deadline of a
                // 1 s run: the run still ends at 1 s.
                let label = format!("--io {io} -c 1 -d 1s");
                let (run, _) = run_within(
                    Duration::from_secs(20),
                    &[url, "-c", "1", "-t", "1", "-d", "1s", "--io", io],
                );
                assert_only_refused(&run, &label);
                let elapsed = run.result()["elapsed_s"].as_f64().unwrap();
                assert!(elapsed < 1.2, "{label}: ends at its deadline, {elapsed} s");

                // -n: every failed attempt is one request of the budget, and
                // the run ends once the budget is spent.
                let label = format!("--io {io} -c 20 -n 100");
                let (run, took) = run_within(
                    Duration::from_secs(20),
                    &[url, "-c", "20", "-t", "2", "-n", "100", "--io", io],
                );
                assert_eq!(assert_only_refused(&run, &label), 100, "{label}");
                assert!(took < Duration::from_secs(5), "{label}: took {took:?}");
            });
        }
    });
}

#[test]
fn a_server_dying_mid_run_costs_a_bounded_number_of_attempts() {
    std::thread::scope(|scope| {
        for io in EVENT_LOOPS {
            if !event_loop_or_skip(io) {
                continue;
            }
            scope.spawn(move || {
                let target = spawn_target(one_thread());
                let url = format!("http://{}/", target.local_addr());
                let label = format!("--io {io}, killed after 1 s of 3");
                let runner = std::thread::spawn(move || {
                    run_within(
                        Duration::from_secs(30),
                        &[&url, "-c", "20", "-t", "2", "-d", "3s", "--io", io],
                    )
                });
                std::thread::sleep(Duration::from_secs(1));
                let served = target.shutdown().expect("target stats").requests_total;
                let (run, _) = runner.join().expect("the run");
                assert_eq!(run.code(), Some(0), "{label}: {}", run.stderr());
                assert!(served > 0 && run.count("/requests/success") > 0, "{label}");
                let opened = run.count("/connections/opened");
                let attempts = run.count("/connections/attempts");
                let refused = run.count("/errors/connect_refused");
                assert!(refused > 0, "{label}: {}", run.result()["errors"]);
                let unfinished = run.count("/requests/unfinished");
                assert!(
                    opened + refused <= attempts && attempts <= opened + refused + unfinished,
                    "{label}: {attempts} attempts, {opened} opened, {refused} refused"
                );
                // Two seconds of a dead server: about 9 attempts per
                // connection with backoff (and 277,939 in all without).
                assert!(refused <= 2000, "{label}: {refused} refused attempts");
                run.assert_accounted(&label);
            });
        }
    });
}
