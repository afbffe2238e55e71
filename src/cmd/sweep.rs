//! `stampede sweep`: a ladder of full runs (connections or rates), each
//! classified, then the answer a person used to work out by hand: stable
//! range, knee, capacity, effective throughput and a USL fit, with the rule
//! behind every verdict printed.

use crate::flags::plan_args::build_plan;
use crate::flags::run_args::{parse_run_args, RunArgs, SloArg};
use crate::flags::sweep_steps::{parse_connection_list, parse_rates};
use crate::process::exports::write_file;
use crate::process::output::write_json_value;
use crate::process::{exit, interrupt};
use crate::session::delivery::exit_status;
use crate::session::spawn::SpawnedServer;
use crate::session::{check_pids, run_plan_in, RunContext};
use anyhow::{bail, Context};
use stampede_analysis::{
    analyze_sweep, Load, RateSearch, SearchNext, StepInput, SweepDocument, Thresholds,
};
use stampede_metrics::RunResult;
use stampede_plan::parse_duration;
use stampede_report::{
    describe_load, format_latency_us, format_rate, render_sweep_html, sweep_banner, SweepStep,
};
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "Examples:
  stampede sweep http://127.0.0.1:3000/ -c 1000,2000,5000,10000 --step 30s
  stampede sweep http://127.0.0.1:3000/ -r 1000:20000:1000 --step 10s --slo 'p99<200ms,errors<1%'
  stampede sweep http://127.0.0.1:3000/ -c 50,100,200,400,800 --spawn 'stampede serve --threads 4' --json sweep.json";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct SweepArgs {
    /// URL to load
    pub url: String,
    /// Closed-model steps: connections per step, comma-separated (e.g. 50,100,200)
    #[arg(
        short = 'c',
        long,
        value_name = "LIST",
        conflicts_with = "rates",
        required_unless_present = "rates"
    )]
    pub connections: Option<String>,
    /// Open-model steps: FROM:TO:STEP requests/s, or a comma-separated list;
    /// with --slo, stops after two failing steps in a row (capacity search)
    #[arg(short = 'r', long = "rate", value_name = "SPEC")]
    pub rates: Option<String>,
    /// Measured time per step
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DUR")]
    pub step: Duration,
    /// Unrecorded load before each step
    #[arg(long, default_value = "1s", value_parser = parse_duration, value_name = "DUR")]
    pub warmup: Duration,
    /// Worker threads [default: CPUs available]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,
    /// With -r: the most connections per step
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Conditions a step must meet to count towards capacity, e.g. 'p99<200ms,errors<1%'
    #[arg(long, value_name = "CONDITIONS")]
    pub slo: Option<String>,
    /// Sample this server process during every step (repeatable)
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// Start the server with this shell command once, before the first step, and stop it after the last
    #[arg(long, value_name = "CMD")]
    pub spawn: Option<String>,
    /// A step whose goodput grows by less than this share of its load growth is saturated
    #[arg(long, default_value_t = Thresholds::default().healthy_efficiency, value_name = "RATIO")]
    pub saturation_efficiency: f64,
    /// Error rate above which a step is overloaded (percent; an SLO's errors condition wins)
    #[arg(long, default_value_t = Thresholds::default().max_error_pct, value_name = "PCT")]
    pub max_errors: f64,
    /// Extra `stampede run` options for every step, split as a shell splits
    /// them, e.g. --run-args="-m POST -b 'a b'" (the load, -d, -n, --warmup,
    /// -t and --slo are the sweep's own flags)
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub run_args: Option<String>,
    /// Write the sweep (schema stampede.sweep/1, every step's full result) to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the sweep as a self-contained HTML report (throughput and latency
    /// against load, the USL fit, each step's class and the verdict)
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write each step's HdrHistogram interval log: PATH with the step's
    /// number before the extension (run.hlog: run.step1.hlog, run.step2.hlog, …)
    #[arg(long, value_name = "PATH")]
    pub hlog: Option<PathBuf>,
    /// With --hlog: the length of one interval (it divides a second, or is whole seconds)
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = crate::process::hlog_file::parse_hlog_interval)]
    pub hlog_interval: Duration,
    /// No progress lines, only the steps table and the verdict
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// Parses `stampede sweep` arguments from words (without the leading
/// `sweep`), for `stampede experiment -- sweep …`.
pub fn parse_sweep_args<I, T>(words: I) -> Result<SweepArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    #[derive(clap::Parser)]
    #[command(name = "stampede sweep", args_override_self = true)]
    struct Words {
        #[command(flatten)]
        sweep: SweepArgs,
    }
    use clap::Parser;
    let words =
        std::iter::once(std::ffi::OsString::from("sweep")).chain(words.into_iter().map(Into::into));
    Words::try_parse_from(words).map(|w| w.sweep)
}

