//! The open model: requests are due at intended instants computed from the
//! rate (uniform or Poisson gaps), whatever the server does. A due request
//! goes to the most recently idle connection, or a new one while under the
//! cap; when all are busy it waits in a backlog and its waiting time counts in
//! its latency, because latency is measured from the intended instant
//! (coordinated omission is not hidden). The pacer sleeps on a precise timer
//! (see precise_timer.rs) and dispatches every request whose instant has passed.
//! When measurement begins, the warm-up's instants not yet sent are dropped:
//! the window counts the requests intended in it (see WorkerState), and its
//! requests must not wait behind a backlog that nobody measures.

use crate::connection::{ConnectionContext, Slot};
use crate::precise_timer::PreciseTimer;
use stampede_plan::{Arrival, Schedule};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// A parked slot waiting for work.
#[derive(Debug, Default)]
struct Inbox {
    job: Cell<Option<Instant>>,
    wake: Notify,
}

/// Work waiting for a free connection, and free connections waiting for work.
#[derive(Debug)]
pub struct Dispatcher {
    backlog: RefCell<VecDeque<Instant>>,
    idle: RefCell<Vec<Rc<Inbox>>>,
    spawned: Cell<usize>,
    measure_start: Instant,
}

impl Dispatcher {
    fn new(measure_start: Instant) -> Dispatcher {
        Dispatcher {
            backlog: RefCell::default(),
            idle: RefCell::default(),
            spawned: Cell::new(0),
            measure_start,
        }
    }

    /// The oldest queued instant. Warm-up instants still queued once
    /// measurement has begun are dropped: they are not measured, and sent
    /// now they would make the window's own requests wait behind them.
    fn next_queued(&self) -> Option<Instant> {
        let mut backlog = self.backlog.borrow_mut();
        if backlog.front().is_some_and(|t| *t < self.measure_start)
            && Instant::now() >= self.measure_start
        {
            backlog.retain(|t| *t >= self.measure_start);
        }
        backlog.pop_front()
    }
}

/// The open-model load of one worker.
#[derive(Debug, Clone)]
pub struct OpenLoad {
    /// This worker's share of the rate, requests/s, over time from `measure_start`.
    pub per_s: Schedule,
    pub warmup_rate: f64,
    pub max_connections: usize,
    pub arrival: Arrival,
    pub seed: u64,
}

/// A small xorshift generator: Poisson gaps need speed and independence per
/// worker, not cryptographic quality.
struct Gaps {
    state: u64,
}

impl Gaps {
    fn uniform01(&mut self) -> f64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        // 53 random bits into (0, 1].
        ((self.state >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// The gap before the next request at `rate` per second.
    fn next(&mut self, arrival: Arrival, rate: f64) -> Duration {
        let mean = 1.0 / rate;
        let gap = match arrival {
            Arrival::Uniform => mean,
            Arrival::Poisson => -mean * self.uniform01().ln(),
        };
        Duration::from_secs_f64(gap.min(3600.0))
    }
}

/// While the target rate is zero, check again this often.
const IDLE_RATE_POLL: Duration = Duration::from_millis(10);

/// Produces intended instants until the budget is spent (or forever: the
/// worker drops the task at the deadline) and hands them to connections.
pub async fn run_pacer(ctx: Rc<ConnectionContext>, load: OpenLoad, measure_start: Instant) {
    let dispatcher = Rc::new(Dispatcher::new(measure_start));
    let mut gaps = Gaps {
        state: load.seed | 1,
    };
    // The schedule starts at the start of measurement (or now, during warm-up),
    // not when this task happened to be first polled.
    let mut next = measure_start.min(Instant::now());
    let mut timer = PreciseTimer::new();
    let mut dispatched_without_pause = 0u32;
    loop {
        if next < measure_start && Instant::now() >= measure_start {
            // Behind at the start of measurement: the warm-up's remaining
            // instants are dropped, as its queued ones are (next_queued).
            next = measure_start;
        }
        let rate = if next < measure_start {
            load.warmup_rate
        } else {
            load.per_s.target_at(next - measure_start)
        };
        if rate <= 0.0 {
            next += IDLE_RATE_POLL;
            timer.sleep_until(next).await;
            continue;
        }
        if next > Instant::now() {
            timer.sleep_until(next).await;
            dispatched_without_pause = 0;
        } else {
            dispatched_without_pause += 1;
            if dispatched_without_pause.is_multiple_of(1024) {
                // Catching up after a stall: let the connections run too.
                tokio::task::yield_now().await;
            }
        }
        if !ctx.state.claim_budget() {
            return;
        }
        dispatch(&ctx, &dispatcher, &load, next);
        next += gaps.next(load.arrival, rate);
    }
}

fn dispatch(
    ctx: &Rc<ConnectionContext>,
    dispatcher: &Rc<Dispatcher>,
    load: &OpenLoad,
    intended: Instant,
) {
    if let Some(inbox) = dispatcher.idle.borrow_mut().pop() {
        inbox.job.set(Some(intended));
        inbox.wake.notify_one();
        return;
    }
    if dispatcher.spawned.get() < load.max_connections {
        dispatcher.spawned.set(dispatcher.spawned.get() + 1);
        tokio::task::spawn_local(run_open_slot(ctx.clone(), dispatcher.clone(), intended));
        return;
    }
    dispatcher.backlog.borrow_mut().push_back(intended);
}

/// One connection of the open model: runs its job, then takes the oldest
/// backlog entry or parks itself as idle (most recently idle first, so the
/// fewest connections stay warm).
async fn run_open_slot(ctx: Rc<ConnectionContext>, dispatcher: Rc<Dispatcher>, first: Instant) {
    let mut slot = Slot::new(ctx.head_request);
    let inbox = Rc::new(Inbox::default());
    let mut job = first;
    loop {
        let lag = Instant::now().saturating_duration_since(job);
        ctx.state.begin_intended(job, lag);
        slot.run_request(&ctx, job).await;
        let queued = dispatcher.next_queued();
        job = match queued {
            Some(intended) => intended,
            None => {
                dispatcher.idle.borrow_mut().push(inbox.clone());
                loop {
                    inbox.wake.notified().await;
                    if let Some(intended) = inbox.job.take() {
                        break intended;
                    }
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_gaps_have_the_right_mean() {
        let mut gaps = Gaps { state: 42 };
        let n = 200_000;
        let total: f64 = (0..n)
            .map(|_| gaps.next(Arrival::Poisson, 1000.0).as_secs_f64())
            .sum();
        let mean = total / n as f64;
        assert!((mean - 0.001).abs() < 0.00002, "mean gap {mean}");
        assert_eq!(gaps.next(Arrival::Uniform, 4.0), Duration::from_millis(250));
    }

    #[test]
    fn the_warmups_queued_instants_are_dropped_once_measurement_begins() {
        let now = Instant::now();
        let ms = Duration::from_millis(1);
        let queue = |d: &Dispatcher, at: &[Instant]| d.backlog.borrow_mut().extend(at);
        // Still warming up: the backlog is served in order.
        let warming = Dispatcher::new(now + 3600 * 1000 * ms);
        queue(&warming, &[now, now + ms]);
        assert_eq!(warming.next_queued(), Some(now));
        // Measuring: warm-up instants go, the window's are served.
        let start = now - 5 * ms;
        let measuring = Dispatcher::new(start);
        queue(&measuring, &[start - 2 * ms, start - ms, start, start + ms]);
        assert_eq!(measuring.next_queued(), Some(start));
        assert_eq!(measuring.next_queued(), Some(start + ms));
        assert_eq!(measuring.next_queued(), None);
    }
}
