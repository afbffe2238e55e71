//! `stampede run`: build a plan from the arguments, run the engine with a
//! progress line, print the summary and write the result file.

use crate::agent::{self, AgentArgs};
use crate::cmd::repeat::{self, RepeatOutput, Rounds};
use crate::delivery::{self, deliver_to, Delivery, Keeper, Latest, Running};
// The end of a run lives in delivery.rs; these are its names the commands built on run use.
pub use crate::delivery::{deliver, exit_status, never_connected};
use crate::exports::{self, ExportArgs};
use crate::output::{self, OutputFormat};
use crate::request_extras::RequestExtras;
use crate::spawn::SpawnedServer;
use crate::targets_args::read_mix;
use crate::transport_args::TransportArgs;
use crate::{interrupt, selfcheck, view};
use anyhow::Context;
use stampede_engine::monitor::{ClientThreads, Monitor, Watched};
use stampede_metrics::{Environment, RunResult, SloCheck};
use stampede_plan::{
    parse_duration, parse_header, parse_stages, Arrival, Header, LoadModel, Plan, RequestSpec,
    Schedule, Stage, StopCondition, Target,
};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

const EXAMPLES: &str = "Examples:
  stampede run http://127.0.0.1:3000/index.html -c 1000 -d 60s
  stampede run http://127.0.0.1:3000/ -c 200 -n 1000000 --no-keepalive
  stampede run http://127.0.0.1:3000/echo -m POST -H 'X-A: 1' -b '{\"k\":1}' -T application/json
  stampede run http://127.0.0.1:3000/ -c 100 -d 10s --json result.json
  stampede run http://127.0.0.1:3000/ -r 2000 -d 60s            # open model: 2000 requests/s
  stampede run http://127.0.0.1:3000/ -c 1000 --ramp-up 10s -d 60s
  stampede run http://127.0.0.1:3000/ --stages '30s:100,1m:1000,30s:0'
  stampede run http://127.0.0.1:3000/ -c 1000 -d 60s --pid 4242
  stampede run http://127.0.0.1:3000/ -d 20s --spawn 'stampede serve --threads 2'
  stampede run http://127.0.0.1:3000/ -c 1000 -d 60s --slo 'p99<250ms,errors<0.5%,rps>50000'";

