//! Golden files of the compat layouts: each foreign tool's report (ab's
//! text and `-w` HTML, wrk with and without `--latency`, webbench, press)
//! rendered from one recorded result (`tests/golden/run.json`, written by a
//! real `stampede run`) is compared byte for byte with
//! `tests/golden/compat-NAME.txt`. The renderers are the ones the front-ends
//! call; a layout change that is meant shows up as a diff, and
//! `UPDATE_GOLDEN=1 cargo test --test compat golden_compat::` rewrites the files.

use stampede_metrics::RunResult;
use stampede_plan::Target;
use stampede_report::compat::{
    render_ab_html, render_ab_text, render_press, render_webbench, render_wrk, AbView,
};
use stampede_testkit::golden_dir;

const CLOSING: &str = "stampede: honest p99 = 1.00ms (golden closing line)";

fn recorded() -> RunResult {
    let text = std::fs::read_to_string(golden_dir().join("run.json")).expect("the fixture");
    RunResult::from_json(&text).expect("a stampede result")
}

fn ab_view(keepalive: bool) -> AbView {
    AbView {
        keepalive,
        percentiles: true,
        confidence: true,
        verbosity: 2,
        variable_length: false,
        table_attrs: "border=1".into(),
        tr_attrs: String::new(),
        td_attrs: "bgcolor=white".into(),
    }
}

/// Each layout's name and its bytes for the recorded result.
fn layouts() -> Vec<(&'static str, Vec<u8>)> {
    let result = recorded();
    let target = Target::parse(&result.plan.url).expect("the recorded URL");
    // Ten 100 ms windows of one thread, as wrk's watcher collects them.
    let rates = [
        980.0, 1010.0, 1000.0, 995.0, 1020.0, 990.0, 1005.0, 1000.0, 985.0, 1015.0,
    ];
    let render = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut out = Vec::new();
        f(&mut out).expect("rendering into memory");
        out
    };
    vec![
        (
            "ab",
            render(&|out| render_ab_text(&result, &target, &ab_view(true), CLOSING, out)),
        ),
        (
            "ab-html",
            render(&|out| render_ab_html(&result, &target, &ab_view(false), CLOSING, out)),
        ),
        (
            "wrk",
            render(&|out| render_wrk(&result, &rates, false, CLOSING, out)),
        ),
        (
            "wrk-latency",
            render(&|out| render_wrk(&result, &rates, true, CLOSING, out)),
        ),
        (
            "webbench",
            render(&|out| render_webbench(&result, CLOSING, out)),
        ),
        ("press", render(&|out| render_press(&result, CLOSING, out))),
    ]
}

#[test]
fn each_compat_layout_matches_its_golden_file() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for (name, got) in layouts() {
        let path = golden_dir().join(format!("compat-{name}.txt"));
        if update {
            std::fs::write(&path, &got).expect("the golden file is writable");
            continue;
        }
        let want = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
        if got != want {
            failures.push(format!(
                "{name}:\n--- got\n{}\n--- want\n{}",
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "layouts differ from the golden files (UPDATE_GOLDEN=1 rewrites them):\n{}",
        failures.join("\n")
    );
}
