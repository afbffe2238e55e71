//! `stampede report FILE`: re-renders a saved result (a run's
//! `stampede.result/1`, or a sweep's `stampede.sweep/1`) as text, JSON, HTML
//! or CSV, exactly as a fresh run would have been.

use crate::output::{self, OutputFormat};
use anyhow::{bail, Context};
use stampede_analysis::{analyze_sweep, Load, StepInput, Thresholds, SWEEP_SCHEMA};
use stampede_metrics::{RunResult, RESULT_SCHEMA};
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "Examples:
  stampede report result.json                       # the text summary again
  stampede report result.json --html report.html    # one self-contained, offline HTML file
  stampede report result.json --csv percentiles.csv --csv-timeseries series.csv
  stampede report sweep.json --html sweep.html      # a sweep written by `stampede sweep --json`";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ReportArgs {
    /// A result written with --json: a run (stampede.result/1) or a sweep (stampede.sweep/1)
    pub file: PathBuf,
    /// Write an HTML report (one self-contained file with interactive charts) to PATH
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write ab's -e percentile table (percent, milliseconds) to PATH (runs only)
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the per-second time series as CSV to PATH (runs only)
    #[arg(long, value_name = "PATH")]
    pub csv_timeseries: Option<PathBuf>,
    /// What to print on stdout (runs); a sweep prints its steps table
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

pub fn execute(args: ReportArgs) -> anyhow::Result<i32> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let document: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.file.display()))?;
    match document.get("schema").and_then(|s| s.as_str()) {
        Some(RESULT_SCHEMA) => report_run(&args, &text),
        Some(SWEEP_SCHEMA) => report_sweep(&args, &document),
        Some(other) => bail!(
            "{}: schema '{other}' is not one stampede report reads ({RESULT_SCHEMA}, {SWEEP_SCHEMA})",
            args.file.display()
        ),
        None => bail!("{}: not a stampede result (no schema tag)", args.file.display()),
    }
}

fn report_run(args: &ReportArgs, text: &str) -> anyhow::Result<i32> {
    let result =
        RunResult::from_json(text).with_context(|| format!("reading {}", args.file.display()))?;
    let exports = crate::exports::ExportArgs {
        html: args.html.clone(),
        csv: args.csv.clone(),
        csv_timeseries: args.csv_timeseries.clone(),
        ..Default::default()
    };
    crate::exports::write_exports(&result, &exports)?;
    output::print(&result, args.output)?;
    Ok(crate::exit::OK)
}

/// The steps of a sweep document: each carries its load (`connections` or
/// `rate`, flattened) and its full `result`.
fn sweep_steps(document: &serde_json::Value) -> anyhow::Result<Vec<(Load, RunResult)>> {
    let steps = document
        .get("steps")
        .and_then(|s| s.as_array())
        .context("the sweep has no steps")?;
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let load = if let Some(n) = step.get("connections").and_then(|v| v.as_u64()) {
                Load::Connections(n)
            } else if let Some(r) = step.get("rate").and_then(|v| v.as_f64()) {
                Load::Rate(r)
            } else {
                bail!("step {} has neither connections nor rate", i + 1)
            };
            let result = step
                .get("result")
                .with_context(|| format!("step {} has no result", i + 1))?;
            let result: RunResult = serde_json::from_value(result.clone())
                .with_context(|| format!("step {}: not a stampede result", i + 1))?;
            Ok((load, result))
        })
        .collect()
}

fn report_sweep(args: &ReportArgs, document: &serde_json::Value) -> anyhow::Result<i32> {
    if args.csv.is_some() || args.csv_timeseries.is_some() {
        bail!("--csv and --csv-timeseries export one run; use them on a step's result");
    }
    let steps = sweep_steps(document)?;
    let inputs: Vec<StepInput> = steps
        .iter()
        .map(|(load, result)| StepInput::from_result(*load, result))
        .collect();
    // The classification is recomputed from the saved figures with the
    // default thresholds; the verdict sentences saved by the sweep (which
    // may reflect its --slo and thresholds) are kept when present.
    let mut analysis = analyze_sweep(&inputs, None, &Thresholds::default());
    if let Some(verdict) = document.get("verdict").and_then(|v| v.as_array()) {
        analysis.verdict = verdict
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect();
    }
    if let Some(path) = &args.html {
        let views: Vec<stampede_report::SweepStep<'_>> = steps
            .iter()
            .map(|(load, result)| stampede_report::SweepStep {
                load: *load,
                result,
            })
            .collect();
        crate::exports::write_file(path, |out| {
            stampede_report::render_sweep_html(&views, &analysis, out)
        })?;
    }
    print_sweep_summary(&analysis, &args.file)?;
    Ok(crate::exit::OK)
}

fn print_sweep_summary(
    analysis: &stampede_analysis::SweepAnalysis,
    file: &Path,
) -> anyhow::Result<()> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "sweep {}", file.display())?;
    for step in &analysis.steps {
        writeln!(
            out,
            "  {:>24}  {:>14} req/s  {:>10}  {}",
            step.load.to_string(),
            stampede_report::format_rate(step.goodput),
            step.class.as_str(),
            step.rule
        )?;
    }
    for line in &analysis.verdict {
        writeln!(out, "  {line}")?;
    }
    out.flush()?;
    Ok(())
}
