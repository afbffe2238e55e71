//! The run's lifecycle through the binary: signals (one interrupt
//! delivered twice, SIGTERM, a forced exit that still writes), output paths
//! checked before the first request, `-` as stdout, `--pid` of no process,
//! runs in which nothing could connect, and mistyped commands.

use stampede_testkit::{
    binary, free_port, read_json, spawn_target, temp_dir, text, ServerHandle, TargetConfig,
};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn one_thread_target() -> ServerHandle {
    spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    })
}

fn start(args: &[&str]) -> Child {
    Command::new(binary())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the stampede binary runs")
}

fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
}

fn run(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .output()
        .expect("the stampede binary runs")
}

/// The counts of an interrupted result add up and something was measured.
fn assert_partial(json: &serde_json::Value) {
    assert_eq!(json["interrupted"], true, "{json}");
    let r = &json["requests"];
    let n = |k: &str| r[k].as_u64().unwrap();
    assert!(n("completed") > 0, "{json}");
    assert_eq!(n("sent"), n("completed") + n("errors") + n("unfinished"));
}

fn long_run(url: &str, json: &Path) -> Vec<String> {
    [url, "-d", "30s", "-c", "4", "-t", "1", "--json"]
        .iter()
        .map(|s| s.to_string())
        .chain([json.to_str().unwrap().to_string()])
        .collect()
}

#[test]
fn two_sigints_in_one_instant_are_one_interrupt() {
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    let json = temp_dir("lifecycle").join("twice.json");
    let args = long_run(&url, &json);
    let child = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    // What GNU timeout and `kill -INT -PGID` do: the process, then its group.
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(1));
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped promptly"
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("interrupted again"), "{stderr}");
    assert!(
        text(&output.stdout).contains("INTERRUPTED"),
        "summary printed"
    );
    assert_partial(&read_json(&json));
}

#[test]
fn sigterm_exits_143_with_the_result_written() {
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    let json = temp_dir("lifecycle").join("term.json");
    let args = long_run(&url, &json);
    let child = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGTERM);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("INTERRUPTED"));
    assert_partial(&read_json(&json));
}

#[test]
fn gnu_timeout_sigint_keeps_the_result() {
    let timeout = stampede_testkit::require_tool!("timeout");
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    let json = temp_dir("lifecycle").join("timeout.json");
    let mut args = vec![
        "--preserve-status",
        "-s",
        "INT",
        "2",
        binary().to_str().expect("a UTF-8 path"),
    ];
    let run_args = long_run(&url, &json);
    args.extend(run_args.iter().map(String::as_str));
    let output = Command::new(&timeout).args(&args).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("interrupted again"), "{stderr}");
    assert!(text(&output.stdout).contains("INTERRUPTED"));
    assert_partial(&read_json(&json));
}

#[test]
fn a_later_second_interrupt_forces_the_exit_but_still_writes() {
    // The spawned "server" ignores SIGTERM, so stopping it takes the whole
    // grace period (5 s): a second Ctrl-C then forces the exit at once.
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    let dir = temp_dir("lifecycle");
    let json = dir.join("forced.json");
    let spawn = "sh -c 'trap \"\" TERM; sleep 60'".to_string();
    let mut args = long_run(&url, &json);
    args.extend(["--spawn".to_string(), spawn]);
    let child = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(2000));
    let forced_at = Instant::now();
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert!(
        forced_at.elapsed() < Duration::from_secs(2),
        "the second interrupt ended the wait: {stderr}"
    );
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted again"), "{stderr}");
    assert!(text(&output.stdout).contains("INTERRUPTED"));
    assert_partial(&read_json(&json));
}

