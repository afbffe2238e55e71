//! The text of a sweep: the live view's banner during a step, the steps
//! table (every column but the last right-aligned, widths in characters),
//! the verdict and the warnings. `stampede sweep` prints it and `stampede
//! report` of the sweep's file prints it again; the analysis behind it is
//! stampede-analysis' `analyze_sweep`.

use crate::{format_count, format_latency_us, format_rate};
use stampede_analysis::{Load, SweepAnalysis};
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// The live view's banner during a step: which step runs, and the finished ones.
pub fn sweep_banner(
    index: usize,
    total: usize,
    load: Load,
    done: &[(Load, RunResult)],
) -> Vec<String> {
    let mut lines = vec![format!(
        "sweep step {}/{total}: {}",
        index + 1,
        describe_load(load)
    )];
    for (finished, result) in done {
        lines.push(format!(
            "  done {:>16}: goodput {:>12} req/s, p99 {:>9}, errors {:.2}%",
            describe_load(*finished),
            format_rate(result.goodput),
            format_latency_us(result.latency_us.p99 as f64),
            result.error_rate_pct
        ));
    }
    lines
}

/// `1 connection`, `50 connections`, `1,500 req/s` (decimals only when the
/// offered rate has them).
pub fn describe_load(load: Load) -> String {
    match load {
        Load::Connections(1) => "1 connection".to_string(),
        Load::Connections(c) => format!("{} connections", format_count(c)),
        Load::Rate(r) if r.fract() == 0.0 && r < u64::MAX as f64 => {
            format!("{} req/s", format_count(r as u64))
        }
        Load::Rate(r) => format!("{} req/s", format_rate(r)),
    }
}

/// Lays out a table: every column but the last right-aligned to its widest
/// cell (header included), two spaces apart; the last (the class and its
/// rule, free text) left as it is. Widths count characters, not bytes.
fn align(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter()
            .filter_map(|row| row.get(c))
            .map(|cell| cell.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..columns).map(width).collect();
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                if c + 1 == columns {
                    line.push_str(cell);
                } else {
                    let pad = widths[c] - cell.chars().count();
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
            line
        })
        .collect()
}

/// The steps table: a header and a row per step.
fn steps_table(analysis: &SweepAnalysis, results: &[(Load, RunResult)]) -> Vec<String> {
    let header = [
        "load",
        "goodput/s",
        "rps",
        "p50",
        "p99",
        "errors",
        "class: rule",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for (step, (load, result)) in analysis.steps.iter().zip(results) {
        rows.push(vec![
            describe_load(*load),
            format_rate(result.goodput),
            format_rate(result.rps),
            format_latency_us(result.latency_us.p50 as f64),
            format_latency_us(result.latency_us.p99 as f64),
            format!("{:.2}%", result.error_rate_pct),
            format!("{}: {}", step.class.as_str(), step.rule),
        ]);
    }
    align(&rows)
}

/// A run's "too few connections for the rate" (Little's law on its own
/// figures) is wrong advice at a step whose server the sweep found
/// saturated: more connections would only queue there, and the analysis'
/// own Little's-law warning says so.
fn contradicted(step: &stampede_analysis::StepAnalysis, warning: &str) -> bool {
    step.server_saturation.is_some() && warning.starts_with("too few connections for the rate")
}

/// The steps table, verdict and warnings, as `stampede sweep` prints them
/// and `stampede report` of its file prints them again.
pub fn render_sweep_text(
    analysis: &SweepAnalysis,
    results: &[(Load, RunResult)],
    out: &mut dyn Write,
) -> io::Result<()> {
    for line in steps_table(analysis, results) {
        writeln!(out, "{line}")?;
    }
    writeln!(out)?;
    for sentence in &analysis.verdict {
        writeln!(out, "{sentence}")?;
    }
    for warning in &analysis.warnings {
        writeln!(out, "WARNING: {warning}")?;
    }
    for (step, (load, result)) in analysis.steps.iter().zip(results) {
        for warning in result.warnings.iter().filter(|w| !contradicted(step, w)) {
            writeln!(out, "WARNING ({}): {warning}", describe_load(*load))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where each column of `line` ends, given the header's column ends.
    fn ends_at(line: &str, end: usize) -> bool {
        let chars: Vec<char> = line.chars().collect();
        end <= chars.len() && chars[end - 1] != ' ' && chars.get(end).is_none_or(|c| *c == ' ')
    }

    #[test]
    fn columns_line_up_for_any_width_of_numbers() {
        let row = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        let rows = vec![
            row(&["load", "goodput/s", "rps", "p99", "class: rule"]),
            row(&[
                "1 connection",
                "9.50",
                "9.50",
                "850us",
                "healthy: first step",
            ]),
            row(&[
                "1,000,000 req/s",
                "1,234,567.89",
                "1,234,567.89",
                "1.25s",
                "saturated: µs",
            ]),
            row(&[
                "50 connections",
                "0.00",
                "12.00",
                "12.34ms",
                "overloaded: x",
            ]),
        ];
        let lines = align(&rows);
        let header = &lines[0];
        // Right-aligned columns: every cell ends where the widest does.
        let widths = [15, 12, 12, 7];
        let mut end = 0;
        for (c, w) in widths.iter().enumerate() {
            end += w + if c > 0 { 2 } else { 0 };
            for line in &lines {
                assert!(
                    ends_at(line, end),
                    "column {c} ends at {end}: {line:?}\n{header:?}"
                );
            }
        }
        // The free-text column starts at one place in every row.
        let start = end + 2;
        for (line, row) in lines.iter().zip(&rows) {
            let text: String = line.chars().skip(start).collect();
            assert_eq!(&text, row.last().unwrap());
        }
        assert_eq!(describe_load(Load::Connections(1)), "1 connection");
        assert_eq!(describe_load(Load::Rate(1500.0)), "1,500 req/s");
        assert_eq!(describe_load(Load::Rate(7.5)), "7.50 req/s");
    }
}