/// Connections allowed in the open model when `-c` is not given.
const DEFAULT_RATE_CONNECTIONS: usize = 1000;
/// Connections in the closed model when `-c` is not given.
const DEFAULT_CONNECTIONS: usize = 50;

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct RunArgs {
    /// URL to load, e.g. http://127.0.0.1:3000/index.html (not needed with --targets)
    #[arg(required_unless_present = "targets")]
    pub url: Option<String>,
    /// Many requests, each with its own statistics: blocks of 'METHOD URL',
    /// header lines, an optional '@body-file' and 'weight=N', separated by
    /// blank lines (all URLs on one origin)
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,
    /// Concurrent connections, each with one request in flight [default: 50];
    /// with -r, the most connections the open model may open [default: 1000]
    #[arg(short = 'c', long, value_name = "N")]
    pub connections: Option<usize>,
    /// Open model: send this many requests per second, whatever the server does
    /// (latency counts from the intended send time, so client queueing shows)
    #[arg(short = 'r', long, value_name = "PER_S")]
    pub rate: Option<f64>,
    /// Open model: spacing of requests
    #[arg(long, value_enum, default_value_t = ArrivalArg::Uniform)]
    pub arrival: ArrivalArg,
    /// Open connections (or, with -r, raise the rate) evenly over this time, within -d
    #[arg(long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "stages")]
    pub ramp_up: Option<Duration>,
    /// k6-style stages 'DUR:TARGET,...': targets are connections, or rates with -r;
    /// linear between targets, starting from 0; the stages set the duration
    #[arg(long, value_parser = parse_stages_arg, value_name = "STAGES", conflicts_with_all = ["duration", "requests"])]
    pub stages: Option<StagesArg>,
    /// Run load for this long before measuring; not recorded
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub warmup: Option<Duration>,
    /// Spread connections over these local addresses, e.g. 127.0.0.2-127.0.0.9
    /// or 127.0.0.2,127.0.0.3: each has its own ephemeral port range, which
    /// lifts the ~28k-connections-per-address limit (TIME_WAIT with --no-keepalive)
    #[arg(long, value_parser = parse_source_addrs, value_name = "ADDRS")]
    pub source_addrs: Option<SourceAddrs>,
    /// Worker threads, each with its own event loop [default: CPUs available]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,
    /// How long to run (500ms, 10s, 2m, 1h) [default: 10s, or no limit with -n]
    #[arg(short = 'd', long, value_parser = parse_duration, value_name = "DUR")]
    pub duration: Option<Duration>,
    /// Send exactly N requests in total, then stop when all have answered
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,
    /// Request method
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Request header 'Name: value' (repeatable); replaces a default of that name
    #[arg(short = 'H', long = "header", value_parser = parse_header, value_name = "HEADER")]
    pub headers: Vec<Header>,
    /// Request body
    #[arg(short = 'b', long, value_name = "STR", conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from a file
    #[arg(short = 'D', long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Content-Type header of the body
    #[arg(short = 'T', long, value_name = "TYPE")]
    pub content_type: Option<String>,
    /// Open a new TCP connection for every request (ab without -k, webbench)
    #[arg(long)]
    pub no_keepalive: bool,
    /// Send HTTP/1.0 requests
    #[arg(long = "http1.0")]
    pub http10: bool,
    /// Time allowed to establish a connection
    #[arg(long, default_value = "3s", value_parser = parse_duration, value_name = "DUR")]
    pub connect_timeout: Duration,
    /// Time allowed for a complete response after sending
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DUR")]
    pub timeout: Duration,
    /// Write the full result as JSON (schema stampede.result/1) to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// What to print on stdout
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// No progress line: only the final summary
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Conditions the run must meet, e.g. 'p99<250ms,p50<20ms,errors<0.5%,rps>50000';
    /// each is printed with its measured value, and any failure exits with status 1
    #[arg(long, value_parser = parse_slo_arg, value_name = "CONDITIONS")]
    pub slo: Option<SloArg>,
    /// Run the plan N times and report each figure's mean with a 95% confidence
    /// interval (the file holds every run: `stampede compare` uses them)
    #[arg(long, value_name = "N", conflicts_with = "until_stable")]
    pub repeat: Option<usize>,
    /// Keep running rounds until the figure's 95% confidence interval is within
    /// ±PCT of its mean, e.g. p99:5% (at least 3 rounds; -d bounds the total)
    #[arg(long, value_parser = stampede_analysis::parse_stable_target, value_name = "FIGURE:PCT%")]
    pub until_stable: Option<stampede_analysis::StableTarget>,
    /// Length of one --until-stable round
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DUR")]
    pub round: Duration,
    #[command(flatten)]
    pub request_extras: RequestExtras,
    #[command(flatten)]
    pub transport: TransportArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub exports: ExportArgs,
}

/// The server under test, to be sampled (or started) during the load.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServerArgs {
    /// Sample this server process (CPU, RSS, threads, fds, context switches)
    /// every second while loading it (repeatable)
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// Start the server with this shell command, wait until the URL's port
    /// accepts, monitor it during the load, and stop it afterwards
    #[arg(long, value_name = "CMD")]
    pub spawn: Option<String>,
}

/// `--slo` as one value.
#[derive(Debug, Clone)]
pub struct SloArg(pub Vec<stampede_analysis::Condition>);

fn parse_slo_arg(text: &str) -> Result<SloArg, stampede_analysis::SloError> {
    stampede_analysis::parse_slo(text).map(SloArg)
}

/// Parses `stampede run` arguments from words (without the leading `run`), for
/// commands that build on run (demo, the compat front-ends).
pub fn parse_run_args<I, T>(words: I) -> Result<RunArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    #[derive(clap::Parser)]
    #[command(name = "stampede run", args_override_self = true)]
    struct Words {
        #[command(flatten)]
        run: RunArgs,
    }
    use clap::Parser;
    let words =
        std::iter::once(std::ffi::OsString::from("run")).chain(words.into_iter().map(Into::into));
    Words::try_parse_from(words).map(|w| w.run)
}

/// `--stages` as one value (clap would read a bare `Vec` as repeated values).
#[derive(Debug, Clone, PartialEq)]
pub struct StagesArg(pub Vec<Stage>);

fn parse_stages_arg(text: &str) -> Result<StagesArg, stampede_plan::PlanError> {
    parse_stages(text).map(StagesArg)
}

