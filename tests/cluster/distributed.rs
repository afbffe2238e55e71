//! Distributed runs without a cluster: network namespaces on this machine
//! stand in for the machines. One namespace runs the built-in target on a
//! bridge (10.199.0.1/24); three agent namespaces are joined to it by veth
//! pairs. The addresses exist only inside these namespaces (no route out), so
//! no packet leaves the machine. Three agents run with one `--start-at`,
//! `stampede merge` combines them, and the test checks that the merged count
//! equals the target's own count (`/stats`), that the merged percentiles are
//! the percentiles of the union of the three histograms, and that the agents'
//! time series fall on the same seconds.
//!
//! Needs root and `ip netns` (iproute2) and curl: ignored by default and run
//! by .ci/run with `--ignored`; without them it prints "SKIPPED ..." and
//! passes, or fails under STAMPEDE_REQUIRE_TOOLS=1 (as .ci/run sets it).

use stampede_metrics::{
    new_latency_histogram, parse_timestamp, signed_millis, LatencySummary, RunResult,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

const TARGET_ADDR: &str = "10.199.0.1";
const PORT: &str = "8080";
const AGENTS: usize = 3;

/// The namespaces and processes of one test; removed on every way out
/// (including a failed assertion, which unwinds through `drop`).
struct Lab {
    namespaces: Vec<String>,
    children: Vec<Child>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Deleting a namespace removes its veth ends and bridge with it.
        for name in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn in_netns(namespace: &str, program: &str, args: &[&str]) -> Command {
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", namespace, program])
        .args(args);
    command
}

/// Whether this machine can run the test: root, `ip` and curl. When not, the
/// test skips with a notice, or fails under STAMPEDE_REQUIRE_TOOLS=1 (.ci/run).
fn available() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        stampede_testkit::skip_or_fail(
            "creating network namespaces needs root",
            "run it as root (.ci/run does)",
        );
        return false;
    }
    ["ip", "curl"]
        .iter()
        .all(|tool| stampede_testkit::tool_or_skip(tool).is_some())
}

/// Builds the namespaces: target `<tag>t` with bridge br0, agents `<tag>a<i>`.
fn build_lab(tag: &str) -> Result<Lab, String> {
    let target = format!("{tag}t");
    let mut lab = Lab {
        namespaces: Vec::new(),
        children: Vec::new(),
    };
    ip(&["netns", "add", &target])?;
    lab.namespaces.push(target.clone());
    ip(&["-n", &target, "link", "set", "lo", "up"])?;
    ip(&["-n", &target, "link", "add", "br0", "type", "bridge"])?;
    ip(&[
        "-n",
        &target,
        "addr",
        "add",
        &format!("{TARGET_ADDR}/24"),
        "dev",
        "br0",
    ])?;
    ip(&["-n", &target, "link", "set", "br0", "up"])?;
    for index in 0..AGENTS {
        let agent = format!("{tag}a{index}");
        ip(&["netns", "add", &agent])?;
        lab.namespaces.push(agent.clone());
        // Both ends are created inside namespaces: nothing appears on the host.
        let near = format!("vt{index}");
        ip(&[
            "-n", &target, "link", "add", &near, "type", "veth", "peer", "name", "eth0", "netns",
            &agent,
        ])?;
        ip(&["-n", &target, "link", "set", &near, "master", "br0", "up"])?;
        let address = format!("10.199.0.{}/24", 11 + index);
        ip(&["-n", &agent, "addr", "add", &address, "dev", "eth0"])?;
        ip(&["-n", &agent, "link", "set", "eth0", "up"])?;
        ip(&["-n", &agent, "link", "set", "lo", "up"])?;
    }
    Ok(lab)
}

/// The target's `/stats` request count, asked from an agent's namespace.
fn target_requests(agent_ns: &str) -> Option<u64> {
    let url = format!("http://{TARGET_ADDR}:{PORT}/stats");
    let output = in_netns(agent_ns, "curl", &["-sf", "--max-time", "2", &url])
        .output()
        .ok()?;
    let stats: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    stats["requests_total"].as_u64()
}

fn wait_with_deadline(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child
        .wait_with_output()
        .expect("collecting an agent's output")
}

fn read_result(path: &Path) -> RunResult {
    let text = std::fs::read_to_string(path).expect("an agent's result file");
    RunResult::from_json(&text).expect("a stampede.result/1")
}

