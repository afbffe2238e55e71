//! Repeated runs of one plan: `--repeat N` for statistics, and
//! `--until-stable FIGURE:PCT%`, which keeps running rounds until the chosen
//! figure's 95% confidence interval is within ±PCT% of its mean (bounded by
//! -d), so nobody has to guess a duration. Writes `stampede.repeat/1`
//! (stampede-analysis' `RepeatDocument`); the summary is over the rounds that
//! ran to their end, and an interrupted series says how many that was.
//!
//! Its text renderer is shared with `stampede report` of a repeat file, so
//! both print the same.

use crate::flags::run_args::SloArg;
use crate::process::exit;
use crate::process::exports::{write_file, ExportArgs};
use crate::process::interrupt;
use crate::process::output::write_json_value;
use crate::session::delivery::exit_status;
use crate::session::{run_plan_in, RunContext};
use anyhow::bail;
use stampede_analysis::{
    compare, summarize_rounds, CompareOptions, Figure, RepeatDocument, RunFigures, StableTarget,
};
use stampede_metrics::RunResult;
use stampede_plan::{Plan, StopCondition};
use stampede_report::{render_compare_html, Deltas, LabeledRun};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Confidence of the reported intervals.
const CONFIDENCE: f64 = 0.95;
/// Rounds needed before an interval means anything.
const MIN_STABLE_ROUNDS: usize = 3;

/// How many rounds to run.
pub enum Rounds {
    Fixed(usize),
    UntilStable {
        target: StableTarget,
        round: Duration,
        budget: Duration,
    },
}

/// Figures summarized across rounds.
const SUMMARY_FIGURES: [Figure; 6] = [
    Figure::Goodput,
    Figure::Rps,
    Figure::ErrorRate,
    Figure::P50,
    Figure::P99,
    Figure::Max,
];

pub struct RepeatOutput<'a> {
    pub json: Option<&'a PathBuf>,
    pub quiet: bool,
    /// `--html` overlays the rounds; the other exports are of one run.
    pub exports: &'a ExportArgs,
}

/// Runs the rounds, prints the table and intervals, writes the file.
/// The plan each round runs, with its workload (templates, checks, steps).
pub struct Planned {
    pub plan: Plan,
    pub workload: Option<std::sync::Arc<stampede_engine::WorkloadSpec>>,
    /// The plan's name each round's result carries (`plan.name`).
    pub name: Option<String>,
}

pub fn execute(
    planned: Planned,
    notices: Vec<String>,
    rounds: Rounds,
    pids: &[u32],
    slo: Option<&SloArg>,
    output: RepeatOutput,
) -> anyhow::Result<i32> {
    let Planned {
        mut plan,
        workload,
        name,
    } = planned;
    let (max_rounds, target) = match rounds {
        Rounds::Fixed(n) => (n, None),
        Rounds::UntilStable {
            target,
            round,
            budget,
        } => {
            if round > budget {
                bail!("--round is longer than -d: no round fits");
            }
            plan.stop = StopCondition::Duration(round);
            let fit = (budget.as_secs_f64() / round.as_secs_f64()).floor() as usize;
            (fit.max(1), Some(target))
        }
    };
    if max_rounds == 0 {
        bail!("--repeat needs at least 1 round");
    }
    let exports = output.exports;
    if exports.csv.is_some()
        || exports.csv_timeseries.is_some()
        || exports.gnuplot.is_some()
        || exports.log_requests.is_some()
    {
        bail!(
            "--csv, --csv-timeseries, --gnuplot and --log-requests export one run; \
             with --repeat or --until-stable only --json and --html (the rounds overlaid) are written"
        );
    }
    let stop = interrupt::stop_handle()?;
    let mut results: Vec<RunResult> = Vec::new();
    let mut stable = false;
    for round in 1..=max_rounds {
        if !output.quiet {
            eprintln!("stampede: round {round}/{max_rounds}");
        }
        if let Some(workload) = &workload {
            // Each round uses every unique row once.
            workload.rewind();
        }
        let context = RunContext {
            quiet: output.quiet,
            pids,
            slo,
            exports: None,
            hlog: (exports.hlog_target()).map(|t| t.part(&format!("round{round}"))),
            banner: vec![format!("round {round} of at most {max_rounds}")],
            workload: workload.clone(),
            ..RunContext::default()
        };
        let mut result = run_plan_in(&plan, notices.clone(), &context)?;
        result.plan.name = name.clone();
        let interrupted = result.interrupted;
        results.push(result);
        if interrupted || stop.is_stopped() {
            break;
        }
        if let Some(target) = target {
            let interval = summarize_rounds(&results, target.figure, CONFIDENCE);
            if results.len() >= MIN_STABLE_ROUNDS
                && interval.is_some_and(|i| i.within_pct(target.within_pct))
            {
                stable = true;
                break;
            }
        }
    }
    // The --until-stable figure is summarized too (p90 and p99.9 are not
    // by default): its interval is the one the stop was decided on.
    let mut figures = SUMMARY_FIGURES.to_vec();
    if let Some(target) = target.filter(|t| !figures.contains(&t.figure)) {
        figures.push(target.figure);
    }
    let document = RepeatDocument::new(results, &figures, CONFIDENCE, target, stable);
    let saved = output
        .json
        .map(|path| write_json_value(&serde_json::to_value(&document)?, path))
        .transpose();
    let html = exports
        .html
        .as_ref()
        .map(|path| write_html(&document, path))
        .transpose();
    // With `--json -` the file is stdout: the table moves to stderr.
    let on_stderr = output
        .json
        .is_some_and(|path| crate::process::output::is_stdout(path));
    print(&document, on_stderr)?;
    saved?;
    html?;
    let results = &document.runs;
    // A stop between two rounds interrupts the series, not a round.
    let interrupted = document.interrupted || stop.is_stopped();
    let failed = results
        .iter()
        .any(|r| exit_status(r) == exit::THRESHOLD_FAILED);
    Ok(if interrupted {
        crate::process::interrupt::status()
    } else if failed {
        exit::THRESHOLD_FAILED
    } else {
        exit::OK
    })
}

/// The rounds overlaid on shared axes with a table of each against round 1
/// (the compare page): what `--html` writes for a series of rounds.
pub fn write_html(document: &RepeatDocument, path: &Path) -> anyhow::Result<()> {
    if document.runs.len() < 2 {
        bail!("--html of repeated rounds overlays them, and there is only one round");
    }
    let labels: Vec<String> = (1..=document.runs.len())
        .map(|i| format!("round {i}"))
        .collect();
    let figures: Vec<RunFigures> = document
        .runs
        .iter()
        .zip(&labels)
        .map(|(r, label)| RunFigures::of(label.as_str(), r))
        .collect();
    let comparison = compare(&figures, &CompareOptions::default())?;
    let runs: Vec<LabeledRun<'_>> = document
        .runs
        .iter()
        .zip(&labels)
        .map(|(result, label)| LabeledRun { label, result })
        .collect();
    write_file(path, |out| {
        render_compare_html(&runs, Deltas::Runs(&comparison), out)
    })
}

/// Prints the rounds and their summary on stdout (on stderr when the JSON
/// itself goes to stdout).
pub fn print(document: &RepeatDocument, on_stderr: bool) -> anyhow::Result<()> {
    crate::process::output::print_text(on_stderr, |out| {
        stampede_report::render_repeat_text(document, out)
    })
}
