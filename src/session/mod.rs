//! One run session: a plan run with the live view or progress line, the
//! process monitor, the `--metrics` and `--web` feed, the per-request exports, the SLO check and the
//! self-check warnings, giving a [`RunResult`]. Shared by run, repeat,
//! sweep, demo and the compat front-ends; what happens to the result
//! afterwards (printing, files, exit status) is delivery.rs.
//!
//! The folder holds running a plan: this session, `delivery` (the result
//! leaving the process), `repeat` (rounds of one plan), `spawn` (the server
//! under test, `stderr_tail` the last lines it wrote) and `sweep` (a ladder of steps, shared by sweep and
//! experiment). The self-check's warnings are stampede-report's.

pub mod delivery;
pub mod repeat;
pub mod spawn;
pub mod stderr_tail;
pub mod sweep;

use crate::flags::run_args::SloArg;
use crate::process::exports::{self, ExportArgs};
use crate::process::interrupt;
use crate::view;
use anyhow::Context;
use delivery::{Delivery, Keeper, Latest};
use stampede_engine::monitor::{ClientThreads, Monitor, Watched};
use stampede_exporters::metrics_feed;
use stampede_metrics::Running;
use stampede_metrics::{Environment, RunResult, SloCheck};
use stampede_plan::{Plan, StopCondition};
use std::time::{Duration, SystemTime};

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
    /// `--metrics`: where the snapshot stream's readings are published.
    pub metrics: Option<stampede_exporters::metrics_feed::Board>,
    /// `--web`: where the live page's copy of the run so far is kept.
    pub web: Option<stampede_exporters::web_state::LiveBoard>,
    /// The result's `run_id` when chosen before the run (the `--metrics`
    /// label); None: a fresh one.
    pub run_id: Option<&'a str>,
    /// `--seed`: the Poisson arrivals' seed; None: a new one each run.
    pub seed: Option<u64>,
    /// A front-end's own per-request writer (`stampede jmeter -l`'s JTL),
    /// taken in place of the `--log-requests`/`--gnuplot` exports.
    pub request_log: Option<&'a std::cell::RefCell<Option<stampede_engine::RequestLogOptions>>>,
    /// Templates, feeders, checks and scenario steps (plan_args::build_run).
    pub workload: Option<std::sync::Arc<stampede_engine::WorkloadSpec>>,
    /// `--hlog`: the interval log of this run (a sweep step's or a
    /// round's own file).
    pub hlog: Option<crate::process::hlog_file::HlogTarget>,
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
    let mut notices = notices;
    check_fd_headroom(plan)?;
    let stop = interrupt::stop_handle()?;
    let no_exports = ExportArgs::default();
    let own_log = context.request_log.and_then(|log| log.borrow_mut().take());
    let (request_log, created) = match own_log {
        Some(log) => (Some(log), exports::CreatedFiles::default()),
        None => exports::open_request_log(context.exports.unwrap_or(&no_exports), plan)?,
    };
    for notice in &notices {
        eprintln!("stampede: note: {notice}");
    }
    // What the kernel offers HTTP/3 is a fact about the run, not advice
    // before it: the result and its summary carry it, stderr does not
    // print it a second time.
    if plan.transport.http3 {
        notices.push(stampede_engine::offload_notice());
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
    let run_id = context
        .run_id
        .map_or_else(stampede_metrics::new_run_id, str::to_string);
    if let Some(delivery) = context.salvage {
        let running = Running {
            run_id: run_id.clone(),
            plan: plan.clone(),
            notices: notices.clone(),
            environment: environment.clone(),
            started_at: SystemTime::now(),
            version: env!("CARGO_PKG_VERSION"),
        };
        delivery::arm_snapshot(running, latest.clone(), delivery.clone());
    }
    let hlog_target = (context.hlog.clone()).or_else(|| context.exports?.hlog_target());
    let hlog = match &hlog_target {
        Some(target) => {
            let names: Vec<Option<String>> = (context.workload.iter())
                .flat_map(|w| w.steps.iter().map(|s| s.name.clone()))
                .collect();
            let checks: Vec<_> = (context.workload.iter())
                .flat_map(|w| w.check_names())
                .collect();
            let tags = crate::process::hlog_file::run_tags(plan, &names, &checks);
            Some((
                crate::process::hlog_file::HlogSink::create(&target.path, tags)?,
                target.interval,
            ))
        }
        None => None,
    };
    let options = stampede_engine::RunOptions {
        request_log,
        snapshot_interval: context.snapshot_interval,
        client_threads,
        seed: context.seed,
        workload: context.workload.clone(),
        intervals: hlog
            .as_ref()
            .map(|(sink, length)| stampede_engine::IntervalLog {
                length: *length,
                sink: Box::new(sink.clone()),
            }),
    };
    let mut keeper = Keeper::new(view.as_mut(), latest, stop.clone());
    let mut fed = metrics_feed::Feed::new(
        &mut keeper,
        context.metrics.clone(),
        context.web.clone(),
        plan,
        context.workload.as_deref(),
    );
    let finished = match context.watcher {
        Some(watcher) => {
            let mut both = view::Both(&mut fed, &mut *watcher.borrow_mut());
            stampede_engine::run_with(plan, &mut both, &stop, options)
        }
        None => stampede_engine::run_with(plan, &mut fed, &stop, options),
    };
    view.finish();
    let mut report = monitor.stop();
    // The interval log is closed whatever became of the run: what was
    // measured before a failure is kept.
    let hlog_closed = hlog.map_or(Ok(()), |(sink, _)| sink.close());
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
    hlog_closed?;
    let version = env!("CARGO_PKG_VERSION");
    let recording = &finished.recording;
    metrics_feed::publish_final(
        context.metrics.as_ref(),
        plan,
        context.workload.as_deref(),
        recording,
    );
    let mut result = RunResult::from_recording(plan, recording, environment, version, notices);
    // A run whose `-n` was all sent lost nothing to the feeder (a replay's
    // rows are exactly its count).
    let count_sent = matches!(plan.stop, stampede_plan::StopCondition::Requests { count, .. } if result.requests.sent >= count);
    if !finished.feed_ran_out.is_empty()
        && recording.stop_reason.is_none()
        && !recording.interrupted
        && !count_sent
    {
        // The run went on to its end (another group did): the feeder's
        // running out stopped its own group only (docs/scenarios.md).
        let groups = finished.feed_ran_out.join(", ");
        result.notices.push(format!(
            "group {groups}: its unique feeder ran out of rows and its users stopped; the other groups went on to the run's end"
        ));
    }
    for stuck in &finished.abandoned {
        // A hook that never returned (the engine's watchdog): said at once,
        // and kept in the result.
        eprintln!("stampede: warning: {stuck}");
        result.warnings.push(stuck.to_string());
    }
    result.run_id = run_id;
    result.dns = finished.dns;
    result.rendezvous = finished.rendezvous;
    exports::apply_request_log(&mut result, finished.request_log);
    if let Some(workload) = &context.workload {
        workload.name_steps(&mut result);
    }
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
        result.slo = slo_checks(conditions, &result);
    }
    let warnings = stampede_report::selfcheck_warnings(plan, &result);
    result.warnings.extend(warnings);
    Ok(result)
}

/// The SLO conditions checked against a result, as the result file keeps
/// them (a run's, and a merge's over the whole).
pub fn slo_checks(
    conditions: &[stampede_analysis::Condition],
    result: &RunResult,
) -> Vec<SloCheck> {
    stampede_analysis::evaluate(conditions, result)
        .into_iter()
        .map(|outcome| SloCheck {
            condition: outcome.condition,
            measured: outcome.measured,
            unit: outcome.unit.to_string(),
            passed: outcome.passed,
        })
        .collect()
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
