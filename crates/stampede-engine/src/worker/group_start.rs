//! When a scenario group's worker starts and ends (its group keys):
//! before its load begins, the worker waits for its group's phase to open
//! and its `start_delay` to pass (workload/phases.rs keeps the clock), then
//! takes that instant as the origin of its load (ramp-up, rate) and ends
//! no later than its `duration` after it. Shared by the reactors and the
//! tokio worker: both run it before their own loop, and the wait costs
//! nothing per request.

use crate::plan::worker_plan::WorkerPlan;
use crate::workload::{PhaseTicket, START_POLL};
use std::time::Instant;
use tokio::sync::watch;

/// Waits until `plan`'s group may start (or the run is stopped, its
/// deadline passes, or a step elsewhere stopped the run: the worker then
/// ends at once), and sets the plan's load origin and group deadline.
/// Returns the ticket that reports the worker's end to the group clock;
/// `None` outside a scenario with group keys.
pub(crate) fn await_group_start(
    plan: &mut WorkerPlan,
    stop: &watch::Receiver<bool>,
) -> Option<PhaseTicket> {
    let phases = plan.phases.clone()?;
    let limits = plan
        .workload
        .as_ref()?
        .groups
        .get(plan.group)?
        .limits
        .clone();
    let ticket = PhaseTicket::new(phases.clone(), limits.phase);
    loop {
        let now = Instant::now();
        if let Some(at) = phases.group_starts_at(&limits).filter(|&at| now >= at) {
            plan.load_start = plan.load_start.max(at);
            if let Some(duration) = limits.duration {
                let end = plan.load_start + duration;
                plan.deadline = Some(plan.deadline.map_or(end, |d| d.min(end)));
            }
            return Some(ticket);
        }
        let past_deadline = plan.deadline.is_some_and(|d| now >= d);
        if *stop.borrow() || past_deadline || phases.run_stopped() {
            // Nothing of this group runs: its loop ends at once.
            plan.deadline = Some(now);
            return Some(ticket);
        }
        std::thread::sleep(START_POLL);
    }
}
