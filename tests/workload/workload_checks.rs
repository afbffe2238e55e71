//! `--check EXPR` and `--extract` judging responses end to end:
//! a failed check is `check_failed`, each check keeps its own tally and up
//! to three sampled failing values, a failed status stays a failed status
//! (error > failed status > check_failed > success), and
//! `sent = success + failed_status + check_failed + errors + unfinished`
//! holds on both event loops (Ctrl-C and a dying server:
//! workload_interrupts.rs); `--slo 'checks>…'` gates on them. A check or
//! extractor that does not parse is a caret under the expression and exit 2.

use stampede_testkit::workload as workload_support;

use workload_support::*;

#[test]
fn failed_checks_are_their_own_class_with_tallies_and_samples() {
    let dir = temp_dir("checks-class");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/?x={{seq}}");
    for io in LOOPS {
        let run = run_on(
            io,
            &[
                &url,
                "-n",
                "30",
                "-c",
                "3",
                "--check",
                "status == 200",
                "--check",
                "header(Content-Type) ~ html",
                "--check",
                "body contains \"no such text\"",
                "--check",
                "header(X-Absent) exists",
            ],
        );
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(run.count("/requests/check_failed"), 30, "{io:?}");
        assert_eq!(run.count("/requests/success"), 0, "{io:?}");
        assert_eq!(run.count("/requests/failed_status"), 0, "{io:?}");
        run.assert_accounted("");
        assert_eq!(tally(&run, "status == 200", None), (30, 0), "{io:?}");
        assert_eq!(tally(&run, "header(Content-Type) ~ html", None), (30, 0));
        assert_eq!(tally(&run, "body contains \"no such text\"", None), (0, 30));
        let absent = check_entry(&run, "header(X-Absent) exists", None);
        assert_eq!(absent["failed"], 30);
        assert_eq!(absent["samples"], serde_json::json!(["absent"]));
        let body = check_entry(&run, "body contains \"no such text\"", None);
        let samples = body["samples"].as_array().expect("samples");
        assert!(
            !samples.is_empty() && samples.len() <= 3,
            "{io:?}: {samples:?}"
        );
        assert!(
            samples[0].as_str().unwrap_or("").contains("html"),
            "{samples:?}"
        );
    }
    drop(target);
}

#[test]
fn a_failed_status_is_not_a_failed_check() {
    let dir = temp_dir("checks-status");
    let target = LoggedTarget::start(&dir);
    let run = run_on(
        None,
        &[
            &target.url("/status/503"),
            "-n",
            "10",
            "-c",
            "2",
            "--check",
            "status == 200",
        ],
    );
    assert_eq!(run.count("/requests/failed_status"), 10, "{}", run.stderr());
    assert_eq!(run.count("/requests/check_failed"), 0);
    run.assert_accounted("");
    let entry = check_entry(&run, "status == 200", None);
    assert_eq!(entry["failed"], 10, "the check still tallies what it saw");
    assert_eq!(entry["samples"], serde_json::json!(["503"]));
    // Half the mix passes, half fails its check: per target as well.
    let file = write(
        &dir,
        "targets.txt",
        &format!(
            "GET {}\n\nGET {}\n",
            target.url("/"),
            target.url("/bytes/10")
        ),
    );
    let run = run_on(
        None,
        &[
            "--targets",
            &file,
            "-n",
            "20",
            "-c",
            "1",
            "--check",
            "body contains \"<html\"",
        ],
    );
    assert_eq!(
        run.count("/requests/success"),
        10,
        "{}",
        run.result()["checks"]
    );
    assert_eq!(run.count("/requests/check_failed"), 10);
    run.assert_accounted("");
    let targets = run.result()["targets"].as_array().expect("targets[]");
    assert_eq!(targets[0]["success"], 10);
    assert_eq!(targets[1]["check_failed"], 10);
    drop(target);
}

