//! What `stampede jmeter` prints: JMeter's own lines around the run
//! ("Created the tree successfully using plan.jmx", "Starting standalone
//! test @ ...", the Summariser's `summary =` line, "... end of run"), then
//! stampede's per-sampler table: count, average, percentiles, errors.

use super::jmeter_jtl::StepLabel;
use stampede_jmeter::jtl::{summary_line, Totals};
use stampede_metrics::{format_timestamp, RunResult};
use std::io::{self, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

fn epoch_ms(time: SystemTime) -> u128 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

pub(super) fn write_start(plan: &Path, at: SystemTime, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Created the tree successfully using {}",
        plan.display()
    )?;
    writeln!(
        out,
        "Starting standalone test @ {} ({})",
        format_timestamp(at),
        epoch_ms(at)
    )?;
    out.flush()
}

/// JMeter's totals of a finished run: samples are complete responses and
/// errors; an error is any sample JMeter marks failed (no response, or a
/// status of 400 and above).
pub(super) fn totals(result: &RunResult) -> Totals {
    let r = &result.requests;
    let l = &result.latency_us;
    let samples = r.completed + r.errors;
    Totals {
        samples,
        elapsed_ms: (result.elapsed_s * 1000.0).round() as u64,
        mean_ms: l.mean / 1000.0,
        min_ms: l.min / 1000,
        max_ms: l.max.div_ceil(1000),
        errors: r.failed_status + r.errors,
    }
}

fn ms(us: u64) -> String {
    format!("{:.1}", us as f64 / 1000.0)
}

pub(super) fn write_report(
    result: &RunResult,
    labels: &[StepLabel],
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "{}", summary_line(&totals(result)))?;
    let now = SystemTime::now();
    writeln!(
        out,
        "Tidying up ...    @ {} ({})",
        format_timestamp(now),
        epoch_ms(now)
    )?;
    writeln!(out, "... end of run")?;
    writeln!(out)?;
    writeln!(
        out,
        "stampede: per sampler (ms)  {:>24} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "label", "count", "avg", "p50", "p90", "p99", "max", "errors"
    )?;
    // Per-step figures when the engine kept them by request index; the
    // whole run otherwise.
    let rows: Vec<(String, u64, &stampede_metrics::LatencySummary, u64)> =
        if !result.targets.is_empty() && result.targets.len() == labels.len() {
            result
                .targets
                .iter()
                .zip(labels)
                .map(|(t, l)| {
                    (
                        l.label.clone(),
                        t.finished,
                        &t.latency_us,
                        t.failed_status + t.errors,
                    )
                })
                .collect()
        } else {
            let r = &result.requests;
            vec![(
                "(all samplers)".to_string(),
                r.completed + r.errors,
                &result.latency_us,
                r.failed_status + r.errors,
            )]
        };
    for (label, count, l, errors) in rows {
        writeln!(
            out,
            "                            {label:>24} {count:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {errors:>7}",
            format!("{:.1}", l.mean / 1000.0),
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.max)
        )?;
    }
    Ok(())
}
