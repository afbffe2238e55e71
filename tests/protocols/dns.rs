//! A name with several addresses: `--resolve HOST:PORT:A,B,C`
//! takes them all, `--dns round-robin|random` spreads new connections over
//! them (`first`, the default, keeps them on the first), on every path,
//! and the result's `dns` object says how many connections each address
//! got. nginx, listening on every loopback address, logs `$server_addr` per
//! connection, so the spread is counted by the server too; a dual-stack
//! nginx takes IPv4 and IPv6 at once. Re-resolving during a run
//! (`--dns-ttl`) and `localhost`'s own addresses are tests/protocols/dns_netns.rs.

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{
    free_port, require_tool, run_clean, spawn_target, stampede, temp_dir, text, Run, Server,
    TargetConfig,
};
use std::collections::BTreeMap;

const THREE: &str = "127.0.0.1,127.0.0.2,127.0.0.3";

/// Connections per address in the result's `dns` object.
fn result_spread(run: &Run) -> BTreeMap<String, u64> {
    let addresses = run.result()["dns"]["addresses"]
        .as_array()
        .unwrap_or_else(|| panic!("no dns.addresses in {}", run.result()));
    addresses
        .iter()
        .map(|a| {
            let address = a["address"].as_str().expect("an address").to_string();
            (address, a["connections"].as_u64().expect("a count"))
        })
        .collect()
}

/// Connections per server address in nginx's log of `$connection $server_addr`.
fn logged_spread(nginx: &Nginx) -> BTreeMap<String, u64> {
    let mut connections = BTreeMap::new();
    for fields in nginx.take_lines() {
        connections.insert(fields[0].clone(), fields[1].clone());
    }
    let mut spread = BTreeMap::new();
    for address in connections.into_values() {
        *spread.entry(address).or_insert(0) += 1;
    }
    spread
}

fn expected(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|&(a, n)| (a.to_string(), n)).collect()
}

#[test]
fn round_robin_spreads_connections_over_every_address() {
    let program = require_tool!("nginx");
    let dir = temp_dir("dns-nginx");
    let port = free_port();
    let setup = Setup {
        listens: vec![format!("{port}")],
        log_format: "$connection $server_addr",
        http_extra: "",
        netns: None,
    };
    let nginx = Nginx::start(&program, &dir, &setup, || {
        listening(&format!("127.0.0.3:{port}"))
    });
    let resolve = format!("svc.test:{port}:{THREE}");
    let url = format!("http://svc.test:{port}/");
    for io in ["auto", "epoll", "tokio"] {
        let what = format!("--io {io}");
        // Six connections at once: two on each address.
        let run = run_clean(&[
            &url,
            "--resolve",
            &resolve,
            "--dns",
            "round-robin",
            "--io",
            io,
            "-t",
            "1",
            "-c",
            "6",
            "-n",
            "60",
        ]);
        let spread = expected(&[("127.0.0.1", 2), ("127.0.0.2", 2), ("127.0.0.3", 2)]);
        assert_eq!(logged_spread(&nginx), spread, "{what}");
        let port_spread: BTreeMap<String, u64> = spread
            .iter()
            .map(|(a, &n)| (format!("{a}:{port}"), n))
            .collect();
        assert_eq!(result_spread(&run), port_spread, "{what}");
        assert_eq!(run.result()["dns"]["mode"], "round-robin", "{what}");
        // New connections take their turn too: twelve in a row, four each.
        run_clean(&[
            &url,
            "--resolve",
            &resolve,
            "--dns",
            "rr",
            "--io",
            io,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "60",
            "--conn-max-requests",
            "5",
        ]);
        let spread = expected(&[("127.0.0.1", 4), ("127.0.0.2", 4), ("127.0.0.3", 4)]);
        assert_eq!(logged_spread(&nginx), spread, "{what} with a lifetime");
    }
}

