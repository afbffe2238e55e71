//! The reactors: hand-driven event loops for HTTP/1.1, plain or over TLS
//! (tls.rs), in the closed and the open model, the leanest path per request
//! (issues 11, 17). Two drive the sockets: epoll (each socket registered
//! once, edge-triggered; a short read ends the reading) and io_uring (sends
//! queued on a ring, multishot receives into a provided buffer ring, one
//! syscall per batch). Both write the next request from the handler that
//! completed the previous response and find timeouts by a sweep over the
//! slots, not by a timer per request. Between event batches each turn
//! ticks the worker's housekeeping (housekeeping.rs, the tokio worker's
//! too: warm-up, snapshots, deadline, stop), follows the connection
//! schedule, and in the open model dispatches every request due
//! (open_dispatch.rs); the wait between batches ends at the next intended
//! instant with nanosecond precision, so no timer is armed per request. In the closed
//! model a slot may carry a pipelined batch (`--pipeline`): the batch is
//! written at once and its responses are recorded one by one (ledger.rs).
//! With `--batch-reads` the wait for answers starts at most once per pace
//! window, and each answer is stamped with the kernel's receive time
//! (rx_stamp.rs), not the later time it was read.
//! The tokio path (worker.rs) drives HTTP/2 and TLS through a proxy.

mod epoll;
mod h2_conn;
mod open_dispatch;
mod rx_stamp;
mod slot;
mod slot_state;
mod socket;
mod tls;
mod uring;
mod ws;

pub(crate) use uring::uring_unavailable;

use crate::drive::closed::slots_at;
use crate::plan::worker_plan::{WorkerLoad, WorkerMessage, WorkerPlan};
use crate::worker::context::{connection_context, ConnectionContext};
use crate::worker::housekeeping::{Housekeeping, Tick};
use crate::worker::load_end::{load_done, starts_no_more, LoadLeft};
use crate::worker::request_log::WorkerLogHandle;
use crate::worker::worker_state::WorkerState;
use open_dispatch::{Destination, OpenDispatch};
use rx_stamp::RxStamps;
pub(crate) use slot::{Phase, ReactorSlot, SlotBase, Step, WorkerIo};
use stampede_plan::EventLoop;
use std::io;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Bounds of the timeout sweep's period (a twentieth of the shortest timeout).
const SWEEP_MIN: Duration = Duration::from_millis(5);
const SWEEP_MAX: Duration = Duration::from_millis(100);

