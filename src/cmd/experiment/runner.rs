//! One run of one variant: start its server (session/spawn.rs, a process
//! group, stderr kept), wait for the load's port, read its counters, run the
//! load in-process through the run session (or, under `-- sweep`, the
//! sweep command's steps, the counters read around each step), read them
//! again after `--settle`, stop it. The machine's accept-queue counters are read with
//! the server's. A server that does not start, never listens or dies
//! during the load makes a failed run with its stderr's last lines. During
//! each load a [`LoadWatch`] samples the client's own sockets to the port
//! and where the server's threads sleep.

use super::template::Variant;
use crate::flags::sweep_args::SweepArgs;
use crate::process::hlog_file::HlogTarget;
use crate::session::spawn::SpawnedServer;
use crate::session::stderr_tail::StderrTail;
use crate::session::sweep::{run_steps, PreparedSweep, StepWatch};
use crate::session::{run_plan_in, RunContext};
use stampede_analysis::{Failure, ServerCost, ServerReading, SweepRound, SweptStep};
use stampede_engine::monitor::{
    read_cost, read_listen_queue, read_machine_counters, LoadWatch, LoadWatchReport,
    LOAD_WATCH_INTERVAL,
};
use stampede_metrics::RunResult;
use stampede_plan::Plan;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lines of a failed server's stderr kept in the report.
const STDERR_LINES: usize = 5;

/// The load of every run: one fixed run, or a sweep's ladder of steps.
pub enum Work<'a> {
    Run {
        plan: &'a Plan,
        notices: &'a [String],
        workload: Option<Arc<stampede_engine::WorkloadSpec>>,
    },
    Sweep {
        args: &'a SweepArgs,
        prepared: &'a PreparedSweep,
    },
}

/// What every run shares.
pub struct Load<'a> {
    pub work: Work<'a>,
    /// Where the load's URL points: the port each server must open.
    pub addr: SocketAddr,
    /// How long after the load the counters are read again.
    pub settle: Duration,
    pub quiet: bool,
}

/// How one run ended.
pub enum Outcome {
    Done(Box<(RunResult, Option<ServerCost>)>),
    /// A sweep's round: every step with the server's cost during it.
    Swept(Box<SweepRound>),
    Failed(Failure),
    /// Ctrl-C: the run is not kept.
    Interrupted,
}

/// Runs round `round` of `variant`.
/// Runs round `round` of `variant`, its interval log (`--hlog`) at `hlog`.
pub fn run_one(
    load: &Load<'_>,
    variant: &Variant,
    round: usize,
    banner: String,
    hlog: Option<HlogTarget>,
) -> Outcome {
    let tail = StderrTail::new(STDERR_LINES);
    run_logged(load, variant, round, banner, hlog, &tail)
}

