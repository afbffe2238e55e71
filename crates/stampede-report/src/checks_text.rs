//! The checks' table of the text summary: each check's pass
//! share with its failing counts (or that no response reached it) and a few failing values as seen, and
//! why the run stopped early (its `stop_reason`, in words).

use crate::format::format_count;
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// Longest failing value shown on one line.
const SHOWN: usize = 100;

/// Why the run stopped early (`stop_reason`), in words: the text summary's
/// `Stopped` line and the HTML report's note say the same.
pub(crate) fn stop_reason_text(reason: &str) -> &str {
    match reason {
        "feed_exhausted" => "a unique feeder ran out of rows (each row was used once)",
        "stop_run" => "a step failed in a group with on_error = \"stop_run\"",
        "groups_done" => "every group ended by itself (iterations or duration)",
        "script_stopped" => "the script called thread:stop() in every thread",
        "script_error" => "a Lua error in the script (its traceback is on stderr)",
        "worker_stuck" => {
            "a worker was given up on (see the warning): its figures after its last snapshot are lost"
        }
        "no_connection" => {
            "no connection could be opened within the connect timeout (x1.5); is the server up?"
        }
        other => other,
    }
}

/// `Checks` lines, when the run had checks or extractors.
pub(crate) fn render_checks(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    if let Some(reason) = &result.stop_reason {
        writeln!(out, "  Stopped       early: {}", stop_reason_text(reason))?;
    }
    if result.checks.is_empty() {
        return Ok(());
    }
    writeln!(out, "  Checks")?;
    for check in &result.checks {
        let step = check
            .step
            .as_deref()
            .map_or(String::new(), |s| format!("[{s}] "));
        match check.pass_pct() {
            Some(pct) => writeln!(
                out,
                "    {pct:>7.2}%  {step}{}  ({} passed, {} failed)",
                check.check,
                format_count(check.passed),
                format_count(check.failed)
            )?,
            None => writeln!(
                out,
                "          —  {step}{}  (not evaluated: 0 responses reached it)",
                check.check
            )?,
        }
        for sample in &check.samples {
            let one_line: String = sample
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .take(SHOWN)
                .collect();
            let cut = if sample.chars().count() > SHOWN {
                "…"
            } else {
                ""
            };
            writeln!(out, "               saw: {one_line}{cut}")?;
        }
    }
    writeln!(out)?;
    Ok(())
}
