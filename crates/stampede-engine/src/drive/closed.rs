//! The closed model: each active slot keeps one request in flight, sending the
//! next as soon as the last one ends. The number of active slots follows the
//! worker's share of the connection schedule (ramp-up, stages); slots above it
//! finish their request, close their connection and park.

use crate::drive::connection::Slot;
use crate::worker::context::ConnectionContext;
use crate::worker::housekeeping::CONTROL_PERIOD;
use stampede_plan::{share_of, Schedule};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;
use tokio::sync::Notify;

/// The gate that says how many of this worker's slots may run.
#[derive(Debug, Default)]
pub(crate) struct ActiveSlots {
    limit: Cell<usize>,
    changed: Notify,
}

impl ActiveSlots {
    /// True while slot `index` may run.
    pub(crate) fn is_active(&self, index: usize) -> bool {
        index < self.limit.get()
    }

    /// Waits until slot `index` may run.
    pub(crate) async fn wait_until_active(&self, index: usize) {
        while !self.is_active(index) {
            let changed = self.changed.notified();
            if self.is_active(index) {
                return;
            }
            changed.await;
        }
    }

    fn set(&self, limit: usize) {
        if self.limit.replace(limit) != limit {
            self.changed.notify_waiters();
        }
    }
}

/// This worker's share of a total connection target: the target rounded to
/// whole connections and split like every count ([`share_of`]), so shares
/// always add up to the total.
pub(crate) fn connection_share(total: f64, worker: usize, workers: usize) -> usize {
    let total = total.round().max(0.0) as u64;
    share_of(total, worker, workers) as usize
}

/// Runs slot `index` of this worker until the budget is spent (duration runs
/// are ended by the worker dropping the task).
pub(crate) async fn run_closed_slot(
    ctx: Rc<ConnectionContext>,
    gate: Rc<ActiveSlots>,
    index: usize,
) {
    let mut slot = Slot::new(ctx.head_request, index as u32);
    loop {
        while index >= gate.limit.get() {
            slot.close(&ctx);
            let changed = gate.changed.notified();
            if index < gate.limit.get() {
                break;
            }
            changed.await;
        }
        if slot.user_done() {
            // Its iterations walked (or stopped by on_error): this user is done.
            slot.close(&ctx);
            return;
        }
        if ctx.pipeline_depth() > 1 {
            let mut batch = 0;
            while batch < ctx.pipeline_depth() && ctx.state.claim_budget() {
                ctx.state.begin_request();
                batch += 1;
            }
            if batch == 0 {
                return;
            }
            slot.run_pipelined(&ctx, Instant::now(), batch).await;
            continue;
        }
        slot.rendezvous(&ctx).await;
        if !ctx.state.claim_budget() {
            return;
        }
        ctx.state.begin_request();
        slot.run_request(&ctx, Instant::now()).await;
    }
}

/// Keeps the gate at this worker's share of `schedule`, measured from
/// `measure_start` (warm-up runs at the first stage's target).
pub(crate) async fn control_slots(
    gate: Rc<ActiveSlots>,
    schedule: Schedule,
    warmup_target: f64,
    measure_start: Instant,
    worker: usize,
    workers: usize,
) {
    let constant = schedule.stages.iter().all(|s| s.target == schedule.start);
    loop {
        let now = Instant::now();
        gate.set(slots_at(
            &schedule,
            warmup_target,
            measure_start,
            now,
            worker,
            workers,
        ));
        if constant && now >= measure_start {
            return;
        }
        tokio::time::sleep(CONTROL_PERIOD).await;
    }
}

/// How many of this worker's slots may run at `now`: its share of the
/// schedule's target (warm-up runs at the first stage's target).
pub(crate) fn slots_at(
    schedule: &Schedule,
    warmup_target: f64,
    measure_start: Instant,
    now: Instant,
    worker: usize,
    workers: usize,
) -> usize {
    let total = if now < measure_start {
        warmup_target
    } else {
        schedule.target_at(now - measure_start)
    };
    connection_share(total, worker, workers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_total() {
        for total in 0..20 {
            let sum: usize = (0..3).map(|w| connection_share(total as f64, w, 3)).sum();
            assert_eq!(sum, total);
        }
        assert_eq!(connection_share(1.4, 0, 2), 1);
        assert_eq!(connection_share(1.4, 1, 2), 0);
    }
}
