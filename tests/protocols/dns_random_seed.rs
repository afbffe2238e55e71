//! `--dns random` draws each worker's addresses from
//! a seed of its own run (not the same fixed seed every time), so runs
//! differ from their first connection and every address gets connections.
//! The built-in target listens on 0.0.0.0, so 127.0.0.1–3 all answer.

use stampede_testkit::{one_thread, run_clean, Run, Server};
use std::collections::{BTreeMap, BTreeSet};

const THREE: [&str; 3] = ["127.0.0.1", "127.0.0.2", "127.0.0.3"];

/// Connections per address in the result's `dns` object.
fn spread(run: &Run) -> BTreeMap<String, u64> {
    run.result()["dns"]["addresses"]
        .as_array()
        .unwrap_or_else(|| panic!("no dns.addresses in {}", run.result()))
        .iter()
        .map(|a| {
            let address = a["address"].as_str().expect("an address");
            let ip = address.rsplit_once(':').map_or(address, |(ip, _)| ip);
            (ip.to_string(), a["connections"].as_u64().expect("a count"))
        })
        .collect()
}

fn random_run(port: u16, extra: &[&str]) -> Run {
    let resolve = format!("svc.test:{port}:{}", THREE.join(","));
    let url = format!("http://svc.test:{port}/");
    let mut args = vec![url.as_str(), "--resolve", &resolve, "--dns", "random"];
    args.extend(extra);
    run_clean(&args)
}

#[test]
fn random_differs_between_runs_from_the_first_connection() {
    let target = Server::start("0.0.0.0:0".parse().expect("an address"), one_thread())
        .expect("the target starts");
    let port = target.local_addr().port();
    let mut first = BTreeSet::new();
    // One connection per run: the address of the first connection. Ten runs
    // all on one address by chance: 3 × (1/3)^10 ≈ 5e-5.
    for _ in 0..10 {
        let run = random_run(port, &["-n", "1", "-c", "1", "-t", "1"]);
        let used: Vec<_> = spread(&run)
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(ip, _)| ip)
            .collect();
        assert_eq!(used.len(), 1, "{}", run.result());
        first.insert(used[0].clone());
    }
    assert!(
        first.len() >= 2,
        "every run's first connection went to {first:?}"
    );
}

#[test]
fn random_gives_every_address_connections_and_varies() {
    let target = Server::start("0.0.0.0:0".parse().expect("an address"), one_thread())
        .expect("the target starts");
    let port = target.local_addr().port();
    let mut spreads = BTreeSet::new();
    for _ in 0..4 {
        let run = random_run(port, &["-n", "30", "-c", "30", "-t", "2"]);
        let spread = spread(&run);
        // 30 connections, each address 1/3: one with none has p ≈ 3 × (2/3)^30 ≈ 1.6e-5.
        for ip in THREE {
            assert!(spread.get(ip).copied().unwrap_or(0) > 0, "{spread:?}");
        }
        assert_eq!(spread.values().sum::<u64>(), 30, "{spread:?}");
        spreads.insert(spread.into_values().collect::<Vec<_>>());
    }
    // Four runs with the very same split by chance: Σ p⁴ over the splits is
    // at most (the likeliest split's p ≈ 0.027)³ ≈ 2e-5.
    assert!(spreads.len() >= 2, "every run split the same: {spreads:?}");
}
