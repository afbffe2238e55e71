//! The built-in target's HTTP/3 (`serve --http3`) against an independent
//! client: oha built with `--features http3` (Debian's h2load and curl have
//! no HTTP/3). Every request oha sends must be an HTTP/3 stream the target
//! counts and answers 200, on the routes HTTP/1.1 and HTTP/2 serve.
//!
//! oha's HTTP/3 build is long (`cargo install oha --locked --features
//! http3`), so CI does not install it: the test skips without oha, and
//! fails under STAMPEDE_REQUIRE_TOOLS=1 as every outside tool does.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{skip_or_fail, spawn_target, text, TargetConfig};
use std::process::Command;

// oha's HTTP/3 build (`cargo install oha --locked --features http3`) took
// 1 h 38 min on this 2-core machine: more than CI's whole budget, so this
// interop test is opt-in (`cargo test --test http3_target_oha -- --ignored`)
// and recorded in docs/protocols.md; everything else about HTTP/3 runs in CI.
#[test]
#[ignore = "needs oha built with --features http3 (a long build): run with --ignored"]
fn oha_over_http3_is_served_every_request_by_the_built_in_target() {
    let oha = stampede_testkit::require_tool!("oha");
    let target = spawn_target(TargetConfig {
        threads: 2,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        http3: true,
        ..TargetConfig::default()
    });
    let port = target.local_addr().port();
    for (path, size) in [("/", 515u64), ("/bytes/2000", 2000)] {
        let before = target.stats();
        let output = Command::new(&oha)
            .args([
                "-n",
                "200",
                "-c",
                "4",
                "--http-version",
                "3",
                "--insecure",
                "--no-tui",
            ])
            .args(["--output-format", "json"])
            .arg(format!("https://127.0.0.1:{port}{path}"))
            .output()
            .expect("oha runs");
        let stderr = text(&output.stderr);
        if stderr.contains("http3") && !output.status.success() {
            skip_or_fail(
                &format!("oha was built without HTTP/3 ({})", stderr.trim()),
                "cargo install oha --locked --features http3",
            );
            return;
        }
        assert!(output.status.success(), "oha failed: {stderr}");
        let after = target.stats();
        assert_eq!(
            after.h3_streams_total - before.h3_streams_total,
            200,
            "{path}"
        );
        assert_eq!(after.requests_total - before.requests_total, 200, "{path}");
        let ok = |s: &stampede_testkit::StatsSnapshot| {
            s.requests_by_status.get(&200).copied().unwrap_or(0)
        };
        assert_eq!(ok(&after) - ok(&before), 200, "{path}: every answer a 200");
        assert_eq!(after.h2_streams_total, 0, "nothing went over TCP");
        let report: serde_json::Value =
            serde_json::from_str(&text(&output.stdout)).expect("oha's JSON report");
        let codes = &report["statusCodeDistribution"];
        assert_eq!(codes["200"], 200, "{path}: {codes}");
        let body = report["summary"]["sizePerRequest"].as_u64();
        assert_eq!(body, Some(size), "{path}: {}", report["summary"]);
    }
}