/// `--source-addrs` as one value.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceAddrs(pub Vec<std::net::IpAddr>);

fn parse_source_addrs(text: &str) -> Result<SourceAddrs, stampede_plan::PlanError> {
    stampede_plan::parse_address_list(text).map(SourceAddrs)
}

/// `--arrival` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArrivalArg {
    /// Evenly spaced requests
    Uniform,
    /// Exponentially distributed gaps (a Poisson process)
    Poisson,
}

/// The load model the arguments describe, and how long it runs.
fn build_model(args: &RunArgs) -> anyhow::Result<(LoadModel, Option<Duration>)> {
    let duration = match &args.stages {
        Some(StagesArg(stages)) => Some(stages.iter().map(|s| s.duration).sum()),
        None if args.requests.is_some() => args.duration,
        None => Some(args.duration.unwrap_or(Duration::from_secs(10))),
    };
    let shape = |target: f64| -> anyhow::Result<Schedule> {
        if let Some(StagesArg(stages)) = &args.stages {
            return Ok(Schedule {
                start: 0.0,
                stages: stages.clone(),
            });
        }
        let total = duration.unwrap_or(Duration::from_secs(3600));
        Ok(match args.ramp_up {
            Some(ramp) if ramp >= total => anyhow::bail!(
                "--ramp-up {} must be shorter than the run ({})",
                stampede_plan::format_duration(ramp),
                stampede_plan::format_duration(total)
            ),
            Some(ramp) => Schedule::ramp(target, ramp, total - ramp),
            None => Schedule::constant(target, total),
        })
    };
    let model = match args.rate {
        Some(rate) => {
            if !(rate.is_finite() && rate > 0.0) {
                anyhow::bail!("rate must be a number above zero (-r {rate})");
            }
            LoadModel::Rate {
                per_s: shape(rate)?,
                max_connections: args.connections.unwrap_or(DEFAULT_RATE_CONNECTIONS),
                arrival: match args.arrival {
                    ArrivalArg::Uniform => Arrival::Uniform,
                    ArrivalArg::Poisson => Arrival::Poisson,
                },
            }
        }
        None => {
            if args.stages.is_some() && args.connections.is_some() {
                anyhow::bail!(
                    "--stages targets are the connections; drop -c (or add -r to make them rates)"
                );
            }
            let connections = args.connections.unwrap_or(DEFAULT_CONNECTIONS);
            LoadModel::Closed {
                connections: shape(connections as f64)?,
            }
        }
    };
    Ok((model, duration))
}

/// Builds and validates the plan; returns it with the notices for the user.
pub fn build_plan(args: &RunArgs) -> anyhow::Result<(Plan, Vec<String>)> {
    let url = match (&args.url, &args.targets) {
        (Some(url), None) => url.clone(),
        (Some(_), Some(_)) => anyhow::bail!("give either a URL or --targets, not both"),
        (None, Some(_)) => String::new(),
        (None, None) => anyhow::bail!("no URL given"),
    };
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(path)) => {
            std::fs::read(path).with_context(|| format!("reading body file {}", path.display()))?
        }
        (None, None) => Vec::new(),
    };
    let mut headers = args.headers.clone();
    if let Some(content_type) = &args.content_type {
        headers.push(parse_header(&format!("Content-Type: {content_type}"))?);
    }
    let extra = args.request_extras.headers(&headers)?;
    headers.extend(extra);
    let method = if args.request_extras.head {
        "HEAD".to_string()
    } else {
        args.method.to_ascii_uppercase()
    };
    let mix = match &args.targets {
        Some(path) => read_mix(path, &headers, args.http10)?,
        None => Vec::new(),
    };
    let (target, request) = match mix.first() {
        Some(first) => (first.target.clone(), first.request.clone()),
        None => (
            Target::parse(&url)?,
            RequestSpec {
                method,
                headers,
                body,
                http10: args.http10,
            },
        ),
    };
    let (model, duration) = build_model(args)?;
    let stop = match (args.requests, duration) {
        (Some(count), limit) => StopCondition::Requests { count, limit },
        (None, duration) => StopCondition::Duration(duration.unwrap_or(Duration::from_secs(10))),
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut plan = Plan {
        target,
        request,
        model,
        threads,
        stop,
        warmup: args.warmup,
        source_addrs: args.source_addrs.clone().map(|a| a.0).unwrap_or_default(),
        transport: args.transport.spec()?,
        mix,
        keepalive: !args.no_keepalive,
        connect_timeout: args.connect_timeout,
        timeout: args.timeout,
    };
    let mut notices = agent::apply_share(&args.agent, &mut plan)?;
    notices.extend(plan.validate()?);
    Ok((plan, notices))
}

