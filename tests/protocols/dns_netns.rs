//! Real name resolution in a network namespace of the test's own:
//! `ip netns exec` bind-mounts /etc/netns/NAME/hosts over /etc/hosts, so
//! the test decides what `localhost` and `svc.test` resolve to, and can
//! change it while a run goes on. nginx runs in the namespace too (its
//! loopback is the namespace's) and logs `$server_addr` per connection.
//!
//! - `localhost` as 127.0.0.1 and ::1: `--dns round-robin` takes both.
//! - `--dns-ttl`: the hosts file moves `svc.test` from 127.0.0.2 to
//!   127.0.0.3 mid-run; new connections follow, and the result counts both.
//!
//! Needs root and `ip netns` (iproute2) and nginx: without them it prints
//! "SKIPPED ..." and passes, or fails under STAMPEDE_REQUIRE_TOOLS=1.

use stampede_testkit::nginx as nginx_support;

use nginx_support::{Nginx, Setup};
use stampede_testkit::{binary, read_json, skip_or_fail, temp_dir, tool_or_skip};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Inside the namespace every port is free: this one is fixed.
const PORT: u16 = 8080;

/// A namespace with its own hosts file; removed on every way out.
struct Namespace {
    name: String,
    hosts: PathBuf,
}

impl Namespace {
    /// `None` (after the skip notice) when this machine cannot make one.
    fn create(tag: &str, hosts: &str) -> Option<Namespace> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            skip_or_fail(
                "creating network namespaces needs root",
                "run it as root (.ci/run does)",
            );
            return None;
        }
        tool_or_skip("ip")?;
        let name = format!("sd{tag}{}", std::process::id() % 100_000);
        let ok = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ok(&["netns", "add", &name]) {
            skip_or_fail(
                "`ip netns add` failed",
                "run it as root on a kernel that allows network namespaces",
            );
            return None;
        }
        let folder = PathBuf::from("/etc/netns").join(&name);
        std::fs::create_dir_all(&folder).expect("create /etc/netns/NAME");
        let namespace = Namespace {
            hosts: folder.join("hosts"),
            name,
        };
        namespace.set_hosts(hosts);
        assert!(ok(&["-n", &namespace.name, "link", "set", "lo", "up"]));
        Some(namespace)
    }

    /// Rewrites the hosts file in place (the bind mount follows the inode).
    fn set_hosts(&self, text: &str) {
        std::fs::write(&self.hosts, text).expect("write the namespace's hosts file");
    }

    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name]).arg(program);
        command
    }

    /// True when something listens on `addr` inside the namespace.
    fn listening(&self, addr: &str) -> bool {
        let (host, port) = addr.rsplit_once(':').expect("HOST:PORT");
        let host = host.trim_start_matches('[').trim_end_matches(']');
        // bash's /dev/tcp connects from inside the namespace.
        let probe = format!("exec 3<>/dev/tcp/{host}/{port}");
        self.command(Path::new("bash"))
            .args(["-c", &probe])
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
        let _ = std::fs::remove_dir_all(PathBuf::from("/etc/netns").join(&self.name));
    }
}

fn start_nginx(namespace: &Namespace, dir: &Path) -> Option<Nginx> {
    let program = tool_or_skip("nginx")?;
    let setup = Setup {
        listens: vec![format!("{PORT}"), format!("[::]:{PORT} ipv6only=on")],
        log_format: "$connection $server_addr",
        http_extra: "",
        netns: Some(&namespace.name),
    };
    Some(Nginx::start(&program, dir, &setup, || {
        namespace.listening(&format!("127.0.0.1:{PORT}"))
            && namespace.listening(&format!("[::1]:{PORT}"))
    }))
}

/// The server address of each connection, in nginx's order of accepting
/// them (its `$connection` numbers ascend).
fn logged_in_order(nginx: &Nginx) -> Vec<String> {
    let mut by_number = BTreeMap::new();
    for fields in nginx.take_lines() {
        let number: u64 = fields[0].parse().expect("$connection");
        by_number.insert(number, fields[1].clone());
    }
    by_number.into_values().collect()
}

