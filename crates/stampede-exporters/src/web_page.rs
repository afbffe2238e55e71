//! The pages `--web` serves, all drawn by the HTML report's renderer
//! (stampede-report): while the run goes on, the report of the run so far
//! with a bar on top (what is happening, the Stop button) and the script
//! that keeps it moving (web_live.js); each server-sent update carries the
//! report's content and charts as the report renders them; when the run
//! has ended, the report itself, byte for byte what `--html` writes.

use stampede_metrics::RunResult;

/// The live page's script, inlined like the report's own (no network).
const LIVE_JS: &str = include_str!("web_live.js");

/// The bar stays in view over the report; the report's own style is kept.
const LIVE_STYLE: &str = "#live-bar { position:fixed; top:10px; right:14px; z-index:10; \
display:flex; gap:10px; align-items:center; background:#fff; border:1px solid #e3e7ee; \
border-radius:8px; padding:6px 10px; box-shadow:0 2px 8px rgba(0,0,0,.12); font-size:13px; } \
#live-bar button { font:inherit; padding:4px 12px; border-radius:6px; border:1px solid #c0392b; \
background:#c0392b; color:#fff; cursor:pointer; } \
#live-bar button:disabled { opacity:.5; cursor:default; }";

/// The markup after the report's scripts: the bar and the live script.
fn tail(elapsed: &str) -> String {
    format!(
        "<style>{LIVE_STYLE}</style>\n<div id=\"live-bar\"><span id=\"live-status\" \
         data-updates=\"0\">live \u{b7} {elapsed} measured</span><button id=\"live-stop\" \
         type=\"button\" title=\"End the run as Ctrl-C does; the result is still written\">\
         Stop the run</button></div>\n<script>{LIVE_JS}</script>\n"
    )
}

/// The live page: the report of the run so far, with the bar and script.
pub fn live_page(result: &RunResult) -> Vec<u8> {
    let mut out = Vec::new();
    let written = stampede_report::render_live_html(result, &tail(&elapsed(result)), &mut out);
    match written {
        Ok(()) => out,
        Err(error) => format!("rendering the page failed: {error}\n").into_bytes(),
    }
}

/// One server-sent update: `{"elapsed", "report", "charts"}`, where
/// `report` is the new inside of `<div id="report">` and `charts` the
/// charts' JSON as a string (it goes back into `<script id="chart-data">`).
pub fn live_update(result: &RunResult) -> String {
    let (report, charts) = stampede_report::render_live_parts(result);
    serde_json::json!({
        "elapsed": elapsed(result),
        "report": report,
        "charts": charts,
    })
    .to_string()
}

fn elapsed(result: &RunResult) -> String {
    format!("{:.1} s", result.elapsed_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running() -> stampede_metrics::Running {
        let target = stampede_plan::Target::parse("http://127.0.0.1:3000/x").unwrap();
        let plan = stampede_plan::Plan::minimal(target);
        stampede_metrics::Running {
            run_id: "r1".into(),
            plan,
            notices: Vec::new(),
            environment: stampede_metrics::Environment::capture(),
            started_at: std::time::SystemTime::now(),
            version: env!("CARGO_PKG_VERSION"),
        }
    }

    fn result() -> RunResult {
        let running = running();
        let mut live = crate::web_state::LiveRun::default();
        live.total.counters.success = 3;
        live.total.counters.status.add(200, 3);
        live.elapsed = std::time::Duration::from_millis(1_500);
        live.result(&running, None)
    }

    #[test]
    fn the_live_page_is_the_report_with_its_bar_and_script() {
        let result = result();
        let page = String::from_utf8(live_page(&result)).unwrap();
        let mut report = Vec::new();
        stampede_report::render_html(&result, &mut report).unwrap();
        let report = String::from_utf8(report).unwrap();
        let (start, _) = report.split_once("</body>").unwrap();
        assert!(page.starts_with(start), "the report comes first, unchanged");
        assert!(page.contains("id=\"live-stop\""));
        assert!(page.contains(
            "fetch(\"/stop\", { method: \"POST\", headers: { \"X-Stampede\": \"stop\" } })"
        ));
        assert!(page.contains("new EventSource(\"/events\")"));
        assert!(page.contains("live \u{b7} 1.5 s measured"));
        assert!(!LIVE_JS.contains("</script"), "would end the element early");
    }

    #[test]
    fn before_the_first_snapshot_the_page_shows_an_empty_run() {
        let empty = crate::web_state::LiveRun::default().result(&running(), None);
        let page = String::from_utf8(live_page(&empty)).unwrap();
        assert!(!page.contains("NaN"), "no figure of nothing");
        assert!(page.contains("live \u{b7} 0.0 s measured"));
    }

    #[test]
    fn an_update_carries_the_report_content_and_its_charts() {
        let update: serde_json::Value = serde_json::from_str(&live_update(&result())).unwrap();
        assert_eq!(update["elapsed"], "1.5 s");
        let report = update["report"].as_str().unwrap();
        assert!(report.starts_with("<header>") && report.ends_with("</main>"));
        let charts: serde_json::Value =
            serde_json::from_str(update["charts"].as_str().unwrap()).unwrap();
        assert_eq!(charts[0]["id"], "throughput");
    }
}
