//! `stampede compare A.json B.json [C.json…]`: one table, a column per file
//! and a row per figure, with the change against the first file and a verdict
//! per row. A file of repeated runs (`--repeat`) contributes the mean of its
//! completed rounds with its 95% confidence interval (the same figures as its
//! own `summary`), and wherever either side has rounds the verdict comes
//! from the interval of the difference (Welch's t, or a prediction interval
//! against a single run): "no significant difference" when it includes zero.
//! Different plans are named as warnings, once per file. `--from/--to`
//! compares the same window of every run, from its per-second histograms.
//!
//! Two experiments' files are compared variant by variant
//! (experiments.rs).
//!
//! The table's renderer (compare_text.rs) is shared with `stampede report`
//! of a saved comparison, so both print the same text.

mod experiments;

use crate::process::exports::write_file;
use crate::process::result_file::{self, ResultFile};
use anyhow::bail;
use stampede_analysis::{compare_samples, CompareDocument, CompareOptions, RunFigures, Sample};
use stampede_metrics::RunResult;
use stampede_report::{render_compare_html, Deltas, LabeledRun};
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "Examples:
  stampede compare before.json after.json
  stampede compare threads1.json threads2.json threads4.json
  stampede compare logs-on.json logs-off.json --json delta.json   # files from `run --repeat 5` get confidence intervals
  stampede report delta.json                                      # the saved comparison's table again
  stampede compare before.json after.json --from 60s              # leave the first minute (warm-up) out
  stampede compare before.json after.json --from 1m --to 5m       # the same window of both runs
  stampede compare monday.json friday.json                        # two experiments: each variant against itself";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct CompareArgs {
    /// Result files (stampede.result/1 or stampede.repeat/1), or experiments
    /// (stampede.experiment/1: each variant against the same variant); the
    /// first is the baseline
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    /// Relative changes within this band count as "same" (percent)
    #[arg(long, default_value_t = CompareOptions::default().noise_pct, value_name = "PCT")]
    pub noise: f64,
    /// Write the comparison (stampede.compare/1) as JSON to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report: the runs overlaid on the same axes
    /// and the deltas table
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Compare only the seconds from this time on (whole seconds since the
    /// start of measurement, e.g. 60s): counts, rates and exact percentiles
    /// from the runs' per-second histograms
    #[arg(long, value_parser = whole_seconds, value_name = "DUR")]
    pub from: Option<u64>,
    /// Compare only the seconds before this time (whole seconds, e.g. 5m)
    #[arg(long, value_parser = whole_seconds, value_name = "DUR")]
    pub to: Option<u64>,
}

/// `--from`/`--to`: a duration of whole seconds (the series is per second).
fn whole_seconds(text: &str) -> Result<u64, String> {
    let duration = stampede_plan::parse_duration(text).map_err(|e| e.to_string())?;
    if duration.subsec_nanos() != 0 {
        return Err(format!(
            "{text}: a window is whole seconds (the per-second histograms' resolution)"
        ));
    }
    Ok(duration.as_secs())
}