/// Runs a worker until its budget is spent, its deadline passes or it is
/// told to stop, and sends its snapshots like any worker. `wait` waits up to
/// the given time for socket events and hands each to its slot and then to
/// [`Turn::advance`].
pub(crate) fn drive<I: WorkerIo, S: ReactorSlot<I>>(
    plan: &WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    ctx: &ConnectionContext,
    io: &I,
    slots: &mut [S],
    mut wait: impl FnMut(&mut [S], &mut Turn, Duration) -> io::Result<()>,
) -> io::Result<()> {
    let state = &ctx.state;
    let start = Instant::now();
    let shortest_timeout = plan.timeout.min(ctx.connector.connect_timeout);
    let sweep_period = (shortest_timeout / 20).clamp(SWEEP_MIN, SWEEP_MAX);
    let mut turn = Turn {
        limit: 0,
        runnable: Vec::new(),
        backing_off: Vec::new(),
        open: None,
        pipeline: ctx.pipeline_depth().max(1),
    };
    let closed = match &plan.load {
        WorkerLoad::Closed {
            schedule,
            warmup_target,
            ..
        } => Some((schedule, *warmup_target)),
        WorkerLoad::Open(load) => {
            // An HTTP/2 slot carries up to `--streams` requests at once.
            let per_slot = plan.http2.as_ref().map_or(1, |h2| h2.streams);
            let dispatch = OpenDispatch::new(load, start, plan.load_start, plan.deadline, per_slot);
            turn.open = Some(dispatch);
            turn.limit = slots.len();
            None
        }
    };
    let workload = ctx.workload.as_ref();
    let log = ctx.log.as_ref();
    let mut housekeeping =
        Housekeeping::new(plan, state, log, workload, to_aggregator, stop, start);
    let mut next_sweep = start + sweep_period;
    let far = start + Duration::from_secs(86_400 * 365);
    // `--batch-reads`: a wait for answers starts at most once per window,
    // so that one wake-up takes what came meanwhile (wrk2's 1 ms batches).
    // (Each answer is stamped with its kernel receive time: rx_stamp.rs.)
    let batch = match &plan.load {
        WorkerLoad::Open(load) if load.batch_reads => load.pace_window,
        _ => Duration::ZERO,
    };
    let mut last_wait_end = start;
    loop {
        let now = Instant::now();
        let control = match housekeeping.tick(now) {
            Tick::Stop => break,
            Tick::Go { control } => control,
        };
        if let Some((schedule, warmup_target)) = closed.filter(|_| control) {
            let limit = slots_at(
                schedule,
                warmup_target,
                plan.load_start,
                now,
                plan.share.0,
                plan.share.1,
            )
            .min(slots.len());
            if limit > turn.limit {
                let idle = (turn.limit..limit)
                    .filter(|&i| slots[i].phase() == Phase::Idle && !turn.is_backing_off(i));
                let idle: Vec<usize> = idle.collect();
                turn.runnable.extend(idle);
            }
            turn.limit = limit;
        }
        if now >= next_sweep {
            for index in 0..slots.len() {
                if slots[index].is_overdue(now) {
                    let step = slots[index].on_timeout(io);
                    turn.advance(io, ctx, slots, index, step);
                }
            }
            next_sweep = now + sweep_period;
        }
        if !turn.backing_off.is_empty() {
            turn.wake_backed_off(now);
        }
        for index in std::mem::take(&mut turn.runnable) {
            if slots[index].phase() == Phase::Idle {
                turn.advance(io, ctx, slots, index, Step::Answered);
            }
        }
        if turn.open.is_some() {
            turn.dispatch_due(io, ctx, slots, now);
        }
        let users_done = workload.is_some_and(|w| w.all_users_done(slots.len()));
        if turn.is_done(state, plan.deadline.is_some(), users_done)
            && !slots
                .iter_mut()
                .fold(false, |busy, slot| slot.linger(io) | busy)
        {
            break;
        }
        let wake_at = (housekeeping.next_wake())
            .min(next_sweep)
            .min(turn.next_retry().unwrap_or(far))
            .min(turn.next_due_at(slots.len()).unwrap_or(far));
        let mut timeout = if turn.runnable.is_empty() {
            wake_at.saturating_duration_since(Instant::now())
        } else {
            Duration::ZERO
        };
        if !batch.is_zero() && !timeout.is_zero() {
            let now = Instant::now();
            let until = (last_wait_end + batch).min(wake_at);
            if now < until {
                // What the turn sent leaves now, not a window late.
                io.submit();
                std::thread::sleep(until - now);
                timeout = wake_at.saturating_duration_since(Instant::now());
            }
        }
        wait(slots, &mut turn, timeout)?;
        if !batch.is_zero() {
            last_wait_end = Instant::now();
        }
    }
    let finished_at = Instant::now();
    end_slots(io, ctx, slots, &mut turn, sweep_period, &mut wait)?;
    housekeeping.finish(finished_at);
    Ok(())
}

/// The run is over: each slot ends what it must of its connection (a
/// WebSocket's close, cut off mid-message or not, as the tokio driver's
/// ws_load.rs does), and the worker serves their events until none
/// lingers, each bounded by its slot's deadline. Nothing new starts: an
/// answer parks its slot.
fn end_slots<I: WorkerIo, S: ReactorSlot<I>>(
    io: &I,
    ctx: &ConnectionContext,
    slots: &mut [S],
    turn: &mut Turn,
    period: Duration,
    wait: &mut impl FnMut(&mut [S], &mut Turn, Duration) -> io::Result<()>,
) -> io::Result<()> {
    turn.limit = 0;
    turn.open = None;
    let mut lingering = slots.iter_mut().fold(false, |any, slot| slot.end(io) | any);
    while lingering {
        wait(slots, turn, period)?;
        let now = Instant::now();
        lingering = false;
        for index in 0..slots.len() {
            if slots[index].is_overdue(now) {
                let step = slots[index].on_timeout(io);
                turn.advance(io, ctx, slots, index, step);
            }
            lingering |= slots[index].end(io);
        }
    }
    Ok(())
}

/// Runs a worker on the reactor its plan names (epoll or io_uring; see
/// [`drive`]).
pub(crate) fn run_reactor_worker(
    plan: WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: mpsc::Sender<WorkerMessage>,
    log: Option<WorkerLogHandle>,
) -> io::Result<()> {
    if matches!(plan.load, WorkerLoad::Open(_)) {
        precise_wakeups();
    }
    let state = Rc::new(WorkerState::for_plan(&plan));
    let ctx = connection_context(&plan, state, log)?;
    match plan.event_loop {
        EventLoop::Epoll => epoll::run(&plan, stop, &to_aggregator, &ctx),
        EventLoop::Uring => uring::run(&plan, stop, &to_aggregator, &ctx),
        EventLoop::Tokio => Err(io::Error::other("tokio runs its own worker loop")),
    }
}