#[test]
fn first_keeps_every_connection_on_the_first_address_and_random_uses_all() {
    let program = require_tool!("nginx");
    let dir = temp_dir("dns-nginx-first");
    let port = free_port();
    let setup = Setup {
        listens: vec![format!("{port}")],
        log_format: "$connection $server_addr",
        http_extra: "",
        netns: None,
    };
    let nginx = Nginx::start(&program, &dir, &setup, || {
        listening(&format!("127.0.0.3:{port}"))
    });
    let resolve = format!("svc.test:{port}:{THREE}");
    let url = format!("http://svc.test:{port}/");
    let run = run_clean(&[
        &url,
        "--resolve",
        &resolve,
        "-t",
        "1",
        "-c",
        "6",
        "-n",
        "30",
    ]);
    assert_eq!(logged_spread(&nginx), expected(&[("127.0.0.1", 6)]));
    let spread = result_spread(&run);
    assert_eq!(spread[&format!("127.0.0.1:{port}")], 6);
    assert_eq!(spread[&format!("127.0.0.3:{port}")], 0, "listed, not used");
    // Thirty connections at random: every address gets some.
    let run = run_clean(&[
        &url,
        "--resolve",
        &resolve,
        "--dns",
        "random",
        "-t",
        "2",
        "-c",
        "30",
        "-n",
        "60",
    ]);
    let logged = logged_spread(&nginx);
    assert_eq!(logged.len(), 3, "{logged:?}");
    assert_eq!(logged.values().sum::<u64>(), 30);
    assert_eq!(result_spread(&run).values().sum::<u64>(), 30);
}

#[test]
fn http2_and_a_dual_stack_server() {
    let program = require_tool!("nginx");
    let dir = temp_dir("dns-nginx-dual");
    let port = free_port();
    let setup = Setup {
        listens: vec![
            format!("127.0.0.1:{port} http2"),
            format!("[::1]:{port} http2"),
        ],
        log_format: "$connection $server_addr",
        http_extra: "",
        netns: None,
    };
    let nginx = Nginx::start(&program, &dir, &setup, || {
        listening(&format!("127.0.0.1:{port}")) && listening(&format!("[::1]:{port}"))
    });
    let resolve = format!("svc.test:{port}:127.0.0.1,[::1]");
    let url = format!("http://svc.test:{port}/");
    let run = run_clean(&[
        &url,
        "--http2",
        "--resolve",
        &resolve,
        "--dns",
        "round-robin",
        "-t",
        "1",
        "-c",
        "4",
        "-n",
        "40",
    ]);
    assert_eq!(
        logged_spread(&nginx),
        expected(&[("127.0.0.1", 2), ("::1", 2)])
    );
    let spread = result_spread(&run);
    assert_eq!(spread[&format!("[::1]:{port}")], 2, "{spread:?}");
}

#[test]
fn the_built_in_target_on_every_address_and_the_summary() {
    let target = Server::start(
        "0.0.0.0:0".parse().expect("an address"),
        TargetConfig {
            threads: 1,
            ..TargetConfig::default()
        },
    )
    .expect("the target binds 0.0.0.0");
    let port = target.local_addr().port();
    let resolve = format!("svc.test:{port}:{THREE}");
    let url = format!("http://svc.test:{port}/");
    let run = run_clean(&[
        &url,
        "--resolve",
        &resolve,
        "--dns",
        "round-robin",
        "-t",
        "1",
        "-c",
        "3",
        "-n",
        "30",
    ]);
    assert!(result_spread(&run).values().all(|&n| n == 1));
    assert_eq!(target.stats().connections_accepted, 3);
    let out = stampede(&[
        "run",
        &url,
        "--resolve",
        &resolve,
        "--dns",
        "round-robin",
        "-t",
        "1",
        "-c",
        "3",
        "-n",
        "30",
        "--quiet",
    ]);
    let summary = text(&out.stdout);
    assert!(
        summary.contains(&format!("127.0.0.2:{port} (1)")),
        "{summary}"
    );
    // Without a spread the result has no dns object (one address).
    let local = spawn_target(stampede_testkit::one_thread());
    let plain = run_clean(&[&format!("http://{}/", local.local_addr()), "-n", "5"]);
    assert!(plain.result().get("dns").is_none());
}

#[test]
fn bad_dns_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (
            &["--resolve", "h:80:127.0.0.1,127.0.0.300"][..],
            "invalid --resolve 'h:80:127.0.0.1,127.0.0.300': '127.0.0.300' is not an IP address",
        ),
        (
            &["--dns", "nearest"][..],
            "invalid --dns 'nearest': expected first, round-robin or random",
        ),
        (
            &["--dns-ttl", "0"][..],
            "DNS re-resolve interval must be above zero (--dns-ttl)",
        ),
        (
            &["--dns-ttl", "soon"][..],
            "--dns-ttl: invalid duration 'soon'",
        ),
    ] {
        let mut all = vec!["run", "http://127.0.0.1:9/", "-n", "1"];
        all.extend(args);
        let out = stampede(&all);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}
