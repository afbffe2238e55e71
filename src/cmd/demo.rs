//! `stampede demo`: no setup needed. Starts the built-in target in this
//! process on a free loopback port, loads it for a few seconds with the normal
//! engine and progress line, prints the summary, and checks the client's
//! exact count against the server's own.

use crate::flags::plan_args::build_plan;
use crate::flags::run_args::RunArgs;
use crate::process::output::OutputFormat;
use crate::session::delivery::deliver;
use crate::session::run_plan;
use anyhow::Context;
use stampede_plan::parse_duration;
use stampede_report::{counted, format_count};
use stampede_target::{Config, Server};
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "Examples:
  stampede demo
  stampede demo -d 10s -c 200 --json demo.json";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct DemoArgs {
    /// How long to load the built-in target
    #[arg(short = 'd', long, default_value = "5s", value_parser = parse_duration, value_name = "DUR")]
    pub duration: Duration,
    /// Concurrent connections
    #[arg(short = 'c', long, default_value_t = 50, value_name = "N")]
    pub connections: usize,
    /// Write the full result as JSON to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

/// Splits the machine's CPUs between the in-process server and the client.
fn split_cpus() -> (usize, usize) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let server = (cpus / 2).max(1);
    (server, (cpus - server).max(1))
}

pub fn execute(args: DemoArgs) -> anyhow::Result<i32> {
    crate::process::output::preflight_given(&[("--json", args.json.as_ref())])?;
    let (server_threads, client_threads) = split_cpus();
    let config = Config {
        threads: server_threads,
        ..Config::default()
    };
    let server = Server::start("127.0.0.1:0".parse().expect("literal address"), config)
        .context("starting the built-in target")?;
    let url = format!("http://{}/index.html", server.local_addr());
    eprintln!(
        "stampede demo: built-in target on {url} ({}); loading it with {} on {} for {:.0}s",
        counted(server_threads as u64, "server thread"),
        counted(args.connections as u64, "connection"),
        counted(client_threads as u64, "client thread"),
        args.duration.as_secs_f64()
    );
    // Typed arguments on `run`'s defaults: no command line to parse again.
    let mut run_args = RunArgs::for_url(&url)?;
    run_args.connections = Some(args.connections);
    run_args.threads = Some(client_threads);
    run_args.duration = Some(args.duration);
    run_args.json = args.json.clone();
    let (plan, notices) = build_plan(&run_args)?;
    let result = run_plan(&plan, notices, false)?;
    let stats = server.shutdown().context("stopping the built-in target")?;
    let code = deliver(
        &result,
        args.json.as_ref(),
        OutputFormat::Text,
        &run_args.exports,
    )?;
    println!();
    println!(
        "  Cross-check   the target served {} responses; stampede counted {} complete + {} unfinished",
        format_count(stats.requests_total),
        format_count(result.requests.completed),
        format_count(result.requests.unfinished)
    );
    Ok(code)
}
