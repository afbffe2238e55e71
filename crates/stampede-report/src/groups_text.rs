//! The groups' table of the text summary: a scenario's groups side by side,
//! each with its load and the totals of its steps.

use crate::format::{format_count, format_latency_us, format_rate};
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// `Group` lines, when the run had a scenario of several groups.
pub(crate) fn render_groups(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    if result.groups.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "  {:<16} {:<20} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
        "Group", "load", "finished", "req/s", "failed", "errors", "p50", "p99"
    )?;
    for g in &result.groups {
        writeln!(
            out,
            "  {:<16} {:<20} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
            g.name,
            g.load,
            format_count(g.finished),
            format_rate(g.rps),
            format_count(g.failed_status + g.check_failed),
            format_count(g.errors),
            format_latency_us(g.latency_us.p50 as f64),
            format_latency_us(g.latency_us.p99 as f64)
        )?;
    }
    Ok(())
}