#[test]
fn json_and_time_checks_judge_the_echoed_body() {
    let dir = temp_dir("checks-json");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/json");
    let body = r#"{"state":"ok","items":[{"price":3}],"n":{{seq}}}"#;
    let passing = [
        r#"json($.state) == "ok""#,
        "json($.items[0].price) > 0",
        "json($.n) >= 0",
        "header(Content-Type) ~ json",
        "body size < 10KiB",
        "time < 30s",
        "status in 200..299",
    ];
    let mut args = vec![
        url.as_str(),
        "-m",
        "POST",
        "-b",
        body,
        "-n",
        "12",
        "-c",
        "2",
    ];
    for check in &passing {
        args.extend(["--check", check]);
    }
    args.extend(["--check", "json($.missing) exists"]);
    for io in LOOPS {
        let run = run_on(io, &args);
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        for check in &passing {
            assert_eq!(tally(&run, check, None), (12, 0), "{io:?}: {check}");
        }
        assert_eq!(
            tally(&run, "json($.missing) exists", None),
            (0, 12),
            "{io:?}"
        );
        assert_eq!(run.count("/requests/check_failed"), 12);
        run.assert_accounted("");
    }
    drop(target);
}

#[test]
fn slo_checks_gates_on_the_passed_share_of_check_evaluations() {
    let dir = temp_dir("checks-slo");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/");
    // Half the evaluations fail (one check of two on every response): 50 %.
    let failing = run_on(
        None,
        &[
            &url,
            "-n",
            "10",
            "-c",
            "1",
            "--check",
            "status == 200",
            "--check",
            "body contains \"nope\"",
            "--slo",
            "checks>99.9%",
        ],
    );
    assert_eq!(failing.code(), Some(1), "{}", failing.stderr());
    let passing = run_on(
        None,
        &[
            &url,
            "-n",
            "10",
            "-c",
            "1",
            "--check",
            "status == 200",
            "--slo",
            "checks>99.9%",
        ],
    );
    assert_eq!(passing.code(), Some(0), "{}", passing.stderr());
    let no_checks = run_on(None, &[&url, "-n", "5", "-c", "1", "--slo", "checks>99%"]);
    // Without any check there is nothing to measure: the condition fails.
    assert_eq!(no_checks.code(), Some(1), "{}", no_checks.stderr());
    assert!(
        no_checks.stdout().contains("not measured"),
        "{}",
        no_checks.stdout()
    );
    drop(target);
}

#[test]
fn an_extractor_that_finds_nothing_fails_the_iteration_and_the_run_goes_on() {
    let dir = temp_dir("checks-extract");
    let target = LoggedTarget::start(&dir);
    for io in LOOPS {
        let run = run_on(
            io,
            &[
                &target.url("/"),
                "--extract",
                "tok=json($.token)",
                "-n",
                "8",
                "-c",
                "2",
            ],
        );
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(run.count("/requests/sent"), 8, "{io:?}: the run went on");
        assert_eq!(run.count("/requests/check_failed"), 8, "{io:?}");
        let entry = check_entry(&run, "extract tok", None);
        assert_eq!(entry["failed"], 8);
        assert_eq!(
            entry["samples"],
            serde_json::json!(["extract tok: $.token not found"])
        );
        run.assert_accounted("");
    }
    drop(target);
}

#[test]
fn expressions_that_do_not_parse_show_a_caret_and_exit_2() {
    let dir = temp_dir("checks-bad");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/");
    let check = run_on(None, &[&url, "--check", "status = 200", "-n", "1"]);
    assert_usage_error(&check, "invalid check: status = 200");
    let lines: Vec<String> = check.stderr().lines().map(str::to_string).collect();
    let caret = lines
        .iter()
        .find(|l| l.trim_start().starts_with('^'))
        .unwrap_or_else(|| panic!("no caret line: {lines:?}"));
    // The caret sits under the `=` of the expression.
    let expr_at = lines[0]
        .find("status = 200")
        .expect("the expression is shown");
    assert_eq!(
        caret.find('^'),
        Some(expr_at + "status ".len()),
        "{lines:?}"
    );
    assert!(caret.contains("expected =="), "{caret}");
    let extract = run_on(None, &[&url, "--extract", "t=json($.x", "-n", "1"]);
    assert_usage_error(&extract, "invalid extract");
    assert!(extract.stderr().contains('^'), "{}", extract.stderr());
    let unknown = run_on(None, &[&url, "--check", "bogus > 1", "-n", "1"]);
    assert_usage_error(&unknown, "invalid check: bogus > 1");
    let paths = target.stop_and_paths();
    assert!(paths.is_empty(), "a request was sent: {paths:?}");
}
