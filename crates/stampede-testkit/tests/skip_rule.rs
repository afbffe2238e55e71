//! The skip-or-fail rule, through libtest itself: this test binary runs its
//! own `probe` test again with a PATH that holds no tool. Without
//! `STAMPEDE_REQUIRE_TOOLS` the probe passes and its SKIPPED line reaches the
//! output although libtest captures a passing test's prints; with
//! `STAMPEDE_REQUIRE_TOOLS=1` it fails and names the tool and its install.
//! The same for io_uring (`uring_probe`, the probe told to find none by
//! `STAMPEDE_TEST_HIDE_IO_URING=1`): it fails under `STAMPEDE_REQUIRE_TOOLS=1`
//! unless `STAMPEDE_NO_IO_URING=1`, and every skip leaves a line in
//! `STAMPEDE_SKIP_LOG`.

use std::path::Path;
use std::process::{Command, Output};

use stampede_testkit::{HIDE_IO_URING, NO_IO_URING, REQUIRE_TOOLS, SKIP_LOG};

/// Needs curl; run only by `rule_*` below (it is ignored by default).
#[test]
#[ignore = "a probe run by the other tests of this file"]
fn probe() {
    stampede_testkit::require_tool!("curl");
}

/// Runs on each event loop, as the tests that cover them all do; run only by
/// `rule_*` below. Reaching the end without io_uring is a skip, not a pass.
#[test]
#[ignore = "a probe run by the other tests of this file"]
fn uring_probe() {
    let ran: Vec<&str> = stampede_testkit::EVENT_LOOPS
        .into_iter()
        .filter(|io| stampede_testkit::event_loop_or_skip(io))
        .collect();
    assert_eq!(ran, ["epoll", "tokio"], "the other loops still run");
}

/// This test binary's `test`, with `env` and no variable of the rule but those.
fn run_test(test: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["--ignored", "--exact", test, "--test-threads", "1"])
        .env("PATH", "/nonexistent-stampede-test-path");
    for name in [REQUIRE_TOOLS, NO_IO_URING, HIDE_IO_URING, SKIP_LOG] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command.output().expect("the test binary runs")
}

fn run_probe(require: Option<&str>) -> Output {
    match require {
        Some(value) => run_test("probe", &[(REQUIRE_TOOLS, value)]),
        None => run_test("probe", &[]),
    }
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

/// A skip log of its own for one case, and what the probe wrote to it.
fn uring_probe_with(env: &[(&str, &str)], case: &str) -> (Output, String) {
    let dir = stampede_testkit::temp_dir(case);
    let log = dir.join("skipped.txt");
    let log_arg = log.display().to_string();
    let mut all = vec![(HIDE_IO_URING, "1"), (SKIP_LOG, log_arg.as_str())];
    all.extend_from_slice(env);
    let output = run_test("uring_probe", &all);
    let logged = read_or_empty(&log);
    let _ = std::fs::remove_dir_all(&dir);
    (output, logged)
}

fn read_or_empty(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn rule_no_io_uring_skips_visibly_and_is_logged() {
    let (output, logged) = uring_probe_with(&[], "uring-skip");
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("SKIPPED uring_probe: --io uring: io_uring is unavailable here"),
        "{said}"
    );
    assert!(said.contains("(or set STAMPEDE_REQUIRE_TOOLS=1"), "{said}");
    assert_eq!(
        logged,
        "skip_rule uring_probe: --io uring: io_uring is unavailable here \
         (hidden by STAMPEDE_TEST_HIDE_IO_URING=1)\n"
    );
}

#[test]
fn rule_no_io_uring_fails_when_required() {
    let (output, logged) = uring_probe_with(&[(REQUIRE_TOOLS, "1")], "uring-fail");
    let said = text(&output);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("io_uring is unavailable here (hidden by STAMPEDE_TEST_HIDE_IO_URING=1) and STAMPEDE_REQUIRE_TOOLS=1 requires it"),
        "{said}"
    );
    assert!(
        said.contains("(or set STAMPEDE_NO_IO_URING=1 where this machine has none)"),
        "{said}"
    );
    assert!(!said.contains("SKIPPED"), "{said}");
    assert_eq!(logged, "", "a failure is no skip");
}

#[test]
fn rule_no_io_uring_skips_when_required_only_if_ci_says_there_is_none() {
    for declared in ["0", ""] {
        let env = [(REQUIRE_TOOLS, "1"), (NO_IO_URING, declared)];
        let (output, _) = uring_probe_with(&env, "uring-undeclared");
        assert!(!output.status.success(), "{declared:?}: {}", text(&output));
    }
    let env = [(REQUIRE_TOOLS, "1"), (NO_IO_URING, "1")];
    let (output, logged) = uring_probe_with(&env, "uring-declared");
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("SKIPPED uring_probe: --io uring: io_uring is unavailable here (hidden by STAMPEDE_TEST_HIDE_IO_URING=1); STAMPEDE_NO_IO_URING=1 says this machine has none"),
        "{said}"
    );
    assert_eq!(logged.lines().count(), 1, "{logged}");
}

#[test]
fn rule_a_missing_tool_is_logged_when_skipped() {
    let dir = stampede_testkit::temp_dir("tool-skip-log");
    let log = dir.join("skipped.txt");
    let output = run_test("probe", &[(SKIP_LOG, &log.display().to_string())]);
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(
        read_or_empty(&log),
        "skip_rule probe: curl is not on PATH\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
