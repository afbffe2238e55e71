//! One run of one variant: start its server (session/spawn.rs, a process
//! group, stderr kept), wait for the load's port, read its counters, run the
//! load in-process through the run session, read them again after
//! `--settle`, stop it. The machine's accept-queue counters are read with
//! the server's. A server that does not start, never listens or dies
//! during the load makes a failed run with its stderr's last lines.

use super::template::Variant;
use crate::session::spawn::SpawnedServer;
use crate::session::{run_plan_in, RunContext};
use stampede_analysis::{Failure, ServerCost, ServerReading};
use stampede_engine::monitor::{read_cost, read_listen_queue};
use stampede_metrics::RunResult;
use stampede_plan::Plan;
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lines of a failed server's stderr kept in the report.
const STDERR_LINES: usize = 5;

/// What every run shares.
pub struct Load<'a> {
    pub plan: &'a Plan,
    pub notices: &'a [String],
    pub workload: Option<Arc<stampede_engine::WorkloadSpec>>,
    /// Where the load's URL points: the port each server must open.
    pub addr: SocketAddr,
    /// How long after the load the counters are read again.
    pub settle: Duration,
    pub quiet: bool,
}

/// How one run ended.
pub enum Outcome {
    Done(Box<RunResult>, Option<ServerCost>),
    Failed(Failure),
    /// Ctrl-C: the run is not kept.
    Interrupted,
}

/// Runs round `round` of `variant`.
pub fn run_one(load: &Load<'_>, variant: &Variant, round: usize, banner: String) -> Outcome {
    let stderr = stderr_path(round);
    let outcome = run_logged(load, variant, round, banner, &stderr);
    let _ = std::fs::remove_file(&stderr);
    outcome
}

fn run_logged(
    load: &Load<'_>,
    variant: &Variant,
    round: usize,
    banner: String,
    stderr: &std::path::Path,
) -> Outcome {
    let failed = |reason: String| {
        Outcome::Failed(Failure {
            round,
            reason,
            stderr: last_lines(stderr),
        })
    };
    if TcpStream::connect_timeout(&load.addr, Duration::from_millis(200)).is_ok() {
        return failed(format!(
            "{} accepts connections before the server starts: another process holds the port",
            load.addr
        ));
    }
    let mut server = match SpawnedServer::start_logged(&variant.command, load.addr, stderr) {
        Ok(server) => server,
        Err(error) => return failed(format!("{error:#}")),
    };
    if crate::process::interrupt::signalled() {
        return Outcome::Interrupted;
    }
    let pid = server.pid();
    let before = read_cost(pid).map(reading);
    let started = Instant::now();
    if let Some(workload) = &load.workload {
        // Each run uses every unique row once.
        workload.rewind();
    }
    let context = RunContext {
        quiet: load.quiet,
        pids: &[pid],
        banner: vec![banner],
        workload: load.workload.clone(),
        ..RunContext::default()
    };
    let result = run_plan_in(load.plan, load.notices.to_vec(), &context);
    let loaded_s = started.elapsed().as_secs_f64();
    if let Some(status) = server.exited() {
        return failed(format!("the server exited during the load ({status})"));
    }
    let result = match result {
        Ok(result) if result.interrupted => return Outcome::Interrupted,
        Ok(result) => result,
        Err(error) => return failed(format!("the load failed: {error:#}")),
    };
    std::thread::sleep(load.settle);
    let after = read_cost(pid).map(reading);
    server.stop();
    let cost = before.zip(after).and_then(|(before, after)| {
        ServerCost::between(&before, &after, result.requests.completed, loaded_s)
    });
    Outcome::Done(Box::new(result), cost)
}

/// The engine's reading of the server, with the machine's accept-queue
/// counters read now.
fn reading(mut reading: ServerReading) -> ServerReading {
    let queue = read_listen_queue().unwrap_or_default();
    (reading.listen_overflows, reading.listen_drops) = (queue.overflows, queue.drops);
    reading
}

fn stderr_path(round: usize) -> PathBuf {
    std::env::temp_dir().join(format!(
        "stampede-experiment-{}-{round}.stderr",
        std::process::id()
    ))
}

/// The last lines of the server's stderr.
fn last_lines(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_LINES)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}
