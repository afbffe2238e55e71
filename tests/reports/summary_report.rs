//! Issue 16, the text summary and the run's self-checks: no false bottleneck
//! warning in the demo (the client's CPU is its own threads', not the
//! in-process target's), the TLS row of "Connection Times", and a `--targets`
//! report whose header, columns and maxima agree with the totals.

use stampede_testkit::{binary, run_stampede, spawn_target, temp_dir, ServeProcess, TargetConfig};
use std::process::Command;
use std::time::Duration;

/// The client's process summary in a result.
fn client(result: &serde_json::Value) -> serde_json::Value {
    result["monitor"]["processes"]
        .as_array()
        .expect("monitor.processes")
        .iter()
        .find(|p| p["role"] == "client")
        .cloned()
        .expect("the client is always monitored")
}

/// CPU seconds of each thread of `pid` by id, with its name, as /proc shows them.
fn thread_cpu(pid: u32) -> Vec<(u32, String, f64)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            let (comm, rest) = stat.split_at(stat.rfind(')')?);
            let comm = comm[comm.find('(')? + 1..].to_string();
            let fields: Vec<&str> = rest[1..].split_whitespace().collect();
            let ticks: u64 =
                fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            // USER_HZ is 100 on every Linux ABI.
            Some((tid, comm, ticks as f64 / 100.0))
        })
        .collect()
}

