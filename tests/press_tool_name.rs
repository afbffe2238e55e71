//! The seed's own name for the press tool, `kedao_press_tool`, is a name of
//! `stampede press`: `stampede kedao_press_tool -t 4 -c 40 -d 30s URL`, as
//! copied from the seed's report, runs the press front-end (it was
//! "unknown command" with no hint).

use stampede_testkit::{binary, one_thread, spawn_target, text};
use std::process::Command;

#[test]
fn kedao_press_tool_runs_the_press_front_end() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let out = Command::new(binary())
        .args(["kedao_press_tool", "-t", "1", "-c", "2", "-d", "1s", &url])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // The press tool's report: its connection line and its summary.
    assert!(
        stdout.starts_with("create 2 connections successfully"),
        "{stdout}"
    );
    // "  12915 requests in 1.000s, ..., total: 12915, errors: 0"
    let requests = stdout
        .lines()
        .find(|l| l.contains(" requests in "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok());
    assert!(requests.is_some_and(|n| n > 100), "{stdout}");
}