#[test]
fn bad_output_paths_fail_before_any_request() {
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    let dir = temp_dir("lifecycle");
    let good = dir.join("good.log");
    for flag in [
        "--json",
        "--html",
        "--csv",
        "--csv-timeseries",
        "--gnuplot",
        "--log-requests",
    ] {
        let started = Instant::now();
        let output = run(&[
            &url,
            "-d",
            "20s",
            "-q",
            "--log-requests",
            good.to_str().unwrap(),
            flag,
            "/nonexistent/dir/out",
        ]);
        let stderr = text(&output.stderr);
        // (For --log-requests the bad path, given last, wins over the good one.)
        assert_eq!(output.status.code(), Some(2), "{flag}: {stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{flag}: refused before the 20 s load"
        );
        assert_eq!(stderr.lines().count(), 1, "{flag}: {stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains("/nonexistent/dir/out"),
            "{flag}: {stderr}"
        );
        assert!(!good.exists(), "{flag}: no file left behind");
    }
    // A directory is not a file.
    let output = run(&[&url, "-n", "1", "--html", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("is a directory"));
    // The compat front-ends check theirs too, named by their own flags.
    let output = run(&["ab", "-n", "1", "-g", "/nonexistent/dir/g.tsv", &url]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("-g /nonexistent/dir/g.tsv"), "{stderr}");
    assert!(text(&output.stdout).is_empty(), "nothing printed before it");
}

#[test]
fn dash_means_stdout_and_the_summary_moves_to_stderr() {
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    let dir = temp_dir("lifecycle");
    let output = Command::new(binary())
        .args([&url, "-n", "20", "-c", "2", "-t", "1", "--json", "-"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stdout is the JSON result alone");
    assert_eq!(json["requests"]["completed"], 20);
    assert!(
        text(&output.stderr).contains("Latency"),
        "summary on stderr"
    );
    assert!(!dir.join("-").exists(), "no file named '-'");
    let output = Command::new(binary())
        .args([&url, "-n", "20", "-c", "2", "-t", "1", "--csv", "-"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(text(&output.stdout).starts_with("Percentage served,Time in ms"));
    assert!(!dir.join("-").exists());
    let output = run(&[&url, "-n", "5", "--json", "-", "--html", "-"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("only one output can go to stdout"));
    // --repeat's table and a front-end's layout move to stderr the same way.
    for args in [
        vec![
            url.as_str(),
            "-n",
            "20",
            "-t",
            "1",
            "--repeat",
            "2",
            "--json",
            "-",
        ],
        vec![
            "wrk",
            "-t1",
            "-c2",
            "-d1s",
            "--stampede-json",
            "-",
            url.as_str(),
        ],
    ] {
        let output = Command::new(binary())
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let json: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON alone: {e}"));
        assert!(json["schema"].as_str().is_some(), "{json}");
        assert!(!dir.join("-").exists());
    }
}

#[test]
fn a_pid_of_no_process_is_a_usage_error() {
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    // pid_max is at most 2^22: this pid cannot exist.
    let output = run(&[&url, "-d", "20s", "--pid", "99999999"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "stampede: error: --pid 99999999: no such process"
    );
}

#[test]
fn nothing_connecting_is_not_a_success() {
    let url = format!("http://127.0.0.1:{}/", free_port());
    let json = temp_dir("lifecycle").join("refused.json");
    let output = run(&[
        &url,
        "-d",
        "1s",
        "-c",
        "2",
        "-t",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let result = read_json(&json);
    assert_eq!(result["connections"]["opened"], 0);
    assert_eq!(result["requests"]["completed"], 0);
    assert!(result["errors"]["connect_refused"].as_u64().unwrap() > 0);
    assert!(
        stdout.contains("no connection could be opened:") && stdout.contains("connect_refused"),
        "{stdout}"
    );
    assert!(!stdout.contains("0us"), "no zero latencies: {stdout}");
    assert!(stdout.contains("—"), "{stdout}");
    assert!(stderr.contains("no connection could be opened"), "{stderr}");
    // wrk and ab say what they say when nothing connects, and exit 2.
    let output = run(&["wrk", "-t1", "-c2", "-d1s", &url]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "unable to connect to 127.0.0.1:{}",
            &url[17..url.len() - 1]
        )),
        "{stderr}"
    );
    assert!(!text(&output.stdout).contains("0.00us"));
    let output = run(&["ab", "-n", "5", &url]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("apr_socket_connect(): Connection refused (111)"),
        "{stderr}"
    );
}

#[test]
fn keep_alive_after_a_warmup_is_a_success() {
    // The warm-up opens the connections; the measured part reuses them and
    // counts none opened: that is not "unable to connect".
    let target = one_thread_target();
    let url = format!("http://{}/", target.local_addr());
    let json = temp_dir("lifecycle").join("warm.json");
    let output = run(&[
        &url,
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "1s",
        "--warmup",
        "500ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(read_json(&json)["requests"]["completed"].as_u64().unwrap() > 0);
}

#[test]
fn port_zero_is_not_a_target() {
    let output = run(&["http://127.0.0.1:0/", "-d", "1s"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("port 0"), "{stderr}");
}

#[test]
fn a_mistyped_command_is_named() {
    let output = run(&["swep", "http://127.0.0.1:1/"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr).trim(),
        "stampede: error: unknown command 'swep' (did you mean sweep?)"
    );
    let output = run(&["bogus"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr.contains("unknown command 'bogus'"), "{stderr}");
    assert!(!stderr.contains("resolve"), "{stderr}");
    let help = text(&run(&["--help"]).stdout);
    assert!(help.contains("Usage: stampede [run] <URL>"), "{help}");
}
