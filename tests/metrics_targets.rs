//! `--metrics` of a `--targets` mix: the request counters carry `target`
//! (its place in the file) and `request` (`METHOD URL`), each target's
//! counts equal its row of the result, and over the family they add up to
//! the run's totals (the unlabelled totals are not served twice).

use stampede_testkit::{
    binary, free_port, http_get, one_thread, read_json, spawn_target, temp_dir, wait_for,
};
use std::process::Command;
use std::time::Duration;

/// Sum of `stampede_requests_total` samples whose line contains every one of `tags`.
fn requests(exposition: &str, tags: &[&str]) -> u64 {
    exposition
        .lines()
        .filter(|line| line.starts_with("stampede_requests_total{"))
        .filter(|line| tags.iter().all(|tag| line.contains(tag)))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[test]
fn a_mix_is_counted_per_target_and_adds_up_to_the_run() {
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let dir = temp_dir("metrics-targets");
    let targets = dir.join("targets.txt");
    std::fs::write(
        &targets,
        format!("GET {base}/\nweight=3\n\nGET {base}/status/503\n"),
    )
    .expect("targets file");
    let json = dir.join("result.json");
    let port = free_port();
    let mut child = Command::new(binary())
        .args(["run", "--targets", targets.to_str().expect("utf-8")])
        .args(["-n", "400", "-c", "2", "-t", "1", "--quiet"])
        .args([
            "--metrics",
            &format!("127.0.0.1:{port}"),
            "--metrics-linger",
            "30s",
        ])
        .arg("--json")
        .arg(&json)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("stampede starts");
    wait_for(Duration::from_secs(30), || json.exists().then_some(()))
        .expect("the result is written");
    let result = read_json(&json);
    let text = http_get(port, "/metrics").expect("the final values");
    let _ = child.kill();
    let _ = child.wait();
    let count = |pointer: &str| {
        result
            .pointer(pointer)
            .and_then(|v| v.as_u64())
            .unwrap_or_else(|| panic!("{pointer} in {result}"))
    };
    let root = format!("request=\"GET {base}/\"");
    let unavailable = format!("request=\"GET {base}/status/503\"");
    assert_eq!(
        requests(&text, &["target=\"1\"", &root, "outcome=\"success\""]),
        count("/targets/0/success"),
        "{text}"
    );
    assert_eq!(
        requests(&text, &["target=\"2\"", &unavailable, "code=\"503\""]),
        count("/targets/1/failed_status"),
        "{text}"
    );
    assert!(count("/targets/0/success") > 0 && count("/targets/1/failed_status") > 0);
    // Every sample names its target: the family sums to the run's totals.
    assert!(
        text.lines()
            .filter(|line| line.starts_with("stampede_requests_total{"))
            .all(|line| line.contains("target=\"")),
        "{text}"
    );
    assert_eq!(
        requests(&text, &[]),
        count("/requests/success") + count("/requests/failed_status") + count("/requests/errors")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
