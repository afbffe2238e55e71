//! `stampede run`'s command line: the arguments (clap), their value parsers,
//! [`parse_run_args`] for the user's own run words that other commands pass
//! on (k8s after `--`, sweep's `--run-args`), and `RunArgs::for_url` for the
//! commands that set typed fields instead (demo, the compat front-ends).
//! Turning them into a plan is plan_args.rs; running it is session/mod.rs.

use crate::flags::agent::AgentArgs;
use crate::flags::request_extras::RequestExtras;
use crate::flags::transport_args::TransportArgs;
use crate::flags::workload_args::WorkloadArgs;
use crate::process::exports::ExportArgs;
use crate::process::output::OutputFormat;
use stampede_plan::{parse_duration, parse_header, parse_stages, Header, Stage};
use std::path::PathBuf;
use std::time::Duration;

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
  stampede run http://127.0.0.1:3000/ -c 1000 -d 60s --slo 'p99<250ms,errors<0.5%,rps>50000'
  stampede run 'http://127.0.0.1:3000/?item={{seq}}' -c 100 -d 30s      # a new query each request
  stampede run 'http://127.0.0.1:3000/user/{{id}}' --feed ids.csv:unique --check 'status == 200'
  stampede run --scenario shop.toml -d 60s                              # steps per virtual user
  stampede run --curl \"curl 'http://127.0.0.1:3000/api' --data-raw '{}'\" -c 50 -d 30s  # curl's request
  stampede run http://127.0.0.1:3000/gzip --decode -d 10s               # gzip, br, zstd; decoded bytes
  stampede run ws://127.0.0.1:3000/ws/echo -c 10 -d 10s --ws-message hi # WebSocket round trips
  stampede run http://127.0.0.1:3000/ -c 200 -d 30m --metrics 127.0.0.1:9464   # Prometheus
  stampede run http://127.0.0.1:3000/ -c 200 -d 30m --web 127.0.0.1:8089       # live page
  stampede run http://svc.test:3000/ --resolve svc.test:3000:127.0.0.1,127.0.0.2 --dns round-robin
  stampede run http://127.0.0.1:3000/ -c 100 -d 60s --conn-max-requests 1000 --conn-max-age 30s
  stampede run http://127.0.0.1:3000/ -d 60s --hlog run.hlog --hlog-interval 100ms  # every interval's histogram";

#[derive(Debug, Clone, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct RunArgs {
    /// URL to load, e.g. http://127.0.0.1:3000/item/{{seq}} ({{...}}: see
    /// --var, --feed; not needed with --targets, --scenario, --curl or --har)
    #[arg(required_unless_present_any = ["targets", "scenario", "curl", "har"])]
    pub url: Option<String>,
    /// Many requests, each with its own statistics: blocks of 'METHOD URL',
    /// header lines, an optional '@body-file' and 'weight=N', separated by
    /// blank lines (all URLs on one origin)
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,
    /// Concurrent connections, each with one request in flight [default: 50];
    /// with -r, the most connections the open model may open [default: 1000]
    #[arg(short = 'c', long, value_name = "N", allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_usize)]
    pub connections: Option<usize>,
    /// Open model: send this many requests per second, whatever the server does
    /// (latency counts from the intended send time, so client queueing shows)
    #[arg(short = 'r', long, value_name = "PER_S", allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Open model: spacing of requests
    #[arg(long, value_enum, default_value_t = ArrivalArg::Uniform)]
    pub arrival: ArrivalArg,
    /// With --arrival poisson: draw the gaps from this seed, to repeat a run's
    /// arrivals exactly [default: a new seed each run, recorded in the
    /// result's plan.seed]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Open model: wake once for every request due within this window and
    /// send them together, each at most this late (never early); latency
    /// still counts from each request's intended instant. 0 wakes for every
    /// request (costs more CPU at high rates) [default: 200us]
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub pace_window: Option<Duration>,
    /// Open model, on the epoll and io_uring reactors: read answers once per
    /// --pace-window too, many per wake-up, as wrk2 does: far less client
    /// CPU at high rates. An HTTP/1.1 answer's time is the kernel's receive
    /// time, not the later read (HTTP/2's is its read, up to a window high)
    #[arg(long)]
    pub batch_reads: bool,
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
    #[arg(short = 't', long, value_name = "N", allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_usize)]
    pub threads: Option<usize>,
    /// How long to run (500ms, 10s, 2m, 1h) [default: 10s, or no limit with -n]
    #[arg(short = 'd', long, value_parser = parse_duration, value_name = "DUR")]
    pub duration: Option<Duration>,
    /// Send exactly N requests in total, then stop when all have answered
    #[arg(short = 'n', long, value_name = "N", allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_u64)]
    pub requests: Option<u64>,
    /// The request a curl command sends, e.g. one copied with a browser's
    /// "Copy as cURL (bash)": its URL, method, headers, cookies, data,
    /// --compressed, -u, -k, --http2 and -L (run's own options set the load)
    #[arg(long, value_name = "'curl …'", conflicts_with_all = ["url", "targets", "scenario", "har", "method", "body", "body_file", "content_type"])]
    pub curl: Option<String>,
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
    #[arg(long, value_name = "N", conflicts_with = "until_stable", allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_usize)]
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
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub script: crate::flags::script_args::ScriptArgs,
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
/// commands that pass the user's run words on (k8s, sweep's --run-args).
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

