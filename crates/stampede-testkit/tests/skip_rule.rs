//! The skip-or-fail rule, through libtest itself: this test binary runs its
//! own `probe` test again with a PATH that holds no tool. Without
//! `STAMPEDE_REQUIRE_TOOLS` the probe passes and its SKIPPED line reaches the
//! output although libtest captures a passing test's prints; with
//! `STAMPEDE_REQUIRE_TOOLS=1` it fails and names the tool and its install.

use std::process::{Command, Output};

/// Needs curl; run only by `rule_*` below (it is ignored by default).
#[test]
#[ignore = "a probe run by the other tests of this file"]
fn probe() {
    stampede_testkit::require_tool!("curl");
}

fn run_probe(require: Option<&str>) -> Output {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["--ignored", "--exact", "probe", "--test-threads", "1"])
        .env("PATH", "/nonexistent-stampede-test-path")
        .env_remove(stampede_testkit::REQUIRE_TOOLS);
    if let Some(value) = require {
        command.env(stampede_testkit::REQUIRE_TOOLS, value);
    }
    command.output().expect("the test binary runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn rule_a_missing_tool_skips_visibly() {
    for require in [None, Some("0"), Some("")] {
        let output = run_probe(require);
        let said = text(&output);
        assert!(output.status.success(), "{require:?}: {said}");
        assert!(
            said.contains(
                "SKIPPED probe: curl is not on PATH; install it: apt-get install -y curl"
            ),
            "{require:?}: {said}"
        );
    }
}

#[test]
fn rule_a_missing_tool_fails_when_required() {
    let output = run_probe(Some("1"));
    let said = text(&output);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("curl is not on PATH and STAMPEDE_REQUIRE_TOOLS=1 requires it; install it: apt-get install -y curl"),
        "{said}"
    );
    assert!(!said.contains("SKIPPED"), "{said}");
}
