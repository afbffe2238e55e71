//! `stampede sweep`'s command line: the ladder (-c or -r), the step's
//! length and warmup, the SLO and thresholds, `--run-args` for every step,
//! and each step's `stampede run` arguments built from them. Read by the
//! sweep command and by `stampede experiment -- sweep`.

use crate::flags::run_args::{parse_run_args, RunArgs, SloArg};
use anyhow::{bail, Context};
use stampede_analysis::{Load, Thresholds};
use stampede_plan::parse_duration;
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
    #[arg(long, value_name = "DUR", default_value = "1s", requires = "hlog", value_parser = crate::process::hlog_file::parse_hlog_interval)]
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
pub(crate) fn extra_words(args: &SweepArgs) -> anyhow::Result<Vec<String>> {
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
pub(crate) fn step_run_args(
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
