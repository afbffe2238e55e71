//! The last step of a run (run/engine.rs `run_with`): the aggregated
//! snapshots made into the [`Finished`] run. It says why the run stopped,
//! which groups' feeders ran out, what each rendezvous gathered, which
//! addresses got connections, and which workers were given up on.

use crate::run::options::{Finished, RunOptions};
use crate::run::prepare::Prepared;
use crate::run::watchdog::Abandoned;
use crate::worker::request_log::RequestLog;
use stampede_metrics::{Recording, SecondPoint, Snapshot};
use stampede_plan::{LoadModel, Plan};
use std::time::{Duration, SystemTime};

/// What the aggregator hands back once every worker has finished.
pub(crate) struct Aggregated {
    pub(crate) total: Snapshot,
    pub(crate) elapsed: Duration,
    pub(crate) timeseries: Vec<SecondPoint>,
    /// The run was stopped because nothing could connect (no_connection.rs).
    pub(crate) gave_up: bool,
    /// The workers the watchdog gave up on, each with what is known of
    /// its lost figures (`Watchdog::lost`).
    pub(crate) abandoned: Vec<(usize, (u32, Duration))>,
    pub(crate) grace: Duration,
    /// Per worker: its unique feeder ran out of rows.
    pub(crate) fed_out: Vec<bool>,
}

/// What the run knew of itself when its workers were gone.
pub(crate) struct RunEnd<'a> {
    /// When it started, by the wall clock.
    pub started_at: SystemTime,
    /// Its stop handle was used (SIGINT, or given up).
    pub stopped: bool,
    /// `-n` and `-d` (or `-n`'s time limit).
    pub limits: (Option<u64>, Option<Duration>),
    /// The scenario's group clock, if it has one.
    pub phases: Option<&'a crate::workload::RunPhases>,
    /// Each worker's group and place in it.
    pub placement: &'a [(usize, usize, usize)],
}

/// The finished run from the workers' merged snapshots.
pub(crate) fn finished(
    plan: &Plan,
    options: &RunOptions,
    prepared: &Prepared,
    aggregated: Aggregated,
    end: RunEnd<'_>,
    request_log: Option<RequestLog>,
) -> Finished {
    let workload = options.workload.as_deref();
    let rendezvous = rendezvous_results(prepared.rendezvous.as_deref(), workload);
    // Given up with nothing connected (no_connection.rs): no interruption.
    let interrupted = end.stopped && !aggregated.gave_up;
    let stop_reason = if aggregated.gave_up {
        Some("no_connection".into())
    } else if !aggregated.abandoned.is_empty() {
        Some("worker_stuck".into())
    } else {
        stop_reason(&aggregated, workload, end.phases, interrupted, end.limits)
    };
    let feed_ran_out = groups_fed_out(&aggregated.fed_out, end.placement, workload);
    let script = workload.and_then(|w| w.script.as_ref());
    let abandoned: Vec<Abandoned> = (aggregated.abandoned.iter())
        .map(|&(worker, (snapshots, unreported))| Abandoned {
            worker,
            hook: script.and_then(|s| s.busy_in(worker)),
            grace: aggregated.grace,
            snapshots,
            unreported,
        })
        .collect();
    let connector = &prepared.connector;
    let recording = Recording {
        started_at: end.started_at,
        elapsed: aggregated.elapsed,
        interrupted,
        dns: prepared.dns,
        total: aggregated.total,
        timeseries: aggregated.timeseries,
        event_loop: prepared.event_loop,
        tls: connector.tls.as_ref().and_then(|tls| tls.negotiated.get()),
        seed: matches!(
            plan.model,
            LoadModel::Rate {
                arrival: stampede_plan::Arrival::Poisson,
                ..
            }
        )
        .then_some(prepared.seed),
        checks: workload.map(|w| w.check_names()).unwrap_or_default(),
        judged: workload.is_some_and(|w| w.judges_responses()),
        stop_reason,
        groups: workload
            .map(|w| w.group_names(&plan.model, w.groups.len() > 1))
            .unwrap_or_default(),
    };
    let dns = match &connector.addresses {
        Some(book) => Some(book.report()),
        // Several addresses, every connection on the first.
        None if prepared.addrs.len() > 1 => Some(crate::net::dns::report_first(
            &prepared.addrs,
            recording.total.counters.connect_attempts,
        )),
        None => None,
    };
    Finished {
        rendezvous,
        feed_ran_out,
        recording,
        // The writer ends when every worker let go of its log, which an
        // abandoned one never does: its log is not waited for.
        request_log: request_log
            .filter(|_| abandoned.is_empty())
            .map(RequestLog::finish),
        dns,
        abandoned,
    }
}