/// The user's `--run-args`, split as a shell splits them (quotes keep
/// `-H 'X-Key: a b'` one argument).
fn extra_words(args: &SweepArgs) -> anyhow::Result<Vec<String>> {
    match &args.run_args {
        Some(text) => {
            shlex::split(text).with_context(|| format!("--run-args: unbalanced quotes in {text:?}"))
        }
        None => Ok(Vec::new()),
    }
}

/// One step's `stampede run` arguments: the URL and the user's own words
/// (`--run-args`) parsed, then the step's load and the sweep's settings set
/// on the typed fields (no command line is built to be parsed again). What
/// the sweep decides itself is refused in `--run-args`, naming the sweep's
/// flag for it, rather than silently overridden either way.
fn step_run_args(
    args: &SweepArgs,
    extra: &[String],
    load: Load,
    slo: Option<&SloArg>,
) -> anyhow::Result<RunArgs> {
    let words = std::iter::once(args.url.clone()).chain(extra.iter().cloned());
    let mut run = parse_run_args(words).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim()))?;
    let taken = [
        (
            run.connections.is_some(),
            "-c",
            "sweep -c or --max-connections",
        ),
        (run.rate.is_some(), "-r", "sweep -r"),
        (run.stages.is_some(), "--stages", "sweep -c or -r"),
        (run.duration.is_some(), "-d", "sweep --step"),
        (run.requests.is_some(), "-n", "sweep --step"),
        (run.warmup.is_some(), "--warmup", "sweep --warmup"),
        (run.threads.is_some(), "-t", "sweep -t"),
        (run.slo.is_some(), "--slo", "sweep --slo"),
    ];
    if let Some((_, flag, instead)) = taken.iter().find(|(given, _, _)| *given) {
        bail!("--run-args: {flag} is the sweep's to set; use {instead}");
    }
    crate::flags::run_args::refuse_in(&run.metrics, "sweep")?;
    match load {
        Load::Connections(c) => run.connections = Some(c as usize),
        Load::Rate(r) => {
            run.rate = Some(r);
            run.connections = args.max_connections;
        }
    }
    run.duration = Some(args.step);
    run.warmup = Some(args.warmup);
    run.threads = args.threads;
    run.slo = slo.cloned();
    Ok(run)
}

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
struct Unwatched;

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
            hlog: (args.hlog.clone()).map(|path| {
                let target = crate::process::hlog_file::HlogTarget {
                    path,
                    interval: args.hlog_interval,
                };
                target.part(&format!("step{}", index + 1))
            }),
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

pub fn execute(args: SweepArgs) -> anyhow::Result<i32> {
    // Bad paths and pids fail before the first step, not after the last.
    crate::process::output::preflight_given(&[
        ("--json", args.json.as_ref()),
        ("--html", args.html.as_ref()),
    ])?;
    check_pids(&args.pids)?;
    let prepared = prepare(&args)?;
    let mut pids = args.pids.clone();
    let spawned = match &args.spawn {
        Some(command) => {
            let server = SpawnedServer::start(command, prepared.addr()?)?;
            pids.push(server.pid());
            Some(server)
        }
        None => None,
    };
    let stop = interrupt::stop_handle()?;
    let outcome = run_steps(&args, &prepared, &pids, &[], &mut Unwatched)?;
    drop(spawned);
    let Some(document) = outcome.document else {
        bail!("no step completed");
    };
    let (analysis, results) = (&document.analysis, &document.steps);
    let json = document.to_value()?;
    let saved = args
        .json
        .as_ref()
        .map(|path| write_json_value(&json, path))
        .transpose();
    let steps: Vec<SweepStep<'_>> = results
        .iter()
        .map(|(load, result)| SweepStep {
            load: *load,
            result,
        })
        .collect();
    let html = args
        .html
        .as_ref()
        .map(|path| write_file(path, |out| render_sweep_html(&steps, analysis, out)))
        .transpose();
    let on_stderr = args
        .json
        .as_deref()
        .is_some_and(crate::process::output::is_stdout);
    crate::process::output::print_text(on_stderr, |out| {
        stampede_report::render_sweep_text(analysis, results, out)
    })?;
    saved?;
    html?;
    Ok(if stop.is_stopped() {
        crate::process::interrupt::status()
    } else {
        exit::OK
    })
}
