//! The obvious use of HTTP/3: the same target over HTTP/2 and over HTTP/3,
//! then `compare` of the two results. The comparison works (figures side by
//! side) and says what differs between the plans: the protocol.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{run_stampede, spawn_target, stampede, temp_dir, text, TargetConfig};
use std::path::Path;

#[test]
fn compare_of_an_h2_run_against_an_h3_run_names_the_protocols() {
    let binary = Path::new(env!("CARGO_BIN_EXE_stampede"));
    let target = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        http3: true,
        ..TargetConfig::default()
    });
    let url = format!("https://127.0.0.1:{}/", target.local_addr().port());
    let dir = temp_dir("h3-compare");
    let mut files = Vec::new();
    for (protocol, name) in [("--http2", "h2.json"), ("--http3", "h3.json")] {
        let file = dir.join(name);
        let run = run_stampede(
            binary,
            &[
                &url,
                protocol,
                "--insecure",
                "-c",
                "2",
                "--streams",
                "4",
                "-n",
                "200",
            ],
        );
        assert_eq!(
            run.count("/requests/success"),
            200,
            "{protocol}: {}",
            run.stderr()
        );
        std::fs::write(&file, run.result().to_string()).expect("write the result");
        files.push(file);
    }
    let served = target.stats();
    assert_eq!(
        (served.h2_streams_total, served.h3_streams_total),
        (200, 200)
    );
    let json = dir.join("delta.json");
    let output = stampede(&[
        "compare",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("p99") && all.contains("goodput"), "{all}");
    assert!(all.contains("http_version 2 vs h3"), "{all}");
    let delta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("compare wrote JSON"))
            .expect("valid JSON");
    // The file names hold "h3" too: the plans' difference is what is checked.
    assert!(
        delta.to_string().contains("http_version 2 vs h3"),
        "{delta}"
    );
}