/// The points' figures once the workers are gone (any user still held is
/// let go first), named by their steps.
fn rendezvous_results(
    points: Option<&crate::workload::RendezvousPoints>,
    workload: Option<&crate::workload::WorkloadSpec>,
) -> Vec<stampede_metrics::RendezvousResult> {
    let Some(points) = points else {
        return Vec::new();
    };
    points.close();
    (points.figures().into_iter())
        .map(|(target, figures)| stampede_metrics::RendezvousResult {
            step: (workload.and_then(|w| w.steps.get(target)))
                .and_then(|s| s.name.clone())
                .unwrap_or_else(|| (target + 1).to_string()),
            users: figures.size as u64,
            sent: figures.sizes.iter().sum::<usize>() as u64,
            smallest: figures.sizes.iter().min().map_or(0, |&n| n as u64),
            largest: figures.sizes.iter().max().map_or(0, |&n| n as u64),
            batches: figures.batches,
            timed_out: figures.timed_out,
            spread_us: stampede_metrics::SpreadSummary::of(&figures.spreads),
        })
        .collect()
}

/// Why the run stopped before its duration or count, if it did
/// (docs/result-schema.md, `stop_reason`): a unique feeder ran out and
/// with it the run (not when another group went on to the end), a step
/// failed under `on_error = "stop_run"`, the script called `thread:stop()`
/// in every thread, or every group ended by itself (its iterations walked,
/// its users stopped or its duration over) before the run's `-d` or `-n`.
fn stop_reason(
    aggregated: &Aggregated,
    workload: Option<&crate::workload::WorkloadSpec>,
    phases: Option<&crate::workload::RunPhases>,
    interrupted: bool,
    (budget, limit): (Option<u64>, Option<Duration>),
) -> Option<String> {
    if phases.is_some_and(|p| p.run_stopped()) {
        return Some("stop_run".into());
    }
    let before_limit = limit.is_none_or(|d| aggregated.elapsed < d);
    let under_count = budget.is_none_or(|n| aggregated.total.counters.sent < n);
    let early = !interrupted && before_limit && under_count;
    if !early {
        return None;
    }
    if aggregated.total.feed_exhausted {
        return Some("feed_exhausted".into());
    }
    let workload = workload?;
    if workload
        .script
        .as_ref()
        .is_some_and(|s| s.stopped_every_thread())
    {
        return Some("script_stopped".into());
    }
    let groups = &workload.groups;
    let bounded = groups.iter().all(|g| g.sequential && g.is_bounded());
    bounded.then(|| "groups_done".into())
}

/// The groups (by name, or number from 1) of the workers whose unique
/// feeder ran out (`fed_out`), each once, in group order.
fn groups_fed_out(
    fed_out: &[bool],
    placement: &[(usize, usize, usize)],
    workload: Option<&crate::workload::WorkloadSpec>,
) -> Vec<String> {
    let mut groups: Vec<usize> = (placement.iter().zip(fed_out))
        .filter(|&(_, &out)| out)
        .map(|(&(group, _, _), _)| group)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let name = |group: usize| {
        workload
            .and_then(|w| w.groups.get(group))
            .and_then(|g| g.name.clone())
            .unwrap_or_else(|| (group + 1).to_string())
    };
    groups.into_iter().map(name).collect()
}
