//! `stampede report FILE`: re-renders any file stampede writes, by its
//! schema tag, exactly as the fresh command printed it: a run's
//! `stampede.result/1` (also what `merge` writes) as text, JSON, HTML or CSV;
//! a `stampede.repeat/1` file's rounds and summary; a saved comparison
//! (`stampede.compare/1`); a sweep's `stampede.sweep/1`. The repeat and
//! compare tables come from the same renderers as the fresh commands.

use crate::output::{self, OutputFormat};
use crate::result_file::{self, ResultFile};
use anyhow::{bail, Context};
use stampede_analysis::{
    analyze_sweep, CompareDocument, Load, RepeatDocument, StepInput, SweepAnalysis, Thresholds,
};
use stampede_metrics::RunResult;
use std::io::Write;
use std::path::PathBuf;

const EXAMPLES: &str = "Examples:
  stampede report result.json                       # the text summary again
  stampede report result.json --html report.html    # one self-contained, offline HTML file
  stampede report result.json --csv percentiles.csv --csv-timeseries series.csv
  stampede report sweep.json --html sweep.html      # a sweep written by `stampede sweep --json`
  stampede report rounds.json                       # a `run --repeat` file: its rounds and their mean
  stampede report delta.json                        # a comparison saved by `compare --json`";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ReportArgs {
    /// A file written with --json: a run or merge (stampede.result/1), repeated
    /// rounds (stampede.repeat/1), a comparison (stampede.compare/1) or a sweep
    /// (stampede.sweep/1)
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
    /// What to print on stdout: the text, or the file's JSON (a sweep prints
    /// its steps table)
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

pub fn execute(args: ReportArgs) -> anyhow::Result<i32> {
    match result_file::read(&args.file)? {
        ResultFile::Run(result) => report_run(&args, &result),
        ResultFile::Repeat(document) => report_repeat(&args, &document),
        ResultFile::Compare(document) => report_compare(&args, &document),
        ResultFile::Sweep(document) => report_sweep(&args, &document),
    }
}

fn report_run(args: &ReportArgs, result: &RunResult) -> anyhow::Result<i32> {
    let exports = crate::exports::ExportArgs {
        html: args.html.clone(),
        csv: args.csv.clone(),
        csv_timeseries: args.csv_timeseries.clone(),
        ..Default::default()
    };
    crate::exports::write_exports(result, &exports)?;
    output::print(result, args.output)?;
    Ok(crate::exit::OK)
}

/// The file's JSON on stdout (`-o json`).
fn print_json(document: serde_json::Value) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    serde_json::to_writer_pretty(&mut out, &document).context("writing to stdout")?;
    writeln!(out).context("writing to stdout")?;
    Ok(())
}

fn refuse_csv(args: &ReportArgs, what: &str) -> anyhow::Result<()> {
    if args.csv.is_some() || args.csv_timeseries.is_some() {
        bail!(
            "{}: --csv and --csv-timeseries export one run, and this is {what}",
            args.file.display()
        );
    }
    Ok(())
}

/// The rounds table and summary, as `run --repeat` printed them; `--html`
/// overlays the rounds (each against round 1).
fn report_repeat(args: &ReportArgs, document: &RepeatDocument) -> anyhow::Result<i32> {
    refuse_csv(args, "a file of repeated rounds")?;
    if let Some(path) = &args.html {
        crate::repeat::write_html(document, path)
            .with_context(|| format!("{}", args.file.display()))?;
    }
    match args.output {
        OutputFormat::Text => crate::repeat::print(document, false)?,
        OutputFormat::Json => print_json(serde_json::to_value(document)?)?,
    }
    Ok(crate::exit::OK)
}

/// The comparison table, as `compare` printed it.
fn report_compare(args: &ReportArgs, document: &CompareDocument) -> anyhow::Result<i32> {
    refuse_csv(args, "a comparison")?;
    if args.html.is_some() {
        bail!(
            "{}: a saved comparison holds the figures, not the runs the charts are drawn from; \
             `stampede compare A.json B.json --html PATH` writes its HTML",
            args.file.display()
        );
    }
    match args.output {
        OutputFormat::Text => crate::compare_text::print(&document.comparison, false)?,
        OutputFormat::Json => print_json(serde_json::to_value(document)?)?,
    }
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
    refuse_csv(args, "a sweep (use them on a step's result)")?;
    let steps = sweep_steps(document)?;
    // The analysis the sweep saved (classes, rules, verdict, warnings: made
    // with its --slo and thresholds) is printed as the sweep printed it;
    // only a file without one is classified again, with the defaults.
    let analysis = match serde_json::from_value::<SweepAnalysis>(document.clone()) {
        Ok(saved) if saved.steps.len() == steps.len() => saved,
        _ => {
            let inputs: Vec<StepInput> = steps
                .iter()
                .map(|(load, result)| StepInput::from_result(*load, result))
                .collect();
            analyze_sweep(&inputs, None, &Thresholds::default())
        }
    };
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
    crate::sweep_text::print_sweep(&analysis, &steps, false)?;
    Ok(crate::exit::OK)
}
