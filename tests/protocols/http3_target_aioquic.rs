//! The built-in target's HTTP/3 (`serve --http3`) against an independent
//! client: aioquic's QUIC and HTTP/3 stack (PyPI), driven by the small
//! client in tests/http3_support/h3_get.py (aioquic's own example client is
//! not in its wheel). Debian's h2load and curl have no HTTP/3, and oha's
//! HTTP/3 build takes longer than CI's whole budget. Every request the
//! client sends must be an HTTP/3 stream the target counts and answers 200
//! with the route's body, on the routes HTTP/1.1 and HTTP/2 serve.
//!
//! The client runs on `python3` from PATH (.ci/run puts a venv with aioquic
//! first); without python3 or aioquic the test skips, and fails under
//! STAMPEDE_REQUIRE_TOOLS=1 as every outside tool does.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{skip_or_fail, spawn_target, text, TargetConfig};
use std::path::Path;
use std::process::Command;

/// The version .ci/run installs: the one this test was written against.
const AIOQUIC: &str = "aioquic==1.7.2";

#[test]
fn aioquic_over_http3_is_served_every_request_by_the_built_in_target() {
    let python = stampede_testkit::require_tool!("python3");
    let probe = Command::new(&python)
        .args(["-c", "import aioquic"])
        .output()
        .expect("python3 runs");
    if !probe.status.success() {
        skip_or_fail(
            &format!("{} cannot import aioquic", python.display()),
            &format!("pip install '{AIOQUIC}' (into the python3 on PATH)"),
        );
        return;
    }
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/http3_support/h3_get.py");
    let target = spawn_target(TargetConfig {
        threads: 2,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        http3: true,
        ..TargetConfig::default()
    });
    let port = target.local_addr().port();
    for (path, size) in [("/", 515u64), ("/bytes/2000", 2000)] {
        let before = target.stats();
        // 200 GETs over one QUIC connection, 4 streams at a time.
        let output = Command::new(&python)
            .arg(&client)
            .arg(format!("https://127.0.0.1:{port}{path}"))
            .args(["200", "4"])
            .output()
            .expect("the aioquic client runs");
        let stderr = text(&output.stderr);
        assert!(
            output.status.success(),
            "the aioquic client failed: {stderr}"
        );
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
            serde_json::from_str(&text(&output.stdout)).expect("the client's JSON line");
        assert_eq!(report["alpn"], "h3", "{report}");
        let statuses = report["statuses"].as_object().expect("statuses");
        assert_eq!(statuses.len(), 1, "{path}: only 200s: {report}");
        assert_eq!(report["statuses"]["200"]["count"], 200, "{path}: {report}");
        assert_eq!(
            report["statuses"]["200"]["sizes"],
            serde_json::json!([size]),
            "{path}: every body the route's size: {report}"
        );
    }
}
