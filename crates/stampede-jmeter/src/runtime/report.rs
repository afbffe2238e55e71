//! What `stampede jmeter` prints: JMeter's own lines around the run
//! ("Created the tree successfully using plan.jmx", "Starting the test @
//! ...", the Summariser's `summary =` line over every group, "... end of
//! run"), then stampede's per-sampler table: count, average, percentiles,
//! errors.

use crate::jtl::{summary_line, Totals};
use stampede_metrics::{format_timestamp, LatencySummary, RunResult};
use std::io::{self, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

fn epoch_ms(time: SystemTime) -> u128 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

/// The two lines JMeter prints as a test starts: `Created the tree
/// successfully using PLAN` and `Starting the test @ TIME (EPOCH_MS)`.
pub fn write_start(plan: &Path, at: SystemTime, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Created the tree successfully using {}",
        plan.display()
    )?;
    writeln!(
        out,
        "Starting the test @ {} ({})",
        format_timestamp(at),
        epoch_ms(at)
    )?;
    out.flush()
}

/// Errors as JMeter counts them: no response, a status of 400 and above,
/// or a failed assertion.
fn errors(result: &RunResult) -> u64 {
    let r = &result.requests;
    r.failed_status + r.errors + r.check_failed.unwrap_or(0)
}

/// JMeter's totals over the groups' runs, `elapsed_ms` from the test's start.
pub fn totals(results: &[&RunResult], elapsed_ms: u64) -> Totals {
    let samples: u64 = results
        .iter()
        .map(|r| r.requests.completed + r.requests.errors)
        .sum();
    let weighted: f64 = results
        .iter()
        .map(|r| r.latency_us.mean * r.requests.completed as f64)
        .sum();
    let completed: u64 = results.iter().map(|r| r.requests.completed).sum();
    let (min, max) = results
        .iter()
        .filter(|r| r.requests.completed > 0)
        .fold((u64::MAX, 0), |(min, max), r| {
            (min.min(r.latency_us.min), max.max(r.latency_us.max))
        });
    Totals {
        samples,
        elapsed_ms,
        mean_ms: if completed == 0 {
            0.0
        } else {
            weighted / completed as f64 / 1000.0
        },
        min_ms: if min == u64::MAX { 0 } else { min / 1000 },
        max_ms: max.div_ceil(1000),
        errors: results.iter().map(|r| errors(r)).sum(),
    }
}

fn ms(us: u64) -> String {
    format!("{:.1}", us as f64 / 1000.0)
}

fn row(
    out: &mut dyn Write,
    label: &str,
    count: u64,
    l: &LatencySummary,
    errors: u64,
) -> io::Result<()> {
    writeln!(
        out,
        "{label:<32} {count:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {errors:>7}",
        format!("{:.1}", l.mean / 1000.0),
        ms(l.p50),
        ms(l.p90),
        ms(l.p99),
        ms(l.max)
    )
}

/// The summary line, the closing lines and the per-sampler table; each
/// result is one thread group's, named.
pub fn write_report(
    results: &[(&str, &RunResult)],
    started: SystemTime,
    out: &mut dyn Write,
) -> io::Result<()> {
    let now = SystemTime::now();
    let elapsed = now
        .duration_since(started)
        .map_or(0, |d| d.as_millis() as u64);
    let all: Vec<&RunResult> = results.iter().map(|(_, r)| *r).collect();
    writeln!(out, "{}", summary_line(&totals(&all, elapsed)))?;
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
        "{:<32} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "stampede: sampler (ms)", "count", "avg", "p50", "p90", "p99", "max", "errors"
    )?;
    for (group, result) in results {
        if result.targets.is_empty() {
            let r = &result.requests;
            row(
                out,
                group,
                r.completed + r.errors,
                &result.latency_us,
                errors(result),
            )?;
            continue;
        }
        for target in &result.targets {
            let label = format!(
                "{group} / {}",
                target.name.as_deref().unwrap_or(&target.url)
            );
            let failed = target.failed_status + target.errors + target.check_failed;
            row(out, &label, target.finished, &target.latency_us, failed)?;
        }
    }
    // Synchronizing Timers: how close together each released batch sent.
    for (group, result) in results {
        for line in stampede_report::describe_rendezvous(result) {
            writeln!(out, "stampede: Synchronizing Timer {group} / {line}")?;
        }
    }
    Ok(())
}
