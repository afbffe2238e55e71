//! `stampede report FILE`: re-renders any file stampede writes, by its
//! schema tag, exactly as the fresh command printed it: a run's
//! `stampede.result/1` (also what `merge` writes) as text, JSON, HTML or CSV;
//! a `stampede.repeat/1` file's rounds and summary; a saved comparison
//! (`stampede.compare/1`); a sweep's `stampede.sweep/1`; an experiment's
//! `stampede.experiment/1`. The repeat and
//! compare tables come from the same renderers as the fresh commands.

use crate::process::hlog_report as report_hlog;
use crate::process::output::{self, OutputFormat};
use crate::process::result_file::{self, ResultFile};
use anyhow::{bail, Context};
use stampede_analysis::{CompareDocument, ExperimentDocument, RepeatDocument, SweepDocument};
use stampede_metrics::RunResult;
use std::io::Write;
use std::path::PathBuf;

const EXAMPLES: &str = "Examples:
  stampede report result.json                       # the text summary again
  stampede report result.json --html report.html    # one self-contained, offline HTML file
  stampede report result.json --csv percentiles.csv --csv-timeseries series.csv
  stampede report sweep.json --html sweep.html      # a sweep written by `stampede sweep --json`
  stampede report rounds.json                       # a `run --repeat` file: its rounds and their mean
  stampede report delta.json                        # a comparison saved by `compare --json`
  stampede report exp.json --html exp.html          # an experiment's table and verdicts, and its page
  stampede report run.hlog --from 30s --to 90s      # an interval log (--hlog): each tag's percentiles
  stampede report run.hlog --tag latency -o json
  stampede report run.hlog --tag latency --per-interval --from 4m --to 5m   # second by second";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ReportArgs {
    /// A file written with --json: a run or merge (stampede.result/1), repeated
    /// rounds (stampede.repeat/1), a comparison (stampede.compare/1), a sweep
    /// (stampede.sweep/1) or an experiment (stampede.experiment/1), or an
    /// interval log written with --hlog
    pub file: PathBuf,
    /// Interval log: count the intervals that start at or after this time
    /// since the log's start (e.g. 30s)
    #[arg(long, value_parser = stampede_plan::parse_duration, value_name = "DUR")]
    pub from: Option<std::time::Duration>,
    /// Interval log: count the intervals that start before this time
    #[arg(long, value_parser = stampede_plan::parse_duration, value_name = "DUR")]
    pub to: Option<std::time::Duration>,
    /// Interval log: only this tag (repeatable), e.g. latency, service, ttfb
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Interval log: print each interval's count and percentiles too, a
    /// table per tag (the JSON always has them, as `per_interval`)
    #[arg(long)]
    pub per_interval: bool,
    /// Write an HTML report (one self-contained file with interactive charts) to PATH:
    /// a run, repeat, sweep, comparison or experiment
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
    let is_hlog = args.file.extension().is_some_and(|e| e == "hlog");
    let bytes = match std::fs::read(&args.file) {
        Ok(bytes) => bytes,
        Err(e) if is_hlog => bail!("{}: {e}", args.file.display()),
        Err(_) => Vec::new(),
    };
    if (is_hlog || !bytes.is_empty())
        && crate::process::hlog_file::looks_like_hlog(&args.file, &bytes)
    {
        return report_hlog(&args, &bytes);
    }
    if args.from.is_some() || args.to.is_some() || !args.tags.is_empty() || args.per_interval {
        bail!(
            "--from, --to, --tag and --per-interval read an interval log (--hlog), and {} is not one",
            args.file.display()
        );
    }
    match result_file::read(&args.file)? {
        ResultFile::Run(result) => report_run(&args, &result),
        ResultFile::Repeat(document) => report_repeat(&args, &document),
        ResultFile::Compare(document) => report_compare(&args, &document),
        ResultFile::Sweep(document) => report_sweep(&args, &document),
        ResultFile::Experiment(document) => report_experiment(&args, &document),
    }
}

/// The table, bottlenecks and verdicts, as `experiment` printed them, and
/// with --html its page, as `experiment --html` wrote it.
fn report_experiment(args: &ReportArgs, document: &ExperimentDocument) -> anyhow::Result<i32> {
    refuse_csv(args, "an experiment (use them on a run's result)")?;
    if let Some(path) = &args.html {
        crate::process::exports::write_file(path, |out| {
            stampede_report::render_experiment_html(document, out)
        })?;
    }
    match args.output {
        OutputFormat::Text => print!("{}", stampede_report::render_experiment_text(document)),
        OutputFormat::Json => print_json(serde_json::to_value(document)?)?,
    }
    Ok(crate::process::exit::OK)
}

/// An interval log's percentiles per tag over the asked time range.
fn report_hlog(args: &ReportArgs, bytes: &[u8]) -> anyhow::Result<i32> {
    if args.html.is_some() || args.csv.is_some() || args.csv_timeseries.is_some() {
        bail!(
            "{}: an interval log prints its percentiles; --html and --csv render a run's result",
            args.file.display()
        );
    }
    let file = crate::process::hlog_file::read_hlog_bytes(&args.file, bytes)?;
    let range = report_hlog::HlogRange {
        from: args.from,
        to: args.to,
        tags: args.tags.clone(),
        per_interval: args.per_interval,
    };
    let totals = report_hlog::totals(&file, &range)?;
    report_hlog::print(&args.file, file.cut_at_line, &range, &totals, args.output)?;
    Ok(crate::process::exit::OK)
}

fn report_run(args: &ReportArgs, result: &RunResult) -> anyhow::Result<i32> {
    let exports = crate::process::exports::ExportArgs {
        html: args.html.clone(),
        csv: args.csv.clone(),
        csv_timeseries: args.csv_timeseries.clone(),
        ..Default::default()
    };
    crate::process::exports::write_exports(result, &exports)?;
    output::print(result, args.output)?;
    Ok(crate::process::exit::OK)
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
        crate::session::repeat::write_html(document, path)
            .with_context(|| format!("{}", args.file.display()))?;
    }
    match args.output {
        OutputFormat::Text => crate::session::repeat::print(document, false)?,
        OutputFormat::Json => print_json(serde_json::to_value(document)?)?,
    }
    Ok(crate::process::exit::OK)
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
        OutputFormat::Text => output::print_text(false, |out| {
            stampede_report::render_compare_text(&document.comparison, out)
        })?,
        OutputFormat::Json => print_json(serde_json::to_value(document)?)?,
    }
    Ok(crate::process::exit::OK)
}

/// The steps table, verdict and warnings as the sweep printed them, from the
/// analysis it saved (made with its --slo and thresholds); `--html` the
/// sweep's page.
fn report_sweep(args: &ReportArgs, document: &SweepDocument) -> anyhow::Result<i32> {
    refuse_csv(args, "a sweep (use them on a step's result)")?;
    let (analysis, steps) = (&document.analysis, &document.steps);
    if let Some(path) = &args.html {
        let views: Vec<stampede_report::SweepStep<'_>> = steps
            .iter()
            .map(|(load, result)| stampede_report::SweepStep {
                load: *load,
                result,
            })
            .collect();
        crate::process::exports::write_file(path, |out| {
            stampede_report::render_sweep_html(&views, analysis, out)
        })?;
    }
    output::print_text(false, |out| {
        stampede_report::render_sweep_text(analysis, steps, out)
    })?;
    Ok(crate::process::exit::OK)
}