#[test]
fn demo_warns_of_no_bottleneck_and_counts_only_the_clients_threads() {
    let dir = temp_dir("demo");
    let json = dir.join("demo.json");
    let mut child = Command::new(binary())
        .args(["demo", "-d", "2s", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("stampede demo runs");
    // The truth from outside: every thread's CPU, polled until the end,
    // keeping each thread's last reading (threads leave /proc when they end).
    let mut seen: std::collections::HashMap<u32, (String, f64)> = Default::default();
    while child.try_wait().expect("wait").is_none() {
        for (tid, comm, cpu) in thread_cpu(child.id()) {
            seen.insert(tid, (comm, cpu));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child.wait_with_output().expect("demo output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        !stdout.contains("load generator used") && !stderr.contains("load generator used"),
        "a false bottleneck warning: {stdout}"
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("demo.json written"))
            .expect("valid JSON");
    let threads = result["plan"]["threads"].as_f64().expect("plan.threads");
    let me = client(&result);
    let mean = me["cpu_pct_mean"].as_f64().expect("cpu_pct_mean");
    // The workers (plus the aggregator, which mostly sleeps) cannot use more
    // than their own cores.
    assert!(
        mean > 0.0 && mean <= 100.0 * threads + 10.0,
        "client CPU {mean}% on {threads} worker thread(s): {me}"
    );
    let sum = |name: &str| -> f64 {
        seen.values()
            .filter(|(comm, _)| comm == name)
            .map(|(_, cpu)| cpu)
            .sum()
    };
    let (workers, target) = (sum("stampede-worker"), sum("stampede-target"));
    let aggregator = sum("stampede");
    let counted = me["cpu_user_s"].as_f64().unwrap() + me["cpu_sys_s"].as_f64().unwrap();
    eprintln!(
        "client {counted:.2} s; from /proc: workers {workers:.2} s, aggregator {aggregator:.2} s, target {target:.2} s"
    );
    // The last 10 ms poll may miss a little of each thread; ticks are 10 ms.
    let slack = 0.05;
    assert!(
        counted >= workers - slack,
        "the workers' {workers:.2} s are the client's, {counted:.2} s counted"
    );
    assert!(
        counted <= workers + aggregator + 0.3 * target + slack,
        "{counted:.2} s counted for the client: the target's {target:.2} s \
         is in it (workers {workers:.2} s, aggregator {aggregator:.2} s)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plain_run_counts_its_cpu_in_its_own_threads() {
    // No in-process target here: the engine's threads are (nearly) all of
    // the process's CPU, and the per-1k figure is still there.
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(binary(), &[&url, "-d", "1s", "-c", "4", "-t", "1"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let me = client(run.result());
    let cpu = me["cpu_user_s"].as_f64().unwrap() + me["cpu_sys_s"].as_f64().unwrap();
    assert!(cpu > 0.0, "the worker's CPU is counted: {me}");
    assert!(me["cpu_s_per_1k_requests"].as_f64().is_some(), "{me}");
}

/// The "Connection Times" row that starts with `label`, if any.
fn breakdown_row<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines()
        .find(|line| line.trim_start().starts_with(label))
}

#[test]
fn connection_times_show_the_tls_handshake_of_a_tls_run() {
    let dir = temp_dir("tls-row");
    let cert = dir.join("ca.pem");
    let tls = ServeProcess::start(&["--tls", "--write-cert", cert.to_str().unwrap()]);
    let https = format!("https://localhost:{}/index.html", tls.port);
    let run = run_stampede(
        binary(),
        &[
            &https,
            "--cacert",
            cert.to_str().unwrap(),
            "-n",
            "100",
            "-c",
            "3",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/breakdown/tls/count"), 3);
    let stdout = run.stdout();
    let row = breakdown_row(&stdout, "TLS handshake:")
        .unwrap_or_else(|| panic!("no TLS row in Connection Times: {stdout}"));
    assert!(row.trim_end().ends_with(" 3"), "count column: {row}");
    // Rows in ab's order: Connect, TLS, Waiting, Service, Total.
    let at = |label: &str| stdout.find(label).unwrap_or(usize::MAX);
    assert!(at("Connect:") < at("TLS handshake:"), "{stdout}");
    assert!(at("TLS handshake:") < at("Waiting:"), "{stdout}");
    // A plain run has no handshake and no TLS row.
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let plain = run_stampede(
        binary(),
        &[
            &format!("http://{}/", target.local_addr()),
            "-n",
            "50",
            "-c",
            "2",
        ],
    );
    assert_eq!(plain.count("/breakdown/tls/count"), 0);
    assert!(breakdown_row(&plain.stdout(), "Connect:").is_some());
    assert!(
        breakdown_row(&plain.stdout(), "TLS handshake:").is_none(),
        "{}",
        plain.stdout()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_targets_report_agrees_with_its_totals() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let dir = temp_dir("targets-report");
    let base = format!("http://{}", target.local_addr());
    let file = dir.join("targets.txt");
    let html = dir.join("targets.html");
    std::fs::write(
        &file,
        format!("GET {base}/index.html\nweight=3\n\nGET {base}/status/503\n"),
    )
    .unwrap();
    let run = run_stampede(
        binary(),
        &[
            "--targets",
            file.to_str().unwrap(),
            "-d",
            "1s",
            "--warmup",
            "500ms",
            "-c",
            "4",
            "-t",
            "2",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let result = run.result();
    let targets = result["targets"].as_array().expect("targets").clone();
    assert_eq!(targets.len(), 2);
    let sum = |key: &str| -> u64 { targets.iter().map(|t| t[key].as_u64().unwrap()).sum() };
    let requests = &result["requests"];
    let total = |key: &str| requests[key].as_u64().unwrap();
    assert_eq!(sum("success"), total("success"), "{result}");
    assert_eq!(sum("failed_status"), total("failed_status"), "{result}");
    assert_eq!(sum("errors"), total("errors"), "{result}");
    assert_eq!(sum("finished"), total("completed") + total("errors"));
    assert!(targets[1]["failed_status"].as_u64().unwrap() > 0);
    assert_eq!(
        targets[1]["errors"], 0,
        "a 503 is a failed status, not an error"
    );
    let run_max = result["latency_us"]["max"].as_u64().unwrap();
    let run_min = result["latency_us"]["min"].as_u64().unwrap();
    for t in &targets {
        let max = t["latency_us"]["max"].as_u64().unwrap();
        let min = t["latency_us"]["min"].as_u64().unwrap();
        assert!(
            max <= run_max,
            "per-target max {max} > run max {run_max}: {t}"
        );
        assert!(
            min >= run_min,
            "per-target min {min} < run min {run_min}: {t}"
        );
    }
    let stdout = run.stdout();
    let header = stdout.lines().next().unwrap_or_default();
    assert!(
        header.contains("2 targets")
            && header.contains("/index.html")
            && header.contains("/status/503"),
        "the header names every target: {header}"
    );
    assert!(
        header.contains(&format!(
            "2 targets on {base}: GET /index.html (weight 3), GET /status/503 (weight 1)"
        )),
        "the shared origin once, then each path with its weight: {header}"
    );
    // Connections opened in warm-up are not measured: no row of zeros.
    if result["breakdown"]["connect"]["count"] == 0 {
        let connect = breakdown_row(&stdout, "Connect:").expect("a Connect row");
        assert!(
            connect.contains('—') && !connect.contains("0us"),
            "{connect}"
        );
    }
    // The table's columns are the totals' terms: failed statuses and
    // (transport) errors, counted apart.
    let columns = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("Target"))
        .unwrap_or_else(|| panic!("no per-target table: {stdout}"));
    assert!(
        columns.contains("failed") && columns.contains("errors"),
        "{columns}"
    );
    let row = stdout
        .lines()
        .find(|l| l.contains("/status/503") && l.contains("GET") && !l.contains("targets"))
        .unwrap_or_else(|| panic!("no 503 row: {stdout}"));
    let failed = targets[1]["failed_status"].as_u64().unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    // GET URL weight finished req/s failed errors p50 p99
    assert_eq!(cells[5].replace(',', ""), failed.to_string(), "{row}");
    assert_eq!(cells[6], "0", "{row}");
    // The HTML report's targets table counts them apart too (it showed one
    // "error rate" that mixed the 503s in with transport errors).
    let page = std::fs::read_to_string(&html).expect("the HTML report");
    let section = &page[page.find(">Targets<").expect("a Targets section")..];
    let table = &section[..section.find("</table>").expect("its table")];
    assert!(
        table.contains(">failed<") && table.contains(">errors<") && !table.contains("error rate"),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plurals_in_the_plan_line() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(binary(), &[&url, "-n", "1", "-c", "1", "-t", "1"]);
    let plan_line = run.stdout().lines().nth(1).unwrap_or_default().to_string();
    assert!(
        plan_line.contains("1 request,")
            && plan_line.contains("1 connection,")
            && plan_line.contains("1 thread,"),
        "{plan_line}"
    );
    let run = run_stampede(binary(), &[&url, "-n", "4", "-c", "2", "-t", "2"]);
    let plan_line = run.stdout().lines().nth(1).unwrap_or_default().to_string();
    assert!(
        plan_line.contains("4 requests, 2 connections, 2 threads,"),
        "{plan_line}"
    );
}
