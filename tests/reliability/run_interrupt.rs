//! Ctrl-C ends a run early and still prints and writes the full result of
//! what completed, marked interrupted, with exit status 130; an experiment
//! keeps its finished runs in its file and stops the server under way.

use stampede_testkit::{spawn_target, temp_dir, TargetConfig};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigint_writes_the_partial_result_and_exits_130() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let json_path = temp_dir("interrupt").join("partial.json");
    let child = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args([
            url.as_str(),
            "-d",
            "30s",
            "-c",
            "4",
            "-t",
            "1",
            "--quiet",
            "--json",
        ])
        .arg(&json_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let started = Instant::now();
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "stopped promptly"
    );
    assert_eq!(output.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("INTERRUPTED"), "{stdout}");
    let json: serde_json::Value = stampede_testkit::read_json(&json_path);
    assert_eq!(json["interrupted"], true);
    let sent = json["requests"]["sent"].as_u64().unwrap();
    let completed = json["requests"]["completed"].as_u64().unwrap();
    assert!(completed > 0);
    assert_eq!(
        sent,
        completed
            + json["requests"]["errors"].as_u64().unwrap()
            + json["requests"]["unfinished"].as_u64().unwrap()
    );
}

#[test]
fn sigint_during_an_experiment_keeps_the_finished_runs() {
    let dir = temp_dir("experiment-interrupt");
    let json_path = dir.join("experiment.json");
    let port = stampede_testkit::free_port();
    let binary = env!("CARGO_BIN_EXE_stampede");
    let template = format!("{binary} serve --port {port} --threads {{threads}}");
    let url = format!("http://127.0.0.1:{port}/");
    let child = Command::new(binary)
        .args([
            "experiment",
            "-q",
            "--server",
            &template,
            "--vary",
            "threads=1,2",
        ])
        .args(["--repeat", "1", "--settle", "0s", "--json"])
        .arg(&json_path)
        .args(["--", "run", &url, "-c", "2", "-t", "1", "-d", "2s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The file appears once the first run has finished; the second is under way.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !json_path.exists() {
        assert!(Instant::now() < deadline, "the first run never finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let json: serde_json::Value = stampede_testkit::read_json(&json_path);
    assert_eq!(json["interrupted"], true);
    assert_eq!(json["order"], serde_json::json!([0]));
    assert_eq!(json["variants"][0]["runs"].as_array().unwrap().len(), 1);
    assert_eq!(json["variants"][1]["runs"].as_array().unwrap().len(), 0);
    // The second variant's server was stopped with the experiment.
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing listens on {port} any more"
    );
}
