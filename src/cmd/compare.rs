//! `stampede compare A.json B.json [C.json…]`: one table, a column per run and
//! a row per figure, with the change against the first run and a verdict per
//! row. Two files of repeated runs (`--repeat`) get the mean difference with a
//! 95% confidence interval instead (Welch), and "no significant difference"
//! when it includes zero. Different plans are named as warnings.

use crate::cmd::repeat::REPEAT_SCHEMA;
use crate::exports::write_file;
use anyhow::{bail, Context};
use stampede_analysis::{
    compare, compare_repeated, CompareOptions, Comparison, RepeatedComparison, RunFigures,
};
use stampede_metrics::{RunResult, RESULT_SCHEMA};
use stampede_report::{render_compare_html, Deltas, LabeledRun};
use std::io::Write;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "Examples:
  stampede compare before.json after.json
  stampede compare threads1.json threads2.json threads4.json
  stampede compare logs-on.json logs-off.json --json delta.json   # files from `run --repeat 5` get confidence intervals";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct CompareArgs {
    /// Result files (stampede.result/1 or stampede.repeat/1); the first is the baseline
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    /// Relative changes within this band count as "same" (percent)
    #[arg(long, default_value_t = CompareOptions::default().noise_pct, value_name = "PCT")]
    pub noise: f64,
    /// Write the comparison as JSON to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report: the runs overlaid on the same axes
    /// and the deltas table
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

/// One file: a single run, or repeated runs of one plan.
pub struct Side {
    pub label: String,
    pub runs: Vec<RunResult>,
}

/// Reads a result or repeat file.
pub fn read_side(path: &Path) -> anyhow::Result<Side> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let label = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let runs =
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(RESULT_SCHEMA) => vec![RunResult::from_json(&text)
                .with_context(|| format!("reading {}", path.display()))?],
            Some(REPEAT_SCHEMA) => serde_json::from_value(value["runs"].clone())
                .with_context(|| format!("reading the runs of {}", path.display()))?,
            other => bail!(
            "{}: not a stampede result (schema {:?}; expected {RESULT_SCHEMA} or {REPEAT_SCHEMA})",
            path.display(),
            other.unwrap_or("missing")
        ),
        };
    if runs.is_empty() {
        bail!("{}: holds no run", path.display());
    }
    Ok(Side { label, runs })
}

fn figures(label: &str, run: &RunResult) -> RunFigures {
    let mut figures = RunFigures::of(label, run);
    figures.server_cpu_s_per_1k = run.monitor.as_ref().and_then(|m| {
        m.servers()
            .filter_map(|s| s.cpu_s_per_1k_requests)
            .reduce(|a, b| a + b)
    });
    figures
}

pub fn execute(args: CompareArgs) -> anyhow::Result<i32> {
    let sides: Vec<Side> = args
        .files
        .iter()
        .map(|p| read_side(p))
        .collect::<anyhow::Result<_>>()?;
    let options = CompareOptions {
        noise_pct: args.noise,
        ..CompareOptions::default()
    };
    let repeated = sides.len() == 2 && sides.iter().all(|s| s.runs.len() >= 2);
    // One overlay per file: a file of repeats contributes its last run.
    let shown: Vec<LabeledRun<'_>> = sides
        .iter()
        .map(|s| LabeledRun {
            label: &s.label,
            result: s.runs.last().expect("checked non-empty"),
        })
        .collect();
    let (document, html) = if repeated {
        let side =
            |s: &Side| -> Vec<RunFigures> { s.runs.iter().map(|r| figures(&s.label, r)).collect() };
        let comparison = compare_repeated(&side(&sides[0]), &side(&sides[1]), &options)?;
        print_repeated(&comparison)?;
        let html = args.html.as_ref().map(|path| {
            write_file(path, |out| {
                render_compare_html(&shown, Deltas::Repeated(&comparison), out)
            })
        });
        (serde_json::to_value(&comparison)?, html)
    } else {
        let runs: Vec<RunFigures> = shown.iter().map(|r| figures(r.label, r.result)).collect();
        let comparison = compare(&runs, &options)?;
        print_table(&comparison)?;
        let html = args.html.as_ref().map(|path| {
            write_file(path, |out| {
                render_compare_html(&shown, Deltas::Runs(&comparison), out)
            })
        });
        (serde_json::to_value(&comparison)?, html)
    };
    if let Some(path) = &args.json {
        crate::output::write_json_value(&document, path)?;
    }
    html.transpose()?;
    Ok(crate::exit::OK)
}

fn cell(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| {
        if v.abs() >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    })
}

fn print_table(comparison: &Comparison) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    write!(out, "{:<22}", "figure")?;
    for label in &comparison.labels {
        write!(out, " {:>24}", truncate(label, 24))?;
    }
    writeln!(out)?;
    for row in &comparison.rows {
        write!(out, "{:<22}", format!("{} ({})", row.name, row.unit))?;
        for (i, value) in row.values.iter().enumerate() {
            let change = row.change_pct.get(i).copied().flatten();
            let verdict = row
                .verdicts
                .get(i)
                .map(|v| v.to_string())
                .unwrap_or_default();
            let text = match (i, change) {
                (0, _) => cell(*value),
                (_, Some(pct)) => format!("{} {pct:+.1}% {verdict}", cell(*value)),
                (_, None) => format!("{} {verdict}", cell(*value)),
            };
            write!(out, " {:>24}", text)?;
        }
        writeln!(out)?;
    }
    for warning in &comparison.warnings {
        writeln!(out, "WARNING: {warning}")?;
    }
    Ok(())
}

fn print_repeated(comparison: &RepeatedComparison) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(
        out,
        "{} vs {}: mean difference with its {:.0}% confidence interval (Welch)",
        comparison.candidate,
        comparison.baseline,
        comparison.confidence * 100.0
    )?;
    for row in &comparison.rows {
        writeln!(
            out,
            "  {:<10} {:>12} -> {:>12} {:<6} diff {:+.2} [{:+.2}, {:+.2}]{}  {}",
            row.name,
            cell(Some(row.mean_baseline)),
            cell(Some(row.mean_candidate)),
            row.unit,
            row.diff,
            row.ci_low,
            row.ci_high,
            row.diff_pct
                .map_or(String::new(), |p| format!(" ({p:+.1}%)")),
            row.verdict
        )?;
    }
    for warning in &comparison.warnings {
        writeln!(out, "WARNING: {warning}")?;
    }
    Ok(())
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let tail: String = text
            .chars()
            .rev()
            .take(width - 1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{tail}")
    }
}