fn run_logged(
    load: &Load<'_>,
    variant: &Variant,
    round: usize,
    banner: String,
    hlog: Option<HlogTarget>,
    stderr: &StderrTail,
) -> Outcome {
    let failed = |reason: String| {
        Outcome::Failed(Failure {
            round,
            reason,
            stderr: stderr.last_lines(),
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
    let outcome = match &load.work {
        Work::Run {
            plan,
            notices,
            workload,
        } => fixed_run(load, (plan, notices, workload), pid, banner, hlog),
        Work::Sweep { args, prepared } => sweep_round(load, args, prepared, pid, banner, hlog),
    };
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(reason) => {
            let exited = server.exited();
            return failed(match exited {
                Some(status) => format!("the server exited during the load ({status})"),
                None => reason,
            });
        }
    };
    if let Some(status) = server.exited() {
        return failed(format!("the server exited during the load ({status})"));
    }
    server.stop();
    outcome
}

type RunWork<'a> = (
    &'a Plan,
    &'a [String],
    &'a Option<Arc<stampede_engine::WorkloadSpec>>,
);

/// One fixed run, the counters read before it and `--settle` after it.
fn fixed_run(
    load: &Load<'_>,
    (plan, notices, workload): RunWork<'_>,
    pid: u32,
    banner: String,
    hlog: Option<HlogTarget>,
) -> Result<Outcome, String> {
    let before = read_cost(pid).map(reading);
    let watch = LoadWatch::start(load.addr, Some(pid), LOAD_WATCH_INTERVAL).ok();
    let started = Instant::now();
    if let Some(workload) = workload {
        // Each run uses every unique row once.
        workload.rewind();
    }
    let context = RunContext {
        quiet: load.quiet,
        pids: &[pid],
        banner: vec![banner],
        workload: workload.clone(),
        hlog,
        ..RunContext::default()
    };
    let result = run_plan_in(plan, notices.to_vec(), &context);
    let loaded_s = started.elapsed().as_secs_f64();
    let watched = watch.map(LoadWatch::stop);
    let result = match result {
        Ok(result) if result.interrupted => return Ok(Outcome::Interrupted),
        Ok(result) => result,
        Err(error) => return Err(format!("the load failed: {error:#}")),
    };
    std::thread::sleep(load.settle);
    let after = read_cost(pid).map(reading);
    let cost = before.zip(after).and_then(|(before, after)| {
        ServerCost::between(&before, &after, result.requests.completed, loaded_s)
    });
    Ok(Outcome::Done(Box::new((result, with_watch(cost, watched)))))
}

/// One round of a sweep: the sweep command's steps, the counters read
/// around each step.
fn sweep_round(
    load: &Load<'_>,
    args: &SweepArgs,
    prepared: &PreparedSweep,
    pid: u32,
    banner: String,
    hlog: Option<HlogTarget>,
) -> Result<Outcome, String> {
    let mut watch = CostWatch {
        pid,
        addr: load.addr,
        settle: load.settle,
        before: None,
        during: None,
        costs: Vec::new(),
    };
    let swept = run_steps(args, prepared, &[pid], &[banner], hlog.as_ref(), &mut watch)
        .map_err(|error| format!("the load failed: {error:#}"))?;
    if swept.interrupted {
        return Ok(Outcome::Interrupted);
    }
    let document = swept
        .document
        .ok_or_else(|| "no step of the sweep completed".to_string())?;
    let steps = document
        .steps
        .into_iter()
        .zip(watch.costs)
        .map(|((load, result), cost)| SweptStep { load, result, cost })
        .collect();
    Ok(Outcome::Swept(Box::new(SweepRound {
        analysis: document.analysis,
        steps,
    })))
}

/// Reads the server's counters before and after each step of a sweep, and
/// watches the client's sockets during it.
struct CostWatch {
    pid: u32,
    addr: SocketAddr,
    settle: Duration,
    before: Option<(ServerReading, Instant)>,
    during: Option<LoadWatch>,
    /// One per completed step, in step order.
    costs: Vec<Option<ServerCost>>,
}

impl StepWatch for CostWatch {
    fn before_step(&mut self, _: usize) {
        self.before = read_cost(self.pid).map(|r| (reading(r), Instant::now()));
        self.during = LoadWatch::start(self.addr, Some(self.pid), LOAD_WATCH_INTERVAL).ok();
    }

    fn after_step(&mut self, _: usize, result: &RunResult) {
        let before = self.before.take();
        let elapsed_s = before
            .as_ref()
            .map_or(0.0, |(_, t)| t.elapsed().as_secs_f64());
        let watched = self.during.take().map(LoadWatch::stop);
        std::thread::sleep(self.settle);
        let after = read_cost(self.pid).map(reading);
        let cost = before.zip(after).and_then(|((before, _), after)| {
            ServerCost::between(&before, &after, result.requests.completed, elapsed_s)
        });
        self.costs.push(with_watch(cost, watched));
    }
}

/// The cost with what was watched during the load.
fn with_watch(cost: Option<ServerCost>, watched: Option<LoadWatchReport>) -> Option<ServerCost> {
    cost.map(|mut cost| {
        if let Some(watched) = watched {
            cost.client_tcp = watched.client_tcp;
            cost.thread_waits = watched.thread_waits;
        }
        cost
    })
}

/// The engine's reading of the server, with the machine's counters read
/// now: the accept queue, softirq time per CPU, TCP retransmits.
fn reading(mut reading: ServerReading) -> ServerReading {
    let queue = read_listen_queue().unwrap_or_default();
    (reading.listen_overflows, reading.listen_drops) = (queue.overflows, queue.drops);
    let machine = read_machine_counters();
    reading.cpus = machine.cpus;
    reading.syn_retransmits = machine.syn_retransmits;
    reading.tcp_retransmits = machine.tcp_retransmits;
    reading
}
