//! The second step of a run (run/engine.rs `run_with`): the plan split
//! into one [`WorkerPlan`] per worker thread. Each gets its group, its
//! share of the load and of `-n`, its seed and what every worker shares.

use crate::net::transport::Endpoint;
use crate::plan::worker_plan::{OpenLoad, WorkerLoad};
use crate::plan::worker_plan::{WorkerPlan, SNAPSHOT_INTERVAL};
use crate::run::options::RunOptions;
use crate::run::prepare::Prepared;
use crate::workload::RunPhases;
use stampede_plan::{share_of, LoadModel, Plan, Schedule};
use std::sync::Arc;
use std::time::Instant;

/// When the run measures, and how much.
pub(crate) struct Window {
    /// When measurement starts (after the warm-up).
    pub measure_start: Instant,
    /// When the load ends, if it has a duration.
    pub deadline: Option<Instant>,
    /// The requests to send in all (`-n`), if counted.
    pub budget: Option<u64>,
}

/// One plan per worker. `placement` gives each worker its group and its
/// place among the group's workers; `groups` each group's load model.
pub(crate) fn worker_plans(
    plan: &Plan,
    options: &RunOptions,
    prepared: &Prepared,
    (groups, placement): (&[&LoadModel], &[(usize, usize, usize)]),
    window: &Window,
    phases: Option<&Arc<RunPhases>>,
) -> Vec<WorkerPlan> {
    let workers = placement.len();
    let seed = prepared.seed;
    let mut budget_given = 0u64;
    let mut plans = Vec::with_capacity(workers);
    for (index, &(group, share_index, share_workers)) in placement.iter().enumerate() {
        let model = groups[group];
        let group_seed = if groups.len() > 1 {
            seed ^ (group as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407)
        } else {
            seed
        };
        // -n is split exactly. The closed model: in proportion to
        // connections (the last worker takes what rounding left), as each
        // connection sends at its own pace. The open model: as the pacer
        // splits the instants (worker w takes w, w + W, …, so the first
        // `count` instants give it share_of(count, w, W)), or a worker with
        // more connections would run out of requests before the others and
        // the rest of the run would go at a fraction of the rate. Several
        // groups: evenly over every worker.
        // A listed order (a replayed log) is taken w, w + W, … in either
        // model: each worker sends exactly the entries of its share.
        let listed = (options.workload.as_ref()).is_some_and(|w| w.mix_sequence.is_some());
        let worker_budget = window.budget.map(|count| {
            let share = match model {
                _ if groups.len() > 1 || listed => share_of(count, index, workers),
                LoadModel::Rate { .. } => share_of(count, index, workers),
                LoadModel::Closed { .. } if index + 1 == workers => count - budget_given,
                LoadModel::Closed { .. } => {
                    let total = plan.connections() as u64;
                    count * share_of(total, index, workers) / total
                }
            };
            budget_given += share;
            share
        });
        let mut worker_connector = prepared.connector.clone();
        let script_addr = options
            .workload
            .as_ref()
            .and_then(|w| w.script.as_ref())
            .and_then(|script| script.thread_addr(index));
        if let Some(addr) = script_addr {
            // wrk's setup() may point a thread elsewhere (thread.addr).
            worker_connector.endpoint = Endpoint::Tcp(addr);
            worker_connector.addresses = None;
        }
        plans.push(WorkerPlan {
            index,
            share: (share_index, share_workers),
            group,
            connector: worker_connector,
            request: prepared.request.clone(),
            mix: prepared.mix.clone(),
            mix_order: prepared.mix_order.clone(),
            http2: prepared.http2.clone(),
            http3: prepared.http3.clone(),
            pipeline: plan.transport.pipeline,
            head_request: plan.request.method == "HEAD",
            keepalive: plan.keepalive,
            timeout: plan.timeout,
            load: worker_load(
                model,
                share_index,
                share_workers,
                group_seed,
                options
                    .workload
                    .as_ref()
                    .and_then(|w| w.groups.get(group))
                    .and_then(|g| g.limits.total_iterations),
            ),
            budget: worker_budget,
            measure_start: window.measure_start,
            load_start: window.measure_start,
            phases: phases.cloned(),
            rendezvous: prepared.rendezvous.clone(),
            deadline: window.deadline,
            event_loop: prepared.event_loop,
            snapshot_interval: options.snapshot_interval.unwrap_or(SNAPSHOT_INTERVAL),
            workload: options.workload.clone(),
            redirect: prepared.redirect.clone(),
            follows_redirects: plan.transport.redirects > 0,
            lifetime: crate::plan::conn_lifetime::Lifetime::new(&plan.transport.lifetime),
            decode: plan.transport.compression.decode,
            stream: plan.transport.stream,
            websocket: prepared.websocket.clone(),
            seed: seed ^ 0xD1B5_4A32_D192_ED03u64.wrapping_mul(index as u64 + 1),
        });
    }
    plans
}

/// The target during warm-up: the first stage's target (or the start value
/// when that is higher), so that warm-up exercises the load about to be measured.
fn warmup_target(schedule: &Schedule) -> f64 {
    let first = schedule.stages.first().map_or(0.0, |s| s.target);
    schedule.start.max(first)
}

/// Worker `index`'s load of `model`; `total`: the group's
/// `total_iterations`, of which the worker takes the instants its pacer
/// numbers (worker w of W: w, w + W, …, the first `total` in all).
fn worker_load(
    model: &LoadModel,
    index: usize,
    workers: usize,
    seed: u64,
    total: Option<u64>,
) -> WorkerLoad {
    match model {
        LoadModel::Closed { connections } => WorkerLoad::Closed {
            schedule: connections.clone(),
            warmup_target: warmup_target(connections),
            slots: crate::drive::closed::connection_share(connections.peak(), index, workers),
        },
        LoadModel::Rate {
            per_s,
            max_connections,
            arrival,
            pace_window,
            batch_reads,
        } => {
            // Every worker follows the whole rate and takes its share of the
            // instants (open.rs): scaling the rate per worker would round up
            // once per worker (-r 100 -d 1s sent 102 with 2 threads).
            WorkerLoad::Open(OpenLoad {
                warmup_rate: warmup_target(per_s),
                per_s: per_s.clone(),
                max_connections: share_of(*max_connections as u64, index, workers).max(1) as usize,
                arrival: arrival.clone(),
                worker: index,
                workers,
                // Each worker its own stream of the run's seed.
                seed: seed ^ 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(index as u64 + 1),
                count: total.map(|n| share_of(n, index, workers)),
                pace_window: *pace_window,
                batch_reads: *batch_reads,
            })
        }
    }
}

/// Where each of `workers` workers goes among `groups` groups: (group,
/// its place in the group, the group's workers), groups in order, every
/// group at least one worker when there are enough (the caller sees to it).
pub(crate) fn place_workers(workers: usize, groups: usize) -> Vec<(usize, usize, usize)> {
    let groups = groups.max(1);
    (0..groups)
        .flat_map(|group| {
            let n = share_of(workers as u64, group, groups) as usize;
            (0..n).map(move |i| (group, i, n))
        })
        .collect()
}
