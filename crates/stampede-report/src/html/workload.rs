//! The run report's workload sections: each check with its pass
//! share and a few failing values, a scenario's groups with their load, and
//! why a run stopped early; nothing for runs without them.

use super::page::Page;
use super::units::LatencyUnit;
use crate::format::{format_count, format_rate};
use stampede_metrics::RunResult;

/// Longest failing value shown in a cell.
const SHOWN: usize = 160;

/// The `Checks` and `Groups` sections.
pub(crate) fn workload_sections(page: &mut Page, result: &RunResult) {
    if let Some(reason) = &result.stop_reason {
        let why = crate::checks_text::stop_reason_text(reason);
        page.notes("warnings", &[format!("stopped early: {why}")]);
    }
    if !result.checks.is_empty() {
        page.heading("Checks");
        let rows: Vec<Vec<String>> = result
            .checks
            .iter()
            .map(|c| {
                let seen: Vec<String> = c
                    .samples
                    .iter()
                    .map(|s| {
                        let one_line: String = s
                            .chars()
                            .map(|ch| if ch.is_control() { ' ' } else { ch })
                            .take(SHOWN)
                            .collect();
                        one_line
                    })
                    .collect();
                vec![
                    c.step.clone().unwrap_or_default(),
                    c.check.clone(),
                    c.pass_pct()
                        .map_or_else(|| "not evaluated".into(), |p| format!("{p:.2}%")),
                    format_count(c.passed),
                    format_count(c.failed),
                    seen.join(" · "),
                ]
            })
            .collect();
        page.table(
            &[
                "step",
                "check",
                "passed %",
                "passed",
                "failed",
                "failing values seen",
            ],
            &rows,
        );
    }
    if !result.groups.is_empty() {
        page.heading("Groups");
        let g = &result.groups;
        let p50 = LatencyUnit::for_column(
            &g.iter()
                .map(|g| g.latency_us.p50 as f64)
                .collect::<Vec<_>>(),
        );
        let p99 = LatencyUnit::for_column(
            &g.iter()
                .map(|g| g.latency_us.p99 as f64)
                .collect::<Vec<_>>(),
        );
        let rows: Vec<Vec<String>> = g
            .iter()
            .map(|g| {
                vec![
                    g.name.clone(),
                    g.load.clone(),
                    g.steps.join(", "),
                    format_count(g.finished),
                    format_rate(g.goodput),
                    format_count(g.failed_status + g.check_failed),
                    format_count(g.errors),
                    p50.format(g.latency_us.p50 as f64),
                    p99.format(g.latency_us.p99 as f64),
                ]
            })
            .collect();
        let headers = [
            "group".to_string(),
            "load".to_string(),
            "steps".to_string(),
            "finished".to_string(),
            "goodput (req/s)".to_string(),
            "failed".to_string(),
            "errors".to_string(),
            p50.header("p50"),
            p99.header("p99"),
        ];
        page.table(&super::tables::as_str(&headers), &rows);
    }
}