#[test]
#[ignore = "needs root, ip netns and curl: run by .ci/run with --ignored"]
fn three_agents_in_network_namespaces_merge_exactly() {
    if !available() {
        return;
    }
    let tag = format!("stp{}", std::process::id() % 100_000);
    let mut lab = match build_lab(&tag) {
        Ok(lab) => lab,
        Err(why) => {
            stampede_testkit::skip_or_fail(
                &format!("network namespaces are unavailable here ({why})"),
                "run it as root on a kernel that allows `ip netns add` (not in an unprivileged container)",
            );
            return;
        }
    };
    let binary = env!("CARGO_BIN_EXE_stampede");
    let target_ns = lab.namespaces[0].clone();
    let agent_ns: Vec<String> = lab.namespaces[1..].to_vec();
    let server = in_netns(
        &target_ns,
        binary,
        &[
            "serve",
            "--bind",
            TARGET_ADDR,
            "--port",
            PORT,
            "--threads",
            "2",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("starting the target");
    lab.children.push(server);
    let ready = Instant::now() + Duration::from_secs(10);
    let before = loop {
        if let Some(count) = target_requests(&agent_ns[0]) {
            break count;
        }
        assert!(Instant::now() < ready, "the target did not come up");
        std::thread::sleep(Duration::from_millis(100));
    };

    let dir = std::env::temp_dir().join(format!("stampede-distributed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let start_at = stampede_metrics::format_timestamp(SystemTime::now() + Duration::from_secs(2));
    let url = format!("http://{TARGET_ADDR}:{PORT}/");
    let outputs: Vec<PathBuf> = (0..AGENTS)
        .map(|i| dir.join(format!("out-{i}.json")))
        .collect();
    // 1500 requests/s and 4500 requests in all: each agent sends 1500 at
    // 500/s, about 3 s, and waits for every answer, so the counts are exact.
    let agents: Vec<Child> = (0..AGENTS)
        .map(|i| {
            let share = format!("{i}/{AGENTS}");
            let json = outputs[i].to_string_lossy().to_string();
            let words = [
                "run",
                &url,
                "-r",
                "1500",
                "-n",
                "4500",
                "-c",
                "30",
                "-t",
                "1",
                "-d",
                "30s",
                "--agent",
                &share,
                "--start-at",
                &start_at,
                "--quiet",
                "--json",
                &json,
            ];
            in_netns(&agent_ns[i], binary, &words)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("starting an agent")
        })
        .collect();
    // Every agent is waited for before any is judged, so none outlives the test.
    let finished: Vec<Output> = agents
        .into_iter()
        .map(|agent| wait_with_deadline(agent, Duration::from_secs(60)))
        .collect();
    for (i, output) in finished.iter().enumerate() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "agent {i}: {stderr}");
    }
    let after = target_requests(&agent_ns[0]).expect("the target's /stats");
    // The first /stats answer is counted by the second one, not by itself.
    let served = after - before - 1;

    let merged_path = dir.join("merged.json");
    let mut merge = Command::new(binary);
    merge.arg("merge").args(&outputs);
    merge.args(["--json".as_ref(), merged_path.as_os_str()]);
    let merged_run = merge.output().expect("running stampede merge");
    assert!(
        merged_run.status.success(),
        "merge: {}",
        String::from_utf8_lossy(&merged_run.stderr)
    );
    let merged = read_result(&merged_path);
    let results: Vec<RunResult> = outputs.iter().map(|p| read_result(p)).collect();

    // 1. Every response the target produced is in the merge, and no more.
    assert_eq!(merged.requests.sent, 4500);
    assert_eq!(merged.requests.unfinished, 0);
    assert_eq!(
        merged.requests.completed, served,
        "merged vs the target's /stats"
    );

    // 2. The merged percentiles are those of the union of the agents' samples.
    let mut union = new_latency_histogram();
    for result in &results {
        union.add(result.latency_histogram().unwrap()).unwrap();
    }
    let (got, want) = (merged.latency_us, LatencySummary::of(&union));
    let percentiles = |s: &LatencySummary| {
        [
            s.min, s.p50, s.p66, s.p75, s.p80, s.p90, s.p95, s.p98, s.p99, s.p99_9, s.p99_99, s.max,
        ]
    };
    assert_eq!(percentiles(&got), percentiles(&want), "merged vs union");
    // Means went through JSON, whose default float parsing may be 1 ulp off.
    assert!((got.mean - want.mean).abs() <= 1e-9 * want.mean);
    assert!((got.stdev - want.stdev).abs() <= 1e-9 * want.stdev.max(1.0));
    assert_eq!(merged.latency_histogram().unwrap().len(), served);

    // 3. The agents started together, so their seconds are the same seconds.
    let starts: Vec<SystemTime> = results
        .iter()
        .map(|r| parse_timestamp(&r.started_at).unwrap())
        .collect();
    let earliest = *starts.iter().min().unwrap();
    let spread_ms = starts
        .iter()
        .map(|s| signed_millis(*s, earliest))
        .max()
        .unwrap();
    assert!(spread_ms < 500, "agents started {spread_ms} ms apart");
    let longest = results.iter().map(|r| r.timeseries.len()).max().unwrap();
    assert_eq!(merged.timeseries.len(), longest, "the series overlap");
    let per_second: u64 = merged.timeseries.iter().map(|p| p.completed).sum();
    assert_eq!(per_second, served);
    for (i, result) in results.iter().enumerate() {
        let agent = result.agent.as_ref().expect("agent recorded");
        assert_eq!((agent.index as usize, agent.count as usize), (i, AGENTS));
        assert!(agent.start_offset_ms.is_some_and(|ms| ms.abs() < 500));
    }
    println!(
        "distributed: {AGENTS} agents, {served} responses served = {} merged; p50 {} µs p99 {} µs; \
         starts within {spread_ms} ms; {} seconds overlap; merged rps {:.0}",
        merged.requests.completed,
        merged.latency_us.p50,
        merged.latency_us.p99,
        merged.timeseries.len(),
        merged.rps
    );
    let _ = std::fs::remove_dir_all(&dir);
}
