//! `stampede experiment`: one command for an experiment on a server's
//! configuration. The flags and the loop; `template` makes the
//! variants from `--server` and `--vary`, `order` the order of the runs,
//! `runner` one run (start, load, read the counters, stop), `html` the
//! `--html` page. The figures,
//! costs and verdicts are stampede-analysis' `ExperimentDocument`, the
//! table stampede-report's. The JSON is rewritten after every run, so
//! Ctrl-C keeps every finished run.

mod html;
mod order;
mod runner;
mod template;

use crate::flags::plan_args::build_run;
use crate::flags::run_args::{parse_run_args, RunArgs};
use crate::flags::sweep_args::{parse_sweep_args, SweepArgs};
use crate::process::interrupt;
use crate::process::output::write_json_value;
use anyhow::bail;
use order::{run_order, OrderKind};
use runner::{Load, Outcome, Work};
use stampede_analysis::{ExperimentDocument, VariantResult, EXPERIMENT_SCHEMA};
use stampede_plan::parse_duration;
use std::path::PathBuf;
use std::time::Duration;

/// Start the server in each configuration in turn, load it, and compare what
/// each configuration gives and costs per request.
///
/// `{NAME}` in --server is replaced by each value of `--vary NAME=V1,V2`
/// (the name ends at the first `=`; values may hold `=` and may be empty).
/// Every combination of the --vary values is a variant. Each run starts its
/// variant's server (`sh -c`, in its own process group), waits until the
/// load's URL accepts, reads the server's counters from /proc (CPU user and
/// system, bytes and calls of write, context switches, RSS, each thread's
/// CPU), runs the load, reads them again and stops the server. During the
/// load a thread beside it samples the client's own TCP sockets to the
/// target (RTT and retransmits, from tcp_info) and where the server's
/// threads sleep (/proc/PID/task/*/wchan). Under
/// `-- sweep` each run is the sweep command's ladder of steps, the counters
/// read around each step: each variant gets its capacity, knee and USL fit,
/// each step its bottleneck, and the fixed-load figures are taken at the
/// highest step every round reached. Runs are
/// interleaved by default, so that a noisy host's drift spreads over all the
/// variants. Each variant after the first is compared with the first, with
/// 95% confidence intervals over the rounds.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  stampede experiment --server 'stampede serve --port 3000 --threads {threads}' \\
      --vary threads=1,2 --repeat 3 -- run http://127.0.0.1:3000/ -c 50 -d 5s
  stampede experiment --server 'stampede serve --port 3000 {log}' \\
      --vary 'log=,--access-log=/tmp/access.log' --json logging.json \\
      -- run http://127.0.0.1:3000/ -c 20 -d 5s
  stampede experiment --server 'srv --workers {w} --log {log}' --vary w=4,8 --vary log=on,off \\
      --order random --seed 7 -- run http://127.0.0.1:8080/ -c 1000 -d 30s
  stampede experiment --server 'stampede serve --port 3000 --threads {threads}' \\
      --vary threads=1,2 --repeat 2 -- sweep http://127.0.0.1:3000/ -c 1,8,32 --step 2s

Under `-- sweep` the sweep's --warmup is 0s unless given, so that each
step's cost per request counts only its measured requests.