impl RunArgs {
    /// The arguments of `stampede run URL` with every other option at its
    /// default, for commands that build their run from typed values (demo,
    /// the compat front-ends): they start here and set fields, so the defaults
    /// stay clap's. Fails only when an environment default (`STAMPEDE_IO`)
    /// is invalid.
    pub fn for_url(url: &str) -> Result<RunArgs, clap::Error> {
        // Set after parsing: a URL that starts with '-' cannot read as a
        // flag, and `--` stays the script's (`--script FILE -- ARGS`).
        let mut args = parse_run_args(["http://stampede.invalid/"])?;
        args.url = Some(url.to_string());
        Ok(args)
    }
}

impl RunArgs {
    /// The arguments of a run whose URLs and load come from a scenario
    /// given as typed values (plan_args::build_scenario_run): no URL, every
    /// other option at its default.
    pub fn for_scenario() -> Result<RunArgs, clap::Error> {
        let mut args = RunArgs::for_url("")?;
        args.url = None;
        Ok(args)
    }
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

/// `--metrics`, `--metrics-linger`, `--remote-write`, `--web` and `--web-linger`.
#[derive(Debug, Clone, clap::Args)]
pub struct MetricsArgs {
    /// Serve live Prometheus/OpenMetrics metrics of the run at
    /// http://ADDR/metrics (e.g. 127.0.0.1:9464), every series labelled
    /// with the result's run_id
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Keep serving the final values this long after the run, for the last scrape
    #[arg(long, default_value = "5s", value_parser = stampede_plan::parse_duration, value_name = "DUR")]
    pub metrics_linger: Duration,
    /// Push the --metrics series to a Prometheus remote-write receiver every
    /// second, e.g. http://127.0.0.1:9090/api/v1/write (labelled with run_id,
    /// and agent with --agent)
    #[arg(long, value_name = "URL")]
    pub remote_write: Option<String>,
    /// Serve a live dashboard at http://ADDR/ (e.g. 127.0.0.1:8089): the
    /// HTML report's charts moving as the run goes, a Stop button; the
    /// final report once the run ends
    #[arg(long, value_name = "ADDR")]
    pub web: Option<String>,
    /// Keep serving the final report this long after the run [default: until Ctrl-C]
    #[arg(long, value_parser = stampede_plan::parse_duration, value_name = "DUR", requires = "web")]
    pub web_linger: Option<Duration>,
}

/// Refuses `--metrics`, `--remote-write` and `--web` where they would be silently
/// ignored: they serve one plain `stampede run`, not rounds or steps
/// (`what`, e.g. "--repeat").
pub fn refuse_in(args: &MetricsArgs, what: &str) -> anyhow::Result<()> {
    if args.metrics.is_some() {
        anyhow::bail!("--metrics serves one plain run: it cannot be combined with {what} yet");
    }
    if args.remote_write.is_some() {
        anyhow::bail!("--remote-write serves one plain run: it cannot be combined with {what} yet");
    }
    if args.web.is_some() {
        anyhow::bail!("--web shows one plain run: it cannot be combined with {what} yet");
    }
    Ok(())
}