/// Everything about running a plan besides the plan itself.
#[derive(Default)]
pub struct RunContext<'a> {
    /// No live view or progress line.
    pub quiet: bool,
    /// Server processes to monitor (stampede itself always is).
    pub pids: &'a [u32],
    pub slo: Option<&'a SloArg>,
    /// Per-request outputs (`--gnuplot`, `--log-requests`) written during the run.
    pub exports: Option<&'a ExportArgs>,
    /// Lines shown above the live view: a sweep's step, the finished steps.
    pub banner: Vec<String>,
    /// A compat front-end's own observer (ab's "Completed N requests"), fed
    /// the same snapshots as the view.
    pub watcher: Option<&'a std::cell::RefCell<dyn stampede_engine::Observer>>,
    /// How often workers report (None: the engine's default).
    pub snapshot_interval: Option<Duration>,
    /// Where a forced exit (a second interrupt) writes what was measured so
    /// far; None: it writes nothing.
    pub salvage: Option<&'a Delivery>,
    /// An export goes to stdout (`-`): no live view there.
    pub stdout_taken: bool,
}

/// Runs a plan with the run view (unless quiet) and returns its result.
pub fn run_plan(plan: &Plan, notices: Vec<String>, quiet: bool) -> anyhow::Result<RunResult> {
    let context = RunContext {
        quiet,
        ..RunContext::default()
    };
    run_plan_in(plan, notices, &context)
}

/// Runs a plan while monitoring the servers and stampede itself, checks the
/// SLO, writes the per-request outputs and adds the self-check warnings.
pub fn run_plan_in(
    plan: &Plan,
    notices: Vec<String>,
    context: &RunContext<'_>,
) -> anyhow::Result<RunResult> {
    let (quiet, pids, slo) = (context.quiet, context.pids, context.slo);
    check_fd_headroom(plan)?;
    let stop = interrupt::stop_handle()?;
    let no_exports = ExportArgs::default();
    let (request_log, created) =
        exports::open_request_log(context.exports.unwrap_or(&no_exports), plan)?;
    for notice in &notices {
        eprintln!("stampede: note: {notice}");
    }
    let environment = Environment::capture();
    let planned = match plan.stop {
        StopCondition::Duration(d) => Some(d),
        StopCondition::Requests { limit, .. } => limit,
    };
    let mut watched: Vec<Watched> = pids.iter().map(|&pid| Watched::server(pid)).collect();
    // Stampede's CPU is its load-generating threads': a target in this
    // process (the demo) is not the client's.
    let client_threads = ClientThreads::default();
    watched.push(Watched::client(client_threads.clone()));
    let monitor =
        Monitor::start(watched, MONITOR_INTERVAL).context("starting the process monitor")?;
    let mut view = view::open_view(
        quiet,
        context.stdout_taken,
        planned,
        plan,
        &context.banner,
        Some(monitor.feed()),
    );
    let latest = Latest::default();
    if let Some(delivery) = context.salvage {
        let running = Running {
            plan: plan.clone(),
            notices: notices.clone(),
            environment: environment.clone(),
            started_at: SystemTime::now(),
        };
        delivery::arm_snapshot(running, latest.clone(), delivery.clone());
    }
    let options = stampede_engine::RunOptions {
        request_log,
        snapshot_interval: context.snapshot_interval,
        client_threads,
    };
    let mut keeper = Keeper::new(view.as_mut(), latest, stop.clone());
    let finished = match context.watcher {
        Some(watcher) => {
            let mut both = view::Both(&mut keeper, &mut *watcher.borrow_mut());
            stampede_engine::run_with(plan, &mut both, &stop, options)
        }
        None => stampede_engine::run_with(plan, &mut keeper, &stop, options),
    };
    view.finish();
    let mut report = monitor.stop();
    let finished = match finished {
        Ok(finished) => finished,
        Err(error) => {
            // Nothing was measured: the per-request files hold a header
            // only, and a forced exit has nothing to write.
            interrupt::begin_delivery();
            created.remove();
            return Err(error.into());
        }
    };
    let version = env!("CARGO_PKG_VERSION");
    let recording = &finished.recording;
    let mut result = RunResult::from_recording(plan, recording, environment, version, notices);
    exports::apply_request_log(&mut result, finished.request_log);
    report.set_requests(result.requests.completed);
    for pid in pids {
        if !report.processes.iter().any(|p| p.pid == *pid) {
            result
                .warnings
                .push(format!("--pid {pid}: no such process to monitor"));
        }
    }
    result.monitor = Some(report);
    if let Some(SloArg(conditions)) = slo {
        result.slo = stampede_analysis::evaluate(conditions, &result)
            .into_iter()
            .map(|outcome| SloCheck {
                condition: outcome.condition,
                measured: outcome.measured,
                unit: outcome.unit.to_string(),
                passed: outcome.passed,
            })
            .collect();
    }
    let warnings = selfcheck::warnings(plan, &result);
    result.warnings.extend(warnings);
    Ok(result)
}

