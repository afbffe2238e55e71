//! ab's Connect row over https includes the TLS handshake, as real ab's
//! does: the engine keeps one more distribution, the TCP connect
//! plus the handshake summed per connection (`breakdown.connect_tls`), on
//! every path that does TLS, and `stampede ab` prints it as Connect. So, as
//! in ab's own table, Connect + Processing makes up Total without
//! keep-alive (each request opens its connection).

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, event_loop_or_skip, run_stampede, spawn_target, stampede, text, TargetConfig,
    EVENT_LOOPS,
};

fn tls_target() -> stampede_testkit::ServerHandle {
    spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        ..TargetConfig::default()
    })
}

fn figure(summary: &serde_json::Value, key: &str) -> f64 {
    summary[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {summary}"))
}

#[test]
fn every_tls_connection_has_its_connect_and_handshake_summed() {
    let target = tls_target();
    let url = format!("https://localhost:{}/", target.local_addr().port());
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let args = [
            url.as_str(),
            "--insecure",
            "--no-keepalive",
            "-n",
            "40",
            "-c",
            "4",
            "--io",
            io,
        ];
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        let breakdown = &run.result()["breakdown"];
        let (both, connect, tls) = (
            &breakdown["connect_tls"],
            &breakdown["connect"],
            &breakdown["tls"],
        );
        let opened = run.count("/connections/opened") as f64;
        assert_eq!(figure(both, "count"), opened, "--io {io}: {breakdown}");
        assert_eq!(figure(tls, "count"), opened, "--io {io}");
        // The mean of the sums is the sum of the means (to the histograms'
        // precision); the extremes are not.
        let sum_of_means = figure(connect, "mean") + figure(tls, "mean");
        let mean = figure(both, "mean");
        assert!(
            (mean - sum_of_means).abs() <= sum_of_means * 0.01 + 5.0,
            "--io {io}: {mean} vs {sum_of_means}"
        );
        assert!(figure(both, "min") >= figure(tls, "min"), "--io {io}");
        assert!(figure(both, "max") >= figure(connect, "max"), "--io {io}");
    }
}

/// The Connect, Processing and Total rows of ab's Connection Times
/// (min, mean, sd, median, max each).
fn rows(out: &str) -> Vec<(String, Vec<f64>)> {
    let table = out
        .split("Connection Times (ms)")
        .nth(1)
        .unwrap_or_else(|| panic!("no Connection Times in {out}"));
    table
        .lines()
        .skip(2)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| {
            let (label, figures) = line.split_once(':').expect("a row");
            let figures = figures
                .split_whitespace()
                .map(|f| f.parse().expect("a figure"))
                .collect();
            (label.to_string(), figures)
        })
        .collect()
}

#[test]
fn the_ab_table_keeps_ab_shape_and_connect_holds_the_handshake() {
    let target = tls_target();
    let url = format!("https://localhost:{}/", target.local_addr().port());
    let out = stampede(&["ab", "-n", "60", "-c", "4", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = text(&out.stdout);
    let rows = rows(&out);
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["Connect", "Processing", "Waiting", "Total"],
        "{out}"
    );
    assert!(rows.iter().all(|(_, f)| f.len() == 5), "{out}");
    // Without -k every request opens its connection: as in real ab's table,
    // Connect (with the handshake) plus Processing is Total, to rounding
    // (and a little scheduling: generous for a busy machine).
    let mean = |row: usize| rows[row].1[1];
    let (connect, processing, total) = (mean(0), mean(1), mean(3));
    let gap = (total - connect - processing).abs();
    assert!(gap <= 3.0_f64.max(total * 0.15), "{out}");
}
