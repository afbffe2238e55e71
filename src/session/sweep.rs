//! A sweep's ladder of steps, run: every step's plan checked before the
//! first runs ([`prepare`]), then each step a full run session sampling the
//! server, with a [`StepWatch`] around it, and the steps that completed
//! analysed (capacity, knee, USL). Shared by `stampede sweep` and
//! `stampede experiment -- sweep`.

use crate::flags::plan_args::build_plan;
use crate::flags::run_args::SloArg;
use crate::flags::sweep_args::{extra_words, step_run_args, SweepArgs};
use crate::flags::sweep_steps::{parse_connection_list, parse_rates};
use crate::process::{exit, interrupt};
use crate::session::delivery::exit_status;
use crate::session::{run_plan_in, RunContext};
use anyhow::{bail, Context};
use stampede_analysis::{
    analyze_sweep, Load, RateSearch, SearchNext, StepInput, SweepDocument, Thresholds,
};
use stampede_metrics::RunResult;
use stampede_report::{describe_load, format_latency_us, format_rate, sweep_banner};

/// A sweep made ready: each step's load and plan, all checked before the
/// first step runs.
pub struct PreparedSweep {
    loads: Vec<Load>,
    plans: Vec<(stampede_plan::Plan, Vec<String>)>,
    slo: Option<SloArg>,
    thresholds: Thresholds,
}

impl PreparedSweep {
    /// Where the first step's URL points (the port a server must open).
    pub fn addr(&self) -> anyhow::Result<std::net::SocketAddr> {
        let (plan, _) = self
            .plans
            .first()
            .ok_or_else(|| anyhow::anyhow!("the sweep has no step"))?;
        Ok(stampede_engine::resolve(plan)?)
    }
}

/// Reads the steps (-c or -r), the SLO and `--run-args` into every step's
/// plan, so that bad input fails before anything runs.
pub fn prepare(args: &SweepArgs) -> anyhow::Result<PreparedSweep> {
    let loads: Vec<Load> = match (&args.connections, &args.rates) {
        (Some(list), _) => parse_connection_list(list)?
            .into_iter()
            .map(Load::Connections)
            .collect(),
        (None, Some(spec)) => parse_rates(spec)?.into_iter().map(Load::Rate).collect(),
        (None, None) => bail!("give the steps: -c 50,100,200 or -r FROM:TO:STEP"),
    };
    let slo = match &args.slo {
        Some(text) => Some(SloArg(stampede_analysis::parse_slo(text)?)),
        None => None,
    };
    let extra = extra_words(args)?;
    let mut plans = Vec::with_capacity(loads.len());
    for load in &loads {
        let run_args = step_run_args(args, &extra, *load, slo.as_ref())?;
        plans.push(build_plan(&run_args)?);
    }
    let thresholds = Thresholds {
        healthy_efficiency: args.saturation_efficiency,
        max_error_pct: args.max_errors,
        ..Thresholds::default()
    };
    Ok(PreparedSweep {
        loads,
        plans,
        slo,
        thresholds,
    })
}

/// What a caller does around each step: `stampede experiment` reads the
/// server's counters before and after it.
pub trait StepWatch {
    fn before_step(&mut self, index: usize);
    fn after_step(&mut self, index: usize, result: &RunResult);
}

/// No watching: the sweep command's own steps.
pub struct Unwatched;

impl StepWatch for Unwatched {
    fn before_step(&mut self, _: usize) {}
    fn after_step(&mut self, _: usize, _: &RunResult) {}
}

/// What a ladder of steps gave.
pub struct SweepOutcome {
    /// `None` when no step completed.
    pub document: Option<SweepDocument>,
    /// A step was cut short by Ctrl-C (it is left out).
    pub interrupted: bool,
}

/// Runs the steps in order, each a full run sampling `pids`, and analyses
/// those that completed. Stops at Ctrl-C and, with -r and --slo, after two
/// failing steps in a row.
pub fn run_steps(
    args: &SweepArgs,
    prepared: &PreparedSweep,
    pids: &[u32],
    banner_prefix: &[String],
    hlog: Option<&crate::process::hlog_file::HlogTarget>,
    watch: &mut dyn StepWatch,
) -> anyhow::Result<SweepOutcome> {
    let stop = interrupt::stop_handle()?;
    let slo = prepared.slo.as_ref();
    let mut search = RateSearch::default();
    let mut results: Vec<(Load, RunResult)> = Vec::new();
    let mut interrupted = false;
    let total = prepared.loads.len();
    for (index, (load, (plan, notices))) in prepared.loads.iter().zip(&prepared.plans).enumerate() {
        if stop.is_stopped() {
            interrupted = true;
            break;
        }
        if !args.quiet {
            eprintln!(
                "stampede sweep: step {}/{total}: {}",
                index + 1,
                describe_load(*load)
            );
        }
        let mut banner = banner_prefix.to_vec();
        banner.extend(sweep_banner(index, total, *load, &results));
        let context = RunContext {
            quiet: args.quiet,
            pids,
            slo,
            exports: None,
            hlog: hlog.map(|target| target.part(&format!("step{}", index + 1))),
            banner,
            ..RunContext::default()
        };
        watch.before_step(index);
        let result = run_plan_in(plan, notices.clone(), &context)
            .with_context(|| format!("step {}", describe_load(*load)))?;
        if result.interrupted {
            eprintln!(
                "stampede sweep: interrupted during {}; that step is left out",
                describe_load(*load)
            );
            interrupted = true;
            break;
        }
        watch.after_step(index, &result);
        let passed = exit_status(&result) == exit::OK;
        if !args.quiet {
            eprintln!(
                "stampede sweep:   goodput {} req/s, p99 {}, errors {:.2}%{}",
                format_rate(result.goodput),
                format_latency_us(result.latency_us.p99 as f64),
                result.error_rate_pct,
                if slo.is_some() {
                    if passed {
                        ", SLO pass"
                    } else {
                        ", SLO FAIL"
                    }
                } else {
                    ""
                }
            );
        }
        results.push((*load, result));
        if let (Load::Rate(rate), Some(_)) = (load, slo) {
            if search.record(*rate, passed) == SearchNext::Stop {
                eprintln!("stampede sweep: {}", search.sentence());
                break;
            }
        }
    }
    if results.is_empty() {
        return Ok(SweepOutcome {
            document: None,
            interrupted,
        });
    }
    let inputs: Vec<StepInput> = results
        .iter()
        .map(|(load, r)| StepInput::from_result(*load, r))
        .collect();
    let analysis = analyze_sweep(&inputs, slo.map(|s| s.0.as_slice()), &prepared.thresholds);
    Ok(SweepOutcome {
        document: Some(SweepDocument {
            analysis,
            steps: results,
        }),
        interrupted,
    })
}