Exit status: 0 when the experiment ran (failed runs are in the table and the
file), 2 on bad input or when no run could be made, 130 on Ctrl-C (the file
keeps every finished run).")]
pub struct ExperimentArgs {
    /// The server's command line, with a {NAME} for each --vary
    #[arg(long, value_name = "TEMPLATE")]
    pub server: String,
    /// A placeholder's values: NAME=V1,V2[,…] (repeatable: every combination runs)
    #[arg(long = "vary", value_name = "NAME=V1,V2", required = true)]
    pub vary: Vec<String>,
    /// Rounds per variant (the intervals need at least 2)
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,
    /// The order of the runs
    #[arg(long, value_enum, default_value_t = OrderKind::Interleaved)]
    pub order: OrderKind,
    /// Seed of --order random [default: from the clock; recorded in the file]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// After each load, wait this long before reading the server's counters
    /// again (what it buffers, such as an access log written once a second,
    /// is then counted); under `-- sweep`, after each step
    #[arg(long, default_value = "1s", value_parser = parse_duration, value_name = "DUR")]
    pub settle: Duration,
    /// Write the experiment (schema stampede.experiment/1) to PATH, after every run
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write an HTML page to PATH at the end: the verdicts, each variant's
    /// throughput and p99 on shared axes (curves against the load under a
    /// sweep, bars for a fixed run), its cost per request as bars, the table
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write an HdrHistogram interval log of each run to PATH with the
    /// variant and round put in: run.hlog becomes run.v2.round1.hlog (a
    /// sweep's steps add .step3)
    #[arg(long, value_name = "PATH")]
    pub hlog: Option<PathBuf>,
    /// With --hlog: the length of one interval (it divides a second, or is
    /// whole seconds)
    #[arg(long, value_name = "DUR", default_value = "1s", requires = "hlog",
          value_parser = crate::process::hlog_file::parse_hlog_interval)]
    pub hlog_interval: Duration,
    /// No progress line
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// The load: `run` or `sweep` and its arguments (the URL names the port
    /// each server must open)
    #[arg(last = true, required = true, value_name = "run|sweep ARGS")]
    pub load: Vec<String>,
}

