//! `stampede experiment` names the client's own retransmits (tcp_info of
//! its sockets) when packets are really lost: in a network
//! namespace the test creates, whose loopback has a 1500-byte MTU and a
//! token bucket (`tc qdisc … tbf`) too small for the load, so that the
//! queue drops segments and TCP retransmits them. (netem's `loss` would be
//! the obvious tool; kernels without sch_netem, as this project's CI runs
//! on, have tbf.) Nothing leaves the namespace.
//!
//! Needs root, `ip` and `tc` (iproute2): without them it prints
//! "SKIPPED ..." and passes, or fails under STAMPEDE_REQUIRE_TOOLS=1.

use stampede_testkit::{binary, temp_dir};
use std::process::{Command, Output};

/// A network namespace, deleted on every way out.
struct Namespace(String);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

fn run(program: &str, args: &[&str]) -> Result<Output, String> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// The namespace with its lossy loopback, or why it could not be made.
fn lossy_namespace(name: &str) -> Result<Namespace, String> {
    run("ip", &["netns", "add", name])?;
    let namespace = Namespace(name.to_string());
    run(
        "ip",
        &["-n", name, "link", "set", "lo", "mtu", "1500", "up"],
    )?;
    // 20 Mbit/s with a 6000-byte queue: a 200 KB body from each of four
    // connections overflows it at once.
    run(
        "ip",
        &[
            "netns", "exec", name, "tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate",
            "20mbit", "burst", "3000", "limit", "6000",
        ],
    )?;
    Ok(namespace)
}

/// Tcp `RetransSegs` of /proc/net/snmp inside the namespace.
fn retransmitted_segments(namespace: &str) -> u64 {
    let output = run("ip", &["netns", "exec", namespace, "cat", "/proc/net/snmp"])
        .expect("/proc/net/snmp in the namespace");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut lines = text.lines().filter(|l| l.starts_with("Tcp:"));
    let names = lines.next().expect("Tcp names").split_whitespace();
    let values = lines.next().expect("Tcp values").split_whitespace();
    names
        .zip(values)
        .find(|(name, _)| *name == "RetransSegs")
        .and_then(|(_, value)| value.parse().ok())
        .expect("RetransSegs")
}

#[test]
fn experiment_names_the_client_sockets_retransmits_on_a_lossy_link() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        stampede_testkit::skip_or_fail(
            "creating a network namespace needs root",
            "run it as root (.ci/run does)",
        );
        return;
    }
    if stampede_testkit::tool_or_skip("ip").is_none()
        || stampede_testkit::tool_or_skip("tc").is_none()
    {
        return;
    }
    let name = format!("stpx{}", std::process::id() % 100_000);
    let namespace = match lossy_namespace(&name) {
        Ok(namespace) => namespace,
        Err(why) => {
            stampede_testkit::skip_or_fail(
                &format!("a lossy network namespace cannot be made here ({why})"),
                "run it as root on a kernel with network namespaces and tbf",
            );
            return;
        }
    };
    let dir = temp_dir("experiment-netns");
    let body = dir.join("body.txt");
    std::fs::write(&body, "x".repeat(200_000)).unwrap();
    let json = dir.join("experiment.json");
    let stampede = binary();
    let stampede = stampede.to_str().unwrap();
    // The namespace is the test's own: its port 8080 is free.
    let template = format!("{stampede} serve --port 8080 --threads {{threads}}");
    let before = retransmitted_segments(&namespace.0);
    let output = Command::new("ip")
        .args(["netns", "exec", &namespace.0, stampede, "experiment", "-q"])
        .args(["--json", json.to_str().unwrap(), "--server", &template])
        .args(["--vary", "threads=2", "--repeat", "1", "--settle", "0s"])
        .args(["--", "run", "http://127.0.0.1:8080/echo", "-m", "POST"])
        .args([
            "-D",
            body.to_str().unwrap(),
            "-c",
            "4",
            "-t",
            "1",
            "-d",
            "2s",
        ])
        .output()
        .expect("ip netns exec stampede experiment");
    stampede_testkit::assert_succeeded(&output);
    let kernel = retransmitted_segments(&namespace.0) - before;
    let doc = stampede_testkit::read_json(&json);
    let server = &doc["variants"][0]["server"];
    let tcp = &server["client_tcp"];
    eprintln!("client_tcp: {tcp}; the namespace retransmitted {kernel} segments");
    assert_eq!(tcp["sockets"].as_f64(), Some(4.0), "{tcp}");
    let retransmits = tcp["retransmits"].as_f64().unwrap();
    // The client's sockets are some of the namespace's: more than none,
    // no more than the kernel counted for all of them.
    assert!(retransmits >= 1.0, "{tcp}");
    assert!(retransmits <= kernel as f64, "{retransmits} > {kernel}");
    assert!(tcp["rtt_us_p99"].as_f64().unwrap() > 0.0, "{tcp}");
    let named = server["bottleneck"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["evidence"][0]["counter"] == "client tcp_info total_retrans")
        .unwrap_or_else(|| panic!("not named: {}", server["bottleneck"]));
    assert_eq!(named["evidence"][0]["value"].as_f64(), Some(retransmits));
    assert!(
        named["cause"].as_str().unwrap().starts_with(&format!(
            "the client's sockets retransmitted {retransmits:.0} segments"
        )),
        "{named}"
    );
}