/// How often the monitor samples processes.
const MONITOR_INTERVAL: Duration = Duration::from_secs(1);

/// Raises the open-file limit and refuses, before starting, a plan whose
/// connections cannot fit in it.
fn check_fd_headroom(plan: &Plan) -> anyhow::Result<()> {
    let needed = stampede_engine::fds_needed(plan.connections(), plan.threads);
    let limit =
        stampede_engine::raise_nofile_limit(needed).context("raising the open-file limit")?;
    if needed > limit {
        anyhow::bail!(
            "{} connections need about {needed} open files but the limit is {limit}; \
             raise the hard limit (ulimit -Hn, /etc/security/limits.conf) or use fewer connections",
            plan.connections()
        );
    }
    Ok(())
}

/// Refuses, before any load, a `--pid` that names no process: monitoring
/// nothing is not what the user asked for.
pub fn check_pids(pids: &[u32]) -> anyhow::Result<()> {
    for &pid in pids {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            anyhow::bail!("--pid {pid}: no such process");
        }
    }
    Ok(())
}

pub fn execute(args: RunArgs) -> anyhow::Result<i32> {
    let (plan, notices) = build_plan(&args)?;
    // Installed first, so a signal while a --spawn server starts still
    // stops it (the run then ends at once, interrupted).
    interrupt::stop_handle()?;
    check_pids(&args.server.pids)?;
    let delivery = Delivery {
        json: args.json.clone(),
        format: args.output,
        exports: args.exports.clone(),
    };
    output::preflight(&delivery.outputs())?;
    let mut pids = args.server.pids.clone();
    let spawned = match &args.server.spawn {
        Some(command) => {
            let addr = stampede_engine::resolve(&plan)?;
            let server = SpawnedServer::start(command, addr)?;
            pids.push(server.pid());
            Some(server)
        }
        None => None,
    };
    agent::wait_for_start(&args.agent)?;
    let rounds = match (args.repeat, args.until_stable) {
        (Some(n), _) => Some(Rounds::Fixed(n)),
        (None, Some(target)) => Some(Rounds::UntilStable {
            target,
            round: args.round,
            budget: args.duration.unwrap_or(Duration::from_secs(60)),
        }),
        (None, None) => None,
    };
    if let Some(rounds) = rounds {
        let output = RepeatOutput {
            json: args.json.as_ref(),
            quiet: args.quiet,
            exports: &args.exports,
        };
        return repeat::execute(plan, notices, rounds, &pids, args.slo.as_ref(), output);
    }
    let context = RunContext {
        quiet: args.quiet,
        pids: &pids,
        slo: args.slo.as_ref(),
        exports: Some(&args.exports),
        salvage: Some(&delivery),
        stdout_taken: delivery.stdout_taken(),
        ..RunContext::default()
    };
    let result = run_plan_in(&plan, notices, &context).map(|mut result| {
        agent::annotate(&args.agent, &mut result);
        result
    });
    if let Ok(result) = &result {
        // Stopping a spawned server may take its grace period: a forced
        // exit meanwhile still writes the whole result.
        delivery::arm_result(result.clone(), delivery.clone());
    }
    drop(spawned);
    deliver_to(&result?, &delivery)
}