/// `--batch-reads`: answers are read up to a window after they came, so
/// HTTP/1.1 slots stamp them with the kernel's receive time (rx_stamp.rs).
/// `None` for any other run, whose reads stay plain.
fn rx_stamps(plan: &WorkerPlan) -> Option<RxStamps> {
    match &plan.load {
        WorkerLoad::Open(load) if load.batch_reads => Some(RxStamps::new()),
        _ => None,
    }
}

/// The longest request of the run.
pub(crate) fn longest_request(plan: &WorkerPlan) -> usize {
    plan.mix
        .iter()
        .map(|(bytes, _)| bytes.len())
        .chain([plan.request.len()])
        .max()
        .unwrap_or(0)
}

/// Asks the kernel to end this thread's timed waits on time: by default a
/// wait may end up to 50 µs late (timer slack, so that wake-ups coalesce),
/// which alone would use the open model's send-lateness budget.
fn precise_wakeups() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only the
    // calling thread; a failure leaves the default slack, which is harmless.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// The slots a worker may ever need (open model: its share of `-c`).
pub(crate) fn slot_count(plan: &WorkerPlan) -> usize {
    match &plan.load {
        WorkerLoad::Closed { slots, .. } => *slots,
        WorkerLoad::Open(load) => load.max_connections,
    }
}

/// What decides whether a slot goes on after a request.
pub(crate) struct Turn {
    /// Slots below this index may run (the schedule's share).
    limit: usize,
    /// Slots to start on the next turn: newly allowed ones, and ones whose
    /// request failed (a refused port answers at once; starting again on the
    /// next turn keeps a dead target from starving timers and other slots).
    runnable: Vec<usize>,
    /// Slots whose connect failed, with when they may start again (their
    /// backoff, backoff.rs): they hold no budget meanwhile, so a `-n` run
    /// ends when the budget is spent, and a `-d` run at its deadline.
    backing_off: Vec<(Instant, usize)>,
    /// The open model's dispatch (`None` in the closed model).
    open: Option<OpenDispatch>,
    /// Requests per batch in the closed model (`--pipeline`; 1: none).
    pipeline: usize,
}

impl Turn {
    /// Carries slot `index` on from `step`: an answered slot sends its next
    /// request at once while the schedule and the budget allow, else parks;
    /// then the slot writes what it queued (`ReactorSlot::flush`).
    pub(crate) fn advance<I: WorkerIo, S: ReactorSlot<I>>(
        &mut self,
        io: &I,
        ctx: &ConnectionContext,
        slots: &mut [S],
        index: usize,
        mut step: Step,
    ) {
        loop {
            self.advance_unflushed(io, ctx, slots, index, step);
            step = slots[index].flush(io);
            if step == Step::Pending {
                return;
            }
        }
    }

    fn advance_unflushed<I: WorkerIo, S: ReactorSlot<I>>(
        &mut self,
        io: &I,
        ctx: &ConnectionContext,
        slots: &mut [S],
        index: usize,
        mut step: Step,
    ) {
        loop {
            match step {
                Step::Pending => return,
                Step::Failed => {
                    match slots[index].retry_at() {
                        Some(at) => self.backing_off.push((at, index)),
                        None => self.runnable.push(index),
                    }
                    return;
                }
                Step::Answered => {
                    // A scenario's think time: the user's next step waits
                    // (holding no budget) as a backed-off slot does.
                    let pause = slots[index].base().ledger.pause_until;
                    let now = Instant::now();
                    if let Some(at) = pause.filter(|&at| at > now) {
                        self.backing_off.push((at, index));
                        return;
                    }
                    slots[index].ledger().pause_until = None;
                    if let Some(open) = &mut self.open {
                        if slots[index].base().ledger.mid_iteration(ctx) {
                            // The iteration's later steps need no arrival;
                            // each counts from the end of the think time.
                            let intended = pause.unwrap_or(now);
                            if !ctx.state.claim_budget_at(intended) {
                                open.went_idle(index);
                                return;
                            }
                            step = start_intended(io, ctx, &mut slots[index], intended, now);
                            continue;
                        }
                        // Requests an HTTP/2 slot began and could not
                        // start yet (unprocessed, or beyond the server's
                        // limit) go first.
                        if let Some(resumed) = slots[index].resume(io, now) {
                            step = resumed;
                            continue;
                        }
                        // What the slot let go of: its one request over
                        // HTTP/1.1, the streams that ended over HTTP/2.
                        if !open.let_go(index, slots[index].carrying()) {
                            return;
                        }
                        if open.backlog.is_empty() || ctx.state.is_feed_exhausted() {
                            // Out of feeder rows, no iteration starts.
                            open.went_idle(index);
                            continue;
                        }
                        let now = Instant::now();
                        let Some(intended) = open.backlog.pop(now) else {
                            open.went_idle(index);
                            continue;
                        };
                        open.hold(index);
                        step = start_intended(io, ctx, &mut slots[index], intended, now);
                        continue;
                    }
                    // Requests begun before go first, even on a slot the
                    // schedule parks (they hold their budget already).
                    if let Some(resumed) = slots[index].resume(io, Instant::now()) {
                        step = resumed;
                        continue;
                    }
                    let done = slots[index].base().ledger.user_done();
                    if index >= self.limit || done || !ctx.state.claim_budget() {
                        slots[index].park(io);
                        return;
                    }
                    ctx.state.begin_request();
                    if self.pipeline == 1 {
                        step = slots[index].start(io, Instant::now());
                        continue;
                    }
                    // A batch claims up to `--pipeline` requests of the budget.
                    let mut batch = 1;
                    while batch < self.pipeline && ctx.state.claim_budget() {
                        ctx.state.begin_request();
                        batch += 1;
                    }
                    step = slots[index].start_batch(io, Instant::now(), batch);
                }
            }
        }
    }
}

