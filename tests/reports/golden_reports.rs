//! Golden files of the text renderers: `stampede report FILE` prints exactly
//! what the command that wrote FILE printed. Each `tests/golden/NAME.json`
//! was written by a real command (a run, an open-model run, a `--targets`
//! mix, `--repeat 3`, a sweep with an SLO, a comparison) and `NAME.txt` is
//! that command's stdout, byte for byte. A renderer change that is meant
//! shows up here as a diff; rewrite the goldens with `UPDATE_GOLDEN=1 cargo
//! test --test reports golden_reports::` and read the diff before committing it.
//!
//! A golden JSON is a real result, so it keeps the accounting every result
//! keeps (checked below); an engine change that alters the accounting means
//! writing the file anew with its command. `open` is an open-model run at a
//! server that cannot keep up, so that it shows what was due and not sent:
//! `stampede serve -p 18200 -t 1`, then `stampede run
//! http://127.0.0.1:18200/delay/10 -r 500 -d 1s -c 4 -t 1 --io uring --json
//! open.json > open.txt`.

use stampede_metrics::RunResult;
use stampede_testkit::{golden_dir, stampede, text};

const GOLDEN: [&str; 6] = ["run", "open", "targets", "repeat", "sweep", "compare"];

/// The first line where `got` and `want` differ, for a readable failure.
fn first_difference(got: &str, want: &str) -> String {
    let (mut got_lines, mut want_lines) = (got.lines(), want.lines());
    for number in 1.. {
        match (got_lines.next(), want_lines.next()) {
            (None, None) => break,
            (g, w) if g == w => continue,
            (g, w) => {
                return format!(
                    "line {number}:\n  got:  {}\n  want: {}",
                    g.unwrap_or("<end>"),
                    w.unwrap_or("<end>")
                )
            }
        }
    }
    "only line endings differ".into()
}

#[test]
fn report_prints_what_the_fresh_command_printed() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for name in GOLDEN {
        let json = golden_dir().join(format!("{name}.json"));
        let expected_path = golden_dir().join(format!("{name}.txt"));
        let output = stampede(&["report", json.to_str().expect("a UTF-8 path")]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "report {name}.json: {}",
            text(&output.stderr)
        );
        let got = text(&output.stdout);
        if update {
            std::fs::write(&expected_path, &got).expect("the golden file is writable");
            continue;
        }
        let want = std::fs::read_to_string(&expected_path).expect("the golden text");
        if got != want {
            failures.push(format!("{name}: {}", first_difference(&got, &want)));
        }
    }
    assert!(
        failures.is_empty(),
        "report differs from the golden text (UPDATE_GOLDEN=1 rewrites it):\n{}",
        failures.join("\n")
    );
}

/// Every run result a golden file holds (a run's file is one; a repeat's
/// `runs[]` and a sweep's `steps[].result` hold several), by JSON path.
fn run_results(value: &serde_json::Value, path: String, out: &mut Vec<(String, RunResult)>) {
    match value {
        serde_json::Value::Object(map) => {
            if map.get("schema").and_then(|s| s.as_str()) == Some("stampede.result/1") {
                let result = serde_json::from_value(value.clone())
                    .unwrap_or_else(|e| panic!("{path}: not a run result: {e}"));
                out.push((path.clone(), result));
            }
            for (key, inner) in map {
                run_results(inner, format!("{path}/{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                run_results(inner, format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The accounting every result keeps (docs/result-schema.md, "Invariants";
/// for the open model's `not_sent`, stampede-metrics' `intended_requests`):
/// a golden file is a real command's output, so it keeps it too, or the
/// renderers are checked against a result the engine can no longer write.
fn assert_accounting(at: &str, r: &RunResult) {
    let q = &r.requests;
    let check_failed = q.check_failed.unwrap_or(0);
    assert_eq!(
        q.sent,
        q.success + q.failed_status + check_failed + q.errors + q.unfinished,
        "{at}: sent = success + failed_status + check_failed + errors + unfinished"
    );
    assert_eq!(
        q.completed,
        q.success + q.failed_status + check_failed,
        "{at}: completed = success + failed_status + check_failed"
    );
    let histogram = r.latency_histogram().expect("the histogram decodes");
    assert_eq!(histogram.len(), q.completed, "{at}: a sample per response");
    if let Some(n) = r.plan.requests.filter(|_| !r.interrupted) {
        if r.plan.duration_s.is_none() {
            assert_eq!((q.sent, q.unfinished), (n, 0), "{at}: -n is exact");
        }
    }
    if r.plan.model != "rate" {
        assert!(r.schedule.is_none(), "{at}: a schedule without a rate");
        return;
    }
    let schedule = r
        .schedule
        .as_ref()
        .expect("an open-model run has a schedule");
    if r.plan.arrival.as_deref() != Some("uniform") {
        assert_eq!(schedule.not_sent, None, "{at}: Poisson has no count due");
        return;
    }
    let not_sent = schedule
        .not_sent
        .unwrap_or_else(|| panic!("{at}: uniform arrivals count what was due and not sent"));
    if r.plan.stages.is_empty() && r.plan.warmup_s.is_none() {
        // Instants at 0, 1/rate, 2/rate, … in the measured window, at most -n.
        let rate = r.plan.rate.expect("the open model's rate");
        let window = r
            .plan
            .duration_s
            .map_or(r.elapsed_s, |d| d.min(r.elapsed_s));
        let mut due = (rate * window).ceil() as u64;
        if let Some(n) = r.plan.requests {
            due = due.min(n);
        }
        assert_eq!(q.sent + not_sent, due, "{at}: sent + not_sent = due");
    }
}

#[test]
fn every_golden_result_keeps_the_accounting_invariant() {
    for name in GOLDEN {
        let path = golden_dir().join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path).expect("the golden JSON");
        let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let mut results = Vec::new();
        run_results(&value, name.to_string(), &mut results);
        if name != "compare" {
            assert!(!results.is_empty(), "{name}.json holds no run result");
        }
        for (at, result) in &results {
            assert_accounting(at, result);
        }
    }
}