/// Narrows every run of every side to the window `--from`/`--to` asks for;
/// a file without per-second histograms, or with no second in the window,
/// is an error naming it.
fn apply_window(
    sides: &mut [Side],
    files: &[PathBuf],
    from: u64,
    to: Option<u64>,
) -> anyhow::Result<()> {
    if to.is_some_and(|to| to <= from) {
        bail!(
            "--to must be after --from (the window is {})",
            stampede_metrics::window_text(from, to)
        );
    }
    for (side, path) in sides.iter_mut().zip(files) {
        for run in &mut side.runs {
            *run = stampede_metrics::window_of(run, from, to)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// One file: a single run, or the completed rounds of a repeat file.
pub struct Side {
    pub label: String,
    pub runs: Vec<RunResult>,
}

/// Reads a result or repeat file; of a repeat file, the rounds that ran to
/// their end (what its summary averages).
pub fn read_side(path: &Path) -> anyhow::Result<Side> {
    let label = result_file::label(path);
    let runs = match result_file::read(path)? {
        ResultFile::Run(run) => vec![*run],
        ResultFile::Repeat(repeat) => {
            let completed: Vec<RunResult> = repeat.completed().cloned().collect();
            if completed.is_empty() {
                bail!(
                    "{}: no round ran to its end (round 1 was interrupted): nothing to compare",
                    path.display()
                );
            }
            completed
        }
        other => {
            return Err(result_file::refuse(
                &other,
                path,
                "a run's result or a file of repeated rounds",
            ))
        }
    };
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

/// Experiments: each variant against the variant of the same name.
fn compare_experiments(
    args: &CompareArgs,
    docs: &[(String, stampede_analysis::ExperimentDocument)],
) -> anyhow::Result<i32> {
    if args.json.is_some() || args.html.is_some() {
        bail!("compare of experiments prints one table per variant; --json and --html compare runs (an experiment's own page: report FILE --html)");
    }
    if args.from.is_some() || args.to.is_some() {
        bail!("compare of experiments compares whole runs; --from and --to take run files (an experiment keeps each variant's runs in its JSON)");
    }
    experiments::check_variants(&args.files, docs)?;
    let options = CompareOptions {
        noise_pct: args.noise,
        ..CompareOptions::default()
    };
    print!("{}", experiments::render(docs, &options)?);
    Ok(crate::process::exit::OK)
}

/// The round drawn for a file of rounds in the HTML overlays: the one whose
/// goodput is nearest the mean, so the curve is a typical round, not the last.
fn representative(side: &Side) -> &RunResult {
    let mean = side.runs.iter().map(|r| r.goodput).sum::<f64>() / side.runs.len() as f64;
    side.runs
        .iter()
        .min_by(|a, b| {
            (a.goodput - mean)
                .abs()
                .total_cmp(&(b.goodput - mean).abs())
        })
        .expect("read_side returns at least one run")
}

pub fn execute(args: CompareArgs) -> anyhow::Result<i32> {
    if let Some(docs) = experiments::read_all(&args.files)? {
        return compare_experiments(&args, &docs);
    }
    let mut sides: Vec<Side> = args
        .files
        .iter()
        .map(|p| read_side(p))
        .collect::<anyhow::Result<_>>()?;
    let window = (args.from.is_some() || args.to.is_some()).then(|| {
        let from = args.from.unwrap_or(0);
        (from, args.to)
    });
    if let Some((from, to)) = window {
        apply_window(&mut sides, &args.files, from, to)?;
    }
    let options = CompareOptions {
        noise_pct: args.noise,
        ..CompareOptions::default()
    };
    let samples: Vec<Sample> = sides
        .iter()
        .map(|s| Sample {
            label: s.label.clone(),
            runs: s.runs.iter().map(|r| figures(&s.label, r)).collect(),
        })
        .collect();
    let mut comparison = compare_samples(&samples, &options)?;
    comparison.window = window.map(|(from, to)| stampede_metrics::window_text(from, to));
    let document = CompareDocument::new(comparison);
    // Saved before printing, as a run's result is: the table is printed
    // even when a file cannot be written.
    let saved = args
        .json
        .as_ref()
        .map(|path| {
            crate::process::output::write_json_value(&serde_json::to_value(&document)?, path)
        })
        .transpose();
    let html = args.html.as_ref().map(|path| {
        let shown: Vec<LabeledRun<'_>> = sides
            .iter()
            .map(|s| LabeledRun {
                label: &s.label,
                result: representative(s),
            })
            .collect();
        write_file(path, |out| {
            render_compare_html(&shown, Deltas::Runs(&document.comparison), out)
        })
    });
    let on_stderr = args
        .json
        .as_deref()
        .is_some_and(crate::process::output::is_stdout);
    crate::process::output::print_text(on_stderr, |out| {
        stampede_report::render_compare_text(&document.comparison, out)
    })?;
    saved?;
    html.transpose()?;
    Ok(crate::process::exit::OK)
}