fn connections_of(result: &serde_json::Value, address: &str) -> u64 {
    result["dns"]["addresses"]
        .as_array()
        .and_then(|all| all.iter().find(|a| a["address"] == address))
        .and_then(|a| a["connections"].as_u64())
        .unwrap_or_else(|| panic!("{address} not in {}", result["dns"]))
}

#[test]
fn localhost_resolves_to_both_families_and_round_robin_takes_both() {
    let Some(namespace) = Namespace::create("l", "127.0.0.1 localhost\n::1 localhost\n") else {
        return;
    };
    let dir = temp_dir("dns-netns-localhost");
    let Some(nginx) = start_nginx(&namespace, &dir) else {
        return;
    };
    let json = dir.join("result.json");
    let url = format!("http://localhost:{PORT}/");
    let out = namespace
        .command(binary())
        .args([
            &url,
            "--dns",
            "round-robin",
            "-t",
            "1",
            "-c",
            "4",
            "-n",
            "40",
            "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("stampede runs in the namespace");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = read_json(&json);
    assert_eq!(result["requests"]["errors"], 0);
    assert_eq!(connections_of(&result, &format!("127.0.0.1:{PORT}")), 2);
    assert_eq!(connections_of(&result, &format!("[::1]:{PORT}")), 2);
    let mut logged = logged_in_order(&nginx);
    logged.sort();
    assert_eq!(logged, ["127.0.0.1", "127.0.0.1", "::1", "::1"]);
}

#[test]
fn dns_ttl_follows_a_name_that_moves_during_the_run() {
    let Some(namespace) = Namespace::create("t", "127.0.0.2 svc.test\n") else {
        return;
    };
    let dir = temp_dir("dns-netns-ttl");
    let Some(nginx) = start_nginx(&namespace, &dir) else {
        return;
    };
    let json = dir.join("result.json");
    let url = format!("http://svc.test:{PORT}/");
    // Connections are retired every 20 responses, so new ones keep
    // coming; the name is resolved again every 100 ms.
    let mut child = namespace
        .command(binary())
        .args([&url, "--dns-ttl", "100ms", "--conn-max-requests", "20"])
        .args(["-t", "1", "-c", "2", "-d", "3s", "--quiet", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("stampede runs in the namespace");
    std::thread::sleep(Duration::from_millis(1200));
    namespace.set_hosts("127.0.0.3 svc.test\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().ok().flatten().is_none() {
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    let result = read_json(&json);
    assert_eq!(result["requests"]["errors"], 0, "{}", result["errors"]);
    let before = connections_of(&result, &format!("127.0.0.2:{PORT}"));
    let after = connections_of(&result, &format!("127.0.0.3:{PORT}"));
    assert!(before >= 2 && after >= 2, "{}", result["dns"]);
    assert!(result["dns"]["resolutions"].as_u64().unwrap_or(0) >= 5);
    // nginx saw the move: the first connections on the old address, the
    // last on the new. A connection opened just before the move may be
    // accepted just after a new one (two connect at once), not later.
    let logged = logged_in_order(&nginx);
    assert_eq!(
        logged.first().map(String::as_str),
        Some("127.0.0.2"),
        "{logged:?}"
    );
    assert_eq!(
        logged.last().map(String::as_str),
        Some("127.0.0.3"),
        "{logged:?}"
    );
    let first_new = logged.iter().position(|a| a == "127.0.0.3").unwrap_or(0);
    let stragglers = logged[first_new..]
        .iter()
        .filter(|a| *a == "127.0.0.2")
        .count();
    assert!(stragglers <= 1, "{logged:?}");
    // nginx logs requests, so it sees each connection that carried one; a
    // connection a slot opened as the run's deadline came (one per slot at
    // most, -c 2) carried none (CI saw 6,034 opened and 6,033 logged).
    let (opened, logged) = (before + after, logged.len() as u64);
    assert!(
        logged <= opened && opened <= logged + 2,
        "{opened} opened, {logged} carried a request"
    );
}
