//! A scenario's groups and steps after the run ("compare works on
//! them"): `stampede compare` of two scenario results shows each group and
//! each step every file has, with its own figures, in the text and in
//! `--json`; and the summary's header names every group's load, not only
//! the first group's.

use stampede_testkit::workload as workload_support;

use std::process::Command;
use workload_support::*;

fn two_groups(dir: &std::path::Path, target: &LoggedTarget) -> String {
    write(
        dir,
        "two.toml",
        &format!(
            "[[group]]\nname = \"browse\"\nconnections = 3\n\n\
             [[group.step]]\nname = \"home\"\nurl = \"{home}\"\n\n\
             [[group.step]]\nname = \"data\"\nurl = \"{json}\"\n\n\
             [[group]]\nname = \"slow\"\nconnections = 1\n\n\
             [[group.step]]\nname = \"wait\"\nurl = \"{delay}\"\n",
            home = target.url("/"),
            json = target.url("/json"),
            delay = target.url("/delay/2"),
        ),
    )
}

/// Runs the scenario for a second into `dir/NAME.json`; returns the path
/// and the summary text.
fn run_into(dir: &std::path::Path, file: &str, name: &str) -> (String, String) {
    let path = dir.join(format!("{name}.json")).display().to_string();
    let out = Command::new(binary())
        .args(["run", "--scenario", file, "-d", "1s", "--json", &path])
        .output()
        .expect("stampede runs");
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    (path, text)
}

#[test]
fn compare_shows_every_group_and_step_both_files_have() {
    let dir = temp_dir("workload-compare");
    let mut target = LoggedTarget::start(&dir);
    let file = two_groups(&dir, &target);
    let (a, summary) = run_into(&dir, &file, "a");
    let (b, _) = run_into(&dir, &file, "b");
    target.stop();
    assert!(
        summary.contains("2 groups (browse: 3 connections; slow: 1 connection)"),
        "the header names each group's load: {summary}"
    );
    let json = dir.join("cmp.json").display().to_string();
    let out = Command::new(binary())
        .args(["compare", &a, &b, "--json", &json])
        .output()
        .expect("compare runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let parts = [
        "group browse",
        "group slow",
        "step browse/home",
        "step browse/data",
        "step slow/wait",
    ];
    for part in parts {
        assert!(
            text.lines().any(|l| l.trim_end() == part),
            "{part} on a line of its own: {text}"
        );
    }
    let document = stampede_testkit::read_json(std::path::Path::new(&json));
    let names: Vec<&str> = document["parts"]
        .as_array()
        .unwrap_or_else(|| panic!("parts[] in {document}"))
        .iter()
        .map(|p| p["part"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, parts);
    // The slow group's p50 is its 2 ms delay in both files, not the run's.
    let slow = &document["parts"][1]["rows"];
    let p50 = slow
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["figure"] == "p50"))
        .unwrap_or_else(|| panic!("a p50 row: {slow}"));
    for value in p50["values"].as_array().expect("values") {
        let ms = value.as_f64().expect("a p50 in ms");
        assert!((2.0..50.0).contains(&ms), "p50 {ms} ms of /delay/2");
    }
    // report of the saved comparison prints the same parts.
    let report = Command::new(binary())
        .args(["report", &json])
        .output()
        .expect("report runs");
    let again = String::from_utf8_lossy(&report.stdout).to_string();
    assert_eq!(again, text, "report prints what compare printed");
}