/// Starts on `slot` at `now` the open model's request intended at `intended`.
fn start_intended<I: WorkerIo, S: ReactorSlot<I>>(
    io: &I,
    ctx: &ConnectionContext,
    slot: &mut S,
    intended: Instant,
    now: Instant,
) -> Step {
    ctx.state
        .begin_intended(intended, now.saturating_duration_since(intended));
    slot.start_at(io, intended, now)
}

impl Turn {
    /// Open model: hands every request due at `now` to a slot (or the
    /// backlog), claiming each from the budget.
    fn dispatch_due<I: WorkerIo, S: ReactorSlot<I>>(
        &mut self,
        io: &I,
        ctx: &ConnectionContext,
        slots: &mut [S],
        now: Instant,
    ) {
        loop {
            let Some(open) = self.open.as_mut() else {
                return;
            };
            if open.exhausted || ctx.state.is_feed_exhausted() {
                // Out of feeder rows, arrivals start no iteration.
                return;
            }
            let Some(intended) = open.pacer.next_due(now) else {
                open.exhausted = open.pacer.peek().is_none();
                return;
            };
            if !ctx.state.claim_budget_at(intended) {
                open.exhausted = true;
                return;
            }
            let index = match open.destination(slots.len()) {
                Destination::Slot(index) => index,
                Destination::Backlog => {
                    open.backlog.push(intended);
                    continue;
                }
            };
            let step = start_intended(io, ctx, &mut slots[index], intended, Instant::now());
            self.advance(io, ctx, slots, index, step);
        }
    }

    /// When the open model's next request is due and one of the `cap`
    /// slots could take it.
    fn next_due_at(&mut self, cap: usize) -> Option<Instant> {
        self.open.as_mut().and_then(|open| open.next_due_at(cap))
    }

    /// True when the worker has nothing left to do before its deadline:
    /// the budget is spent, or (closed model) every user is done
    /// (`users_done`), or (open model) the pacer has no more instants and
    /// no deadline is waited for; and nothing is in flight or queued. (A
    /// `unique` feeder drained ends the worker in its housekeeping.)
    fn is_done(&self, state: &WorkerState, has_deadline: bool, users_done: bool) -> bool {
        let (left, queued) = match &self.open {
            None => (LoadLeft::Closed { users_done }, false),
            Some(open) => {
                // Counted out (`total_iterations`), the load is over even
                // before the deadline, once no user waits out a think time.
                let left = LoadLeft::Open {
                    pacer_exhausted: open.exhausted,
                    has_deadline,
                    counted_out: open.pacer.counted_out() && self.backing_off.is_empty(),
                };
                (left, !open.backlog.is_empty())
            }
        };
        let no_more = starts_no_more(state.has_budget(), left);
        load_done(
            no_more,
            state.in_flight(),
            queued,
            state.is_feed_exhausted(),
        )
    }

    fn is_backing_off(&self, index: usize) -> bool {
        self.backing_off.iter().any(|&(_, i)| i == index)
    }

    /// Makes the slots whose backoff is over runnable.
    fn wake_backed_off(&mut self, now: Instant) {
        let runnable = &mut self.runnable;
        self.backing_off.retain(|&(at, index)| {
            let due = at <= now;
            if due {
                runnable.push(index);
            }
            !due
        });
    }

    /// When the first backed-off slot may start again.
    fn next_retry(&self) -> Option<Instant> {
        self.backing_off.iter().map(|&(at, _)| at).min()
    }
}
