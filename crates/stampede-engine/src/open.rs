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
use crate::worker_plan::OpenLoad;
use stampede_plan::{Arrival, Schedule};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Instant;
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

    /// An exponentially distributed gap with mean 1.
    fn exponential(&mut self) -> f64 {
        -self.uniform01().ln()
    }
}

/// The intended instants of one worker. The run's instants are where the
/// area under its rate (see [`Schedule::time_of`]) reaches 0, 1, 2, …; in
/// [0, d) there are exactly ⌈area up to d⌉ of them (`-r 100 -d 1s`: 100).
/// With uniform arrival, worker `w` of `W` takes numbers w, w + W, w + 2W…,
/// so the workers' shares differ by at most one and add up to the run's
/// exactly (nothing is rounded up per worker), and the workers' sends
/// interleave instead of coinciding. With Poisson arrival each worker is a
/// Poisson process of a W-th of the rate (the time-change method: unit
/// exponential gaps in area), independent of the others; together they are
/// a Poisson process of the whole rate.
struct Instants {
    arrival: Arrival,
    gaps: Gaps,
    offset: u64,
    stride: u64,
    /// Instants taken in the current phase.
    taken: u64,
    /// Poisson: the area reached in the current phase.
    area: f64,
    /// Warm-up (its origin and rate) until `measure_start`, then measurement.
    warmup: Option<(Instant, Schedule)>,
    per_s: Schedule,
    measure_start: Instant,
    /// No instant at or after this (the run's deadline).
    end: Option<Instant>,
}

impl Instants {
    fn new(load: &OpenLoad, now: Instant, measure_start: Instant, end: Option<Instant>) -> Self {
        let warmup = (now < measure_start).then(|| {
            let rate = Schedule {
                start: load.warmup_rate,
                stages: Vec::new(),
            };
            (now, rate)
        });
        Instants {
            arrival: load.arrival,
            gaps: Gaps {
                state: load.seed | 1,
            },
            offset: load.worker as u64,
            stride: load.workers.max(1) as u64,
            taken: 0,
            area: 0.0,
            warmup,
            per_s: load.per_s.clone(),
            measure_start,
            end,
        }
    }

    /// The area of this worker's next instant in the current phase.
    fn next_area(&mut self) -> f64 {
        match self.arrival {
            Arrival::Uniform => (self.offset + self.taken * self.stride) as f64,
            Arrival::Poisson => {
                self.area += self.stride as f64 * self.gaps.exponential();
                self.area
            }
        }
    }

    /// The next intended instant, or `None` when there is none before the end.
    fn next(&mut self) -> Option<Instant> {
        loop {
            let area = self.next_area();
            if let Some((origin, rate)) = &self.warmup {
                match rate.time_of(area).map(|t| *origin + t) {
                    Some(at) if at < self.measure_start => {
                        self.taken += 1;
                        return Some(at);
                    }
                    _ => {
                        // Measurement starts its own count from its start.
                        self.warmup = None;
                        self.taken = 0;
                        self.area = 0.0;
                        continue;
                    }
                }
            }
            let at = self.measure_start + self.per_s.time_of(area)?;
            if self.end.is_some_and(|end| at >= end) {
                return None;
            }
            self.taken += 1;
            return Some(at);
        }
    }
}

/// Produces this worker's intended instants until the budget is spent or
/// there are no more before `end` (then it waits: the worker ends the run at
/// the deadline), and hands them to connections.
pub async fn run_pacer(
    ctx: Rc<ConnectionContext>,
    load: OpenLoad,
    measure_start: Instant,
    end: Option<Instant>,
) {
    let dispatcher = Rc::new(Dispatcher::new(measure_start));
    // The schedule starts at the start of measurement (or now, during warm-up),
    // not when this task happened to be first polled.
    let mut instants = Instants::new(&load, Instant::now(), measure_start, end);
    let mut timer = PreciseTimer::new();
    let mut dispatched_without_pause = 0u32;
    loop {
        let Some(next) = instants.next() else {
            if end.is_some() {
                std::future::pending::<()>().await;
            }
            return;
        };
        if next < measure_start && Instant::now() >= measure_start {
            // Behind at the start of measurement: the warm-up's remaining
            // instants are dropped, as its queued ones are (next_queued).
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
    use std::time::Duration;

    fn load(per_s: Schedule, arrival: Arrival, worker: usize, workers: usize) -> OpenLoad {
        OpenLoad {
            per_s,
            warmup_rate: 0.0,
            max_connections: 1,
            arrival,
            seed: 42,
            worker,
            workers,
        }
    }

    fn taken(load: &OpenLoad, start: Instant, end: Instant) -> Vec<Instant> {
        let mut instants = Instants::new(load, start, start, Some(end));
        std::iter::from_fn(|| instants.next()).collect()
    }

    #[test]
    fn workers_share_the_instants_exactly() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        for (rate, workers) in [(100.0, 1), (100.0, 2), (101.0, 2), (100.0, 3), (7.0, 3)] {
            let schedule = Schedule::constant(rate, second);
            let mut all = Vec::new();
            for worker in 0..workers {
                let mine = taken(
                    &load(schedule.clone(), Arrival::Uniform, worker, workers),
                    start,
                    start + second,
                );
                let expected = stampede_plan::share_of(rate as u64, worker, workers);
                assert_eq!(
                    mine.len() as u64,
                    expected,
                    "{rate}/s, worker {worker} of {workers}"
                );
                all.extend(mine);
            }
            all.sort();
            all.dedup();
            assert_eq!(
                all.len(),
                rate as usize,
                "{rate}/s over {workers}: no instant twice"
            );
        }
    }

    #[test]
    fn warmup_instants_stop_at_the_start_of_measurement() {
        let start = Instant::now();
        let measure = start + Duration::from_millis(500);
        let mut plan = load(
            Schedule::constant(10.0, Duration::from_secs(1)),
            Arrival::Uniform,
            0,
            1,
        );
        plan.warmup_rate = 10.0;
        let mut instants = Instants::new(
            &plan,
            start,
            measure,
            Some(measure + Duration::from_secs(1)),
        );
        let all: Vec<Instant> = std::iter::from_fn(|| instants.next()).collect();
        assert_eq!(all.iter().filter(|t| **t < measure).count(), 5);
        assert_eq!(all.iter().filter(|t| **t >= measure).count(), 10);
        assert_eq!(all[5], measure, "measurement starts on its first instant");
    }

    #[test]
    fn poisson_instants_have_the_right_mean() {
        let start = Instant::now();
        let end = start + Duration::from_secs(200);
        let schedule = Schedule::constant(1000.0, Duration::from_secs(200));
        let count: usize = (0..2)
            .map(|worker| {
                taken(
                    &load(schedule.clone(), Arrival::Poisson, worker, 2),
                    start,
                    end,
                )
                .len()
            })
            .sum();
        let expected = 200_000.0;
        assert!((count as f64 - expected).abs() < 0.01 * expected, "{count}");
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
