//! `--metrics` of a mix: the request counters of a `--targets` run carry
//! `target` (its place in the file) and `request` (`METHOD URL`), a
//! scenario's also `step`; each target's counts equal its row of the
//! result, and over the family they add up to the run's totals (the
//! unlabelled totals are not served twice). Responses that fail a
//! `--check` are `outcome="check_failed"`.

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

/// Runs stampede with `args` and `--metrics` lingering; the result and the
/// exposition served after the run.
fn final_values(name: &str, args: &[&str]) -> (serde_json::Value, String) {
    let dir = temp_dir(name);
    let json = dir.join("result.json");
    // A free port may be taken by a test running beside this one before
    // stampede binds it: then the run stops at once, and is tried again.
    for _attempt in 0..3 {
        let port = free_port();
        let mut child = Command::new(binary())
            .args(args)
            .args(["--quiet", "--metrics", &format!("127.0.0.1:{port}")])
            .args(["--metrics-linger", "30s", "--json"])
            .arg(&json)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("stampede starts");
        let written = wait_for(Duration::from_secs(30), || {
            if json.exists() {
                return Some(true);
            }
            child.try_wait().ok().flatten().map(|_| false)
        });
        if written != Some(true) {
            let _ = child.kill();
            let output = child.wait_with_output().expect("stampede ends");
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            assert!(stderr.contains("in use"), "the result is written: {stderr}");
            continue;
        }
        let result = read_json(&json);
        let text = http_get(port, "/metrics").expect("the final values");
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&dir);
        return (result, text);
    }
    panic!("no free port for --metrics in three attempts");
}

#[test]
fn responses_that_fail_a_check_are_counted_as_check_failed() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let (result, text) = final_values(
        "metrics-check",
        &[
            "run",
            &url,
            "-n",
            "200",
            "-c",
            "2",
            "-t",
            "1",
            "--check",
            "status == 201",
        ],
    );
    let failed = result["requests"]["check_failed"]
        .as_u64()
        .expect("check_failed");
    assert_eq!(failed, 200, "{result}");
    assert_eq!(
        requests(&text, &["outcome=\"check_failed\"", "code=\"200\""]),
        failed,
        "{text}"
    );
    assert_eq!(requests(&text, &["outcome=\"success\""]), 0, "{text}");
}

#[test]
fn a_scenario_labels_its_requests_by_step() {
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let dir = temp_dir("metrics-steps");
    let scenario = dir.join("shop.toml");
    std::fs::write(
        &scenario,
        format!(
            "[[group]]\nname = \"browse\"\nconnections = 2\n\n\
             [[group.step]]\nname = \"home\"\nurl = \"{base}/\"\n\n\
             [[group.step]]\nname = \"page\"\nurl = \"{base}/1k.html\"\n"
        ),
    )
    .expect("scenario file");
    let (result, text) = final_values(
        "metrics-steps-run",
        &[
            "run",
            "--scenario",
            scenario.to_str().expect("utf-8"),
            "-n",
            "300",
            "-t",
            "1",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    let step = |index: usize| {
        result["targets"][index]["name"]
            .as_str()
            .unwrap_or_else(|| panic!("a step name in {result}"))
            .to_string()
    };
    for index in 0..2 {
        let label = format!("step=\"{}\"", step(index));
        let place = format!("target=\"{}\"", index + 1);
        assert_eq!(
            requests(&text, &[&label, &place, "outcome=\"success\""]),
            result["targets"][index]["success"]
                .as_u64()
                .expect("success"),
            "{text}"
        );
    }
    assert_eq!(
        requests(&text, &[]),
        result["requests"]["success"].as_u64().expect("success")
    );
}

#[test]
fn a_mix_carries_its_target_labels_while_it_runs_not_only_at_the_end() {
    // A new label set at the end would make Prometheus's rate() of the
    // unlabelled series drop and the labelled ones appear at full count.
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let dir = temp_dir("metrics-targets-live");
    let targets = dir.join("targets.txt");
    std::fs::write(&targets, format!("GET {base}/\n\nGET {base}/json\n")).expect("targets file");
    let port = free_port();
    let mut child = Command::new(binary())
        .args(["run", "--targets", targets.to_str().expect("utf-8")])
        .args(["-d", "6s", "-c", "2", "-t", "1", "--quiet"])
        .args(["--metrics", &format!("127.0.0.1:{port}")])
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("stampede starts");
    // A scrape with responses in it, well before the 6 s are up.
    let text = wait_for(Duration::from_secs(4), || {
        http_get(port, "/metrics").filter(|text| requests(text, &[]) > 0)
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let text = text.expect("a scrape with responses during the run");
    let samples: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("stampede_requests_total{"))
        .collect();
    assert!(!samples.is_empty(), "{text}");
    assert!(
        samples.iter().all(|line| line.contains("target=\"")),
        "every sample names its target during the run: {text}"
    );
    assert!(requests(&text, &["target=\"1\""]) > 0, "{text}");
    assert!(requests(&text, &["target=\"2\""]) > 0, "{text}");
}
