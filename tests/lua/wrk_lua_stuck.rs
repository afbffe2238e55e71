//! A Lua hook that never returns (`while true do end`; LuaJIT's count hooks
//! do not fire in compiled code, so Lua cannot be interrupted): the run
//! still ends, bounded by `-d` and a grace period (or by Ctrl-C), with a
//! warning naming the worker and the hook, everything measured written, and
//! exit status 2. Every child here is killed if it outlives its bound.

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, read_json, spawn_target, temp_dir, text, TargetConfig};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::script;

/// What a bounded child left: status, stdout, stderr, how long it ran.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Starts the binary with `args`, its output into files (no pipe to fill).
fn start(args: &[&str]) -> (Child, PathBuf) {
    let dir = temp_dir("wrk-lua-stuck");
    let child = Command::new(binary())
        .args(args)
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    (child, dir)
}

/// Waits for `child` at most `limit` (from `since`), killing it and failing after.
fn wait_bounded(mut child: Child, dir: &std::path::Path, since: Instant, limit: Duration) -> Ended {
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if since.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "still running after {limit:?}; stderr: {}",
                text(&std::fs::read(dir.join("stderr")).unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ended {
        code: status.code(),
        stdout: text(&std::fs::read(dir.join("stdout")).unwrap()),
        stderr: text(&std::fs::read(dir.join("stderr")).unwrap()),
        took: since.elapsed(),
    }
}

fn run_bounded(args: &[&str], limit: Duration) -> Ended {
    let since = Instant::now();
    let (child, dir) = start(args);
    wait_bounded(child, &dir, since, limit)
}

fn sigint(child: &Child) {
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

/// Thread 2 answers its first few requests, then loops forever in `hook`.
fn second_thread_sticks(hook: &str) -> String {
    let body = match hook {
        "request" => "function request()\n  n = n + 1\n  if id == 2 and n > 3 then while true do end end\n  return wrk.request()\nend\n",
        "response" => "function response(status)\n  n = n + 1\n  if id == 2 and n > 3 then while true do end end\nend\n",
        _ => "function delay()\n  n = n + 1\n  if id == 2 and n > 3 then while true do end end\n  return 0\nend\n",
    };
    format!(
        "local ids = 0\nfunction setup(thread)\n  ids = ids + 1\n  thread:set('id', ids)\nend\nn = 0\n{body}"
    )
}

#[test]
fn a_stuck_hook_ends_the_run_after_its_duration_with_the_other_workers_figures() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    for hook in ["request", "response", "delay"] {
        let file = script(&format!("stuck-{hook}.lua"), &second_thread_sticks(hook));
        let json = temp_dir("wrk-lua-stuck").join("out.json");
        let ended = run_bounded(
            &[
                "run",
                &url,
                "-c",
                "2",
                "-t",
                "2",
                "-d",
                "1s",
                "--quiet",
                "--script",
                file.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ],
            Duration::from_secs(20),
        );
        assert_eq!(ended.code, Some(2), "{hook}: {}", ended.stderr);
        let warning = format!("worker 2 did not return from the Lua hook {hook}()");
        assert!(ended.stderr.contains(&warning), "{hook}: {}", ended.stderr);
        let warnings: Vec<_> = ended
            .stderr
            .lines()
            .filter(|l| l.contains("did not return"))
            .collect();
        assert_eq!(
            warnings.len(),
            1,
            "one line for the one stuck worker: {}",
            ended.stderr
        );
        let result = read_json(&json);
        assert_eq!(result["stop_reason"], "worker_stuck", "{hook}");
        let completed = result["requests"]["completed"].as_u64().unwrap();
        assert!(completed > 10, "{hook}: worker 1 kept going: {completed}");
        // What the stuck worker had begun is counted unfinished: every
        // request sent is accounted for (the trial found 8 missing).
        let requests = &result["requests"];
        let count = |name: &str| requests[name].as_u64().unwrap();
        assert_eq!(
            count("sent"),
            count("success") + count("failed_status") + count("errors") + count("unfinished"),
            "{hook}: {requests}"
        );
        assert!(
            result["warnings"].to_string().contains(&warning),
            "{hook}: {}",
            result["warnings"]
        );
        assert!(
            ended.took < Duration::from_secs(15),
            "{hook}: {:?}",
            ended.took
        );
    }
}

#[test]
fn what_a_stuck_worker_had_in_flight_over_http2_is_counted_unfinished() {
    // Over HTTP/2 the stuck thread's other streams were sent and never
    // judged: the trial's run said 27,093 sent, 27,085 ok, 0 unfinished.
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let file = script("stuck-h2.lua", &second_thread_sticks("request"));
    let json = temp_dir("wrk-lua-stuck-h2").join("out.json");
    let ended = run_bounded(
        &[
            "run",
            &url,
            "--http2",
            "-c",
            "2",
            "-t",
            "2",
            "--streams",
            "4",
            "-d",
            "1s",
            "--quiet",
            "--script",
            file.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    assert_eq!(ended.code, Some(2), "{}", ended.stderr);
    let result = read_json(&json);
    assert_eq!(result["stop_reason"], "worker_stuck");
    let requests = &result["requests"];
    let count = |name: &str| requests[name].as_u64().unwrap();
    assert!(count("unfinished") > 0, "{requests}");
    assert_eq!(
        count("sent"),
        count("success") + count("failed_status") + count("errors") + count("unfinished"),
        "{requests}"
    );
}

#[test]
fn every_worker_stuck_still_writes_their_last_snapshots_and_wrk_prints_its_report() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let file = script(
        "all-stuck.lua",
        // 10 ms apart: the workers hand over a snapshot before they stick.
        "n = 0\nfunction delay() return 10 end\nfunction response()\n  n = n + 1\n  if n > 40 then while true do end end\nend\n",
    );
    let json = temp_dir("wrk-lua-stuck").join("wrk.json");
    let ended = run_bounded(
        &[
            "wrk",
            "-t2",
            "-c2",
            "-d1s",
            "-s",
            file.to_str().unwrap(),
            &url,
            "--stampede-json",
            json.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    assert_eq!(ended.code, Some(2), "{}", ended.stderr);
    for worker in 1..=2 {
        let warning = format!("worker {worker} did not return from the Lua hook response()");
        assert!(ended.stderr.contains(&warning), "{}", ended.stderr);
    }
    assert!(ended.stdout.contains("Requests/sec"), "{}", ended.stdout);
    let result = read_json(&json);
    let completed = result["requests"]["completed"].as_u64().unwrap();
    // Each worker's responses up to its last snapshot (at most 41 each).
    assert!((1..=82).contains(&completed), "{completed}");
}

#[test]
fn a_stuck_init_setup_or_done_is_bounded_too() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    for hook in ["setup", "init", "done"] {
        let code = match hook {
            "setup" => "function setup(thread) while true do end end\n",
            "init" => "function init(args) while true do end end\n",
            _ => "function done(summary, latency, requests) while true do end end\n",
        };
        let file = script(&format!("stuck-{hook}.lua"), code);
        let json = temp_dir("wrk-lua-stuck").join("out.json");
        let ended = run_bounded(
            &[
                "run",
                &url,
                "-c",
                "1",
                "-t",
                "1",
                "-d",
                "1s",
                "--quiet",
                "--script",
                file.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ],
            Duration::from_secs(20),
        );
        assert_eq!(ended.code, Some(2), "{hook}: {}", ended.stderr);
        assert!(
            ended
                .stderr
                .contains(&format!("did not return from the Lua hook {hook}()")),
            "{hook}: {}",
            ended.stderr
        );
        if hook == "done" {
            // The run had ended: its result was written before done ran.
            let result = read_json(&json);
            assert!(result["requests"]["completed"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn sigint_ends_a_run_with_a_stuck_hook_and_no_duration() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let file = script(
        "stuck-n.lua",
        // 10 ms apart: a snapshot is handed over before the hook sticks.
        "n = 0\nfunction delay() return 10 end\nfunction request()\n  n = n + 1\n  if n > 50 then while true do end end\n  return wrk.request()\nend\n",
    );
    // One SIGINT: the run gives the stuck worker up after the grace period.
    // Two (the second past the same-interrupt window): a forced exit at once.
    for signals in [1, 2] {
        let json = temp_dir("wrk-lua-stuck").join("n.json");
        let since = Instant::now();
        let (child, dir) = start(&[
            "run",
            &url,
            "-c",
            "1",
            "-t",
            "1",
            "-n",
            "100000000",
            "--quiet",
            "--script",
            file.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        std::thread::sleep(Duration::from_millis(1_500));
        let signalled = Instant::now();
        sigint(&child);
        if signals == 2 {
            std::thread::sleep(Duration::from_millis(1_200));
            sigint(&child);
        }
        let ended = wait_bounded(child, &dir, since, Duration::from_secs(25));
        let after_signal = signalled.elapsed();
        assert!(
            after_signal < Duration::from_secs(12),
            "{signals}: {after_signal:?}"
        );
        let expected = if signals == 1 { 2 } else { 130 };
        assert_eq!(ended.code, Some(expected), "{signals}: {}", ended.stderr);
        if signals == 1 {
            assert!(
                ended
                    .stderr
                    .contains("worker 1 did not return from the Lua hook request()"),
                "{}",
                ended.stderr
            );
        }
        let result = read_json(&json);
        assert_eq!(result["interrupted"], true, "{signals}");
        let completed = result["requests"]["completed"].as_u64().unwrap();
        assert!((1..=50).contains(&completed), "{signals}: {completed}");
        let _ = ended.stdout;
    }
}