pub fn execute(args: ExperimentArgs) -> anyhow::Result<i32> {
    let varies = args
        .vary
        .iter()
        .map(|text| template::parse_vary(text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let variants = template::variants(&args.server, &varies).map_err(anyhow::Error::msg)?;
    let mut given = load_args(&args.load)?;
    if let LoadArgs::Sweep(sweep) = &mut given {
        // The experiment's -q quiets the sweep's step lines too.
        sweep.quiet |= args.quiet;
    }
    let (built, prepared) = match &given {
        LoadArgs::Run(run) => (Some(build_run(run)?), None),
        LoadArgs::Sweep(sweep) => (None, Some(crate::session::sweep::prepare(sweep)?)),
    };
    crate::process::output::preflight_given(&[
        ("--json", args.json.as_ref()),
        ("--html", args.html.as_ref()),
        ("--hlog", args.hlog.as_ref()),
    ])?;
    let (work, addr) = match (&given, &built, &prepared) {
        (LoadArgs::Sweep(sweep), _, Some(prepared)) => (
            Work::Sweep {
                args: sweep,
                prepared,
            },
            prepared.addr()?,
        ),
        (_, Some(built), _) => (
            Work::Run {
                plan: &built.plan,
                notices: &built.notices,
                workload: built.workload.clone(),
            },
            stampede_engine::resolve(&built.plan)?,
        ),
        _ => bail!("after --, give the load: run URL … or sweep URL …"),
    };
    let stop = interrupt::stop_handle()?;
    let seed = args.seed.unwrap_or_else(clock_seed);
    let repeat = usize::try_from(args.repeat)?;
    let order = run_order(args.order, variants.len(), repeat, seed);
    let mut doc = ExperimentDocument {
        schema: EXPERIMENT_SCHEMA.to_string(),
        server_template: args.server.clone(),
        load: args.load.clone(),
        repeat,
        order_kind: args.order.name().to_string(),
        seed: (args.order == OrderKind::Random).then_some(seed),
        order: Vec::new(),
        variants: variants
            .iter()
            .map(|v| VariantResult {
                name: v.name.clone(),
                values: v.values.clone(),
                command: v.command.clone(),
                ..VariantResult::default()
            })
            .collect(),
        verdicts: Vec::new(),
        confidence: 0.95,
        interrupted: false,
        common_load: None,
    };
    let load = Load {
        work,
        addr,
        settle: args.settle,
        quiet: args.quiet,
    };
    for (i, &(index, round)) in order.iter().enumerate() {
        let variant = &variants[index];
        let banner = format!(
            "experiment run {}/{}: {} (round {}/{repeat})",
            i + 1,
            order.len(),
            variant.name,
            round + 1
        );
        if !args.quiet {
            eprintln!("stampede: {banner}");
        }
        let kept = &mut doc.variants[index];
        let hlog = (args.hlog.clone()).map(|path| {
            let target = crate::process::hlog_file::HlogTarget {
                path,
                interval: args.hlog_interval,
            };
            target.part(&format!("v{}.round{}", index + 1, round + 1))
        });
        match runner::run_one(&load, variant, round, banner, hlog) {
            Outcome::Done(done) => {
                let (result, cost) = *done;
                kept.runs.push(result);
                kept.costs.push(cost);
            }
            Outcome::Swept(round) => kept.sweeps.push(*round),
            Outcome::Failed(failure) => {
                eprintln!(
                    "stampede: {} round {}: failed: {}",
                    variant.name,
                    round + 1,
                    failure.reason
                );
                kept.failures.push(failure);
            }
            Outcome::Interrupted => doc.interrupted = true,
        }
        if doc.interrupted || stop.is_stopped() {
            doc.interrupted = true;
            break;
        }
        doc.order.push(index);
        doc.summarize();
        if let Some(path) = &args.json {
            write_json_value(&serde_json::to_value(&doc)?, path)?;
        }
    }
    doc.summarize();
    if let Some(path) = &args.json {
        write_json_value(&serde_json::to_value(&doc)?, path)?;
    }
    print!("{}", stampede_report::render_experiment_text(&doc));
    if let Some(path) = &args.html {
        html::write(&doc, path)?;
    }
    if doc.interrupted {
        return Ok(interrupt::status());
    }
    if doc.variants.iter().all(|v| v.runs.is_empty()) {
        bail!("no run could be made: every server failed (see above)");
    }
    Ok(crate::process::exit::OK)
}

/// The load after `--`, read once into typed arguments.
enum LoadArgs {
    Run(Box<RunArgs>),
    Sweep(Box<SweepArgs>),
}

/// The load after `--`: `run` or `sweep` and its arguments. What the
/// experiment does itself (start and watch the server, rounds, files) is
/// refused there. A sweep's `--warmup` is 0 unless given, so that each
/// step's cost per request counts only its measured requests.
fn load_args(words: &[String]) -> anyhow::Result<LoadArgs> {
    let (first, rest) = words.split_first().ok_or_else(|| {
        anyhow::anyhow!("after --, give the load: run URL [OPTIONS] or sweep URL -c LIST [OPTIONS]")
    })?;
    let clean = |e: clap::Error| anyhow::anyhow!("{}", one_line(&e.to_string()));
    let (load, refused) = match first.as_str() {
        "run" => {
            let run = parse_run_args(rest).map_err(clean)?;
            let refused = [
                ("--spawn", run.server.spawn.is_some()),
                ("--pid", !run.server.pids.is_empty()),
                ("--repeat", run.repeat.is_some()),
                ("--until-stable", run.until_stable.is_some()),
                ("--json", run.json.is_some()),
                ("--hlog", run.exports.hlog.is_some()),
            ];
            (LoadArgs::Run(Box::new(run)), refused.to_vec())
        }
        "sweep" => {
            let mut sweep = parse_sweep_args(rest).map_err(clean)?;
            let refused = [
                ("--spawn", sweep.spawn.is_some()),
                ("--pid", !sweep.pids.is_empty()),
                ("--json", sweep.json.is_some()),
                ("--html", sweep.html.is_some()),
                ("--hlog", sweep.hlog.is_some()),
            ];
            let warmup_given = rest
                .iter()
                .any(|w| w == "--warmup" || w.starts_with("--warmup="));
            if !warmup_given {
                sweep.warmup = Duration::ZERO;
            }
            (LoadArgs::Sweep(Box::new(sweep)), refused.to_vec())
        }
        other => bail!("after --, expected `run URL …` or `sweep URL …`, got {other:?}"),
    };
    if let Some((flag, _)) = refused.iter().find(|(_, given)| *given) {
        bail!("{flag} after --: the experiment starts, watches and repeats the server itself (use its own --repeat, --json, --html and --hlog)");
    }
    Ok(load)
}

/// Clap's message without its usage: the lines before the first blank one,
/// as one line ("the following required arguments were not provided: <URL>").
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect();
    let joined = lines.join(" ");
    joined
        .strip_prefix("error: ")
        .unwrap_or(&joined)
        .to_string()
}

/// A seed from the clock, for `--order random` without `--seed`.
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
