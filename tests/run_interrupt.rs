//! Ctrl-C ends a run early and still prints and writes the full result of
//! what completed, marked interrupted, with exit status 130.

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
