//! Repeated runs of one plan: `--repeat N` for statistics, and
//! `--until-stable FIGURE:PCT%`, which keeps running rounds until the chosen
//! figure's 95% confidence interval is within ±PCT% of its mean (bounded by
//! -d), so nobody has to guess a duration. Writes `stampede.repeat/1`.

use crate::cmd::run::{exit_status, run_plan_in, RunContext, SloArg};
use crate::exit;
use crate::interrupt;
use crate::output::write_json_value;
use anyhow::bail;
use stampede_analysis::{mean_interval, Figure, Interval, RunFigures, StableTarget};
use stampede_metrics::RunResult;
use stampede_plan::{Plan, StopCondition};
use stampede_report::{format_latency_us, format_rate};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// The schema tag of a file of repeated runs.
pub const REPEAT_SCHEMA: &str = "stampede.repeat/1";
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
}

/// Runs the rounds, prints the table and intervals, writes the file.
pub fn execute(
    mut plan: Plan,
    notices: Vec<String>,
    rounds: Rounds,
    pids: &[u32],
    slo: Option<&SloArg>,
    output: RepeatOutput,
) -> anyhow::Result<i32> {
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
    let stop = interrupt::stop_handle()?;
    let mut results: Vec<RunResult> = Vec::new();
    let mut stable: Option<Interval> = None;
    for round in 1..=max_rounds {
        if !output.quiet {
            eprintln!("stampede: round {round}/{max_rounds}");
        }
        let context = RunContext {
            quiet: output.quiet,
            pids,
            slo,
            exports: None,
            banner: vec![format!("round {round} of at most {max_rounds}")],
            ..RunContext::default()
        };
        let result = run_plan_in(&plan, notices.clone(), &context)?;
        let interrupted = result.interrupted;
        results.push(result);
        if interrupted || stop.is_stopped() {
            break;
        }
        if let Some(target) = target {
            let values = figure_values(&results, target.figure);
            if let Some(interval) = mean_interval(&values, CONFIDENCE) {
                if results.len() >= MIN_STABLE_ROUNDS && interval.relative_pct <= target.within_pct
                {
                    stable = Some(interval);
                    break;
                }
            }
        }
    }
    let summary: Vec<(Figure, Option<Interval>)> = SUMMARY_FIGURES
        .iter()
        .map(|f| (*f, mean_interval(&figure_values(&results, *f), CONFIDENCE)))
        .collect();
    let document = repeat_document(&results, &summary, target, stable)?;
    let saved = output
        .json
        .map(|path| write_json_value(&document, path))
        .transpose();
    // With `--json -` the file is stdout: the table moves to stderr.
    let on_stderr = output
        .json
        .is_some_and(|path| crate::output::is_stdout(path));
    print_rounds(&results, &summary, target, stable, on_stderr)?;
    saved?;
    let interrupted = results.iter().any(|r| r.interrupted);
    let failed = results
        .iter()
        .any(|r| exit_status(r) == exit::THRESHOLD_FAILED);
    Ok(if interrupted {
        crate::interrupt::status()
    } else if failed {
        exit::THRESHOLD_FAILED
    } else {
        exit::OK
    })
}

fn figure_values(results: &[RunResult], figure: Figure) -> Vec<f64> {
    results
        .iter()
        .filter(|r| !r.interrupted)
        .filter_map(|r| RunFigures::of("", r).get(figure))
        .collect()
}

fn repeat_document(
    results: &[RunResult],
    summary: &[(Figure, Option<Interval>)],
    target: Option<StableTarget>,
    stable: Option<Interval>,
) -> anyhow::Result<serde_json::Value> {
    let mut figures = serde_json::Map::new();
    for (figure, interval) in summary {
        figures.insert(figure.name().to_string(), serde_json::to_value(interval)?);
    }
    Ok(serde_json::json!({
        "schema": REPEAT_SCHEMA,
        "version": env!("CARGO_PKG_VERSION"),
        "rounds": results.len(),
        "confidence": CONFIDENCE,
        "until_stable": target,
        "stable": stable.is_some(),
        "summary": figures,
        "runs": results,
    }))
}

fn print_rounds(
    results: &[RunResult],
    summary: &[(Figure, Option<Interval>)],
    target: Option<StableTarget>,
    stable: Option<Interval>,
    on_stderr: bool,
) -> anyhow::Result<()> {
    let mut out: Box<dyn Write> = if on_stderr {
        Box::new(std::io::stderr().lock())
    } else {
        Box::new(std::io::stdout().lock())
    };
    writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>10} {:>10} {:>8}",
        "round", "goodput/s", "rps", "p50", "p99", "errors"
    )?;
    for (i, r) in results.iter().enumerate() {
        writeln!(
            out,
            "{:>6} {:>12} {:>12} {:>10} {:>10} {:>7.2}%{}",
            i + 1,
            format_rate(r.goodput),
            format_rate(r.rps),
            format_latency_us(r.latency_us.p50 as f64),
            format_latency_us(r.latency_us.p99 as f64),
            r.error_rate_pct,
            if r.interrupted { "  (interrupted)" } else { "" }
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Mean over {} rounds, with its {:.0}% confidence interval:",
        results.len(),
        CONFIDENCE * 100.0
    )?;
    for (figure, interval) in summary {
        match interval {
            Some(i) => writeln!(
                out,
                "  {:<10} {:>12.2} ± {:<10.2} {} (±{:.1}%)",
                figure.name(),
                i.mean,
                i.half_width,
                figure.unit(),
                i.relative_pct
            )?,
            None => writeln!(out, "  {:<10} needs at least 2 rounds", figure.name())?,
        }
    }
    if let Some(target) = target {
        match stable {
            Some(i) => writeln!(
                out,
                "Stable: {} within ±{:.1}% (target ±{}%) after {} rounds.",
                target.figure.name(),
                i.relative_pct,
                target.within_pct,
                i.rounds
            )?,
            None => writeln!(
                out,
                "NOT stable: {} did not get within ±{}% in {} rounds; run longer (-d) or accept the wider interval above.",
                target.figure.name(),
                target.within_pct,
                results.len()
            )?,
        }
    }
    Ok(())
}
