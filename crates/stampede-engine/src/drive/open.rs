//! The open model on tokio (HTTP/1.1 here, HTTP/2 and HTTP/3 through
//! [`run_pacer_with`]): requests are due at intended instants computed from
//! the rate (pacer.rs), whatever the server does. A due request goes where
//! the one dispatch rule says (worker/open_slots.rs): the most recently idle
//! slot, or a new one while under the cap; when all are busy it waits in a
//! backlog and its waiting time counts in its latency, because latency is
//! measured from the intended instant (coordinated omission is not hidden).
//! The pacer sleeps on a precise timer (see precise_timer.rs) until the
//! wake the pacing window gives the next instant (`Pacer::wake_for`) and
//! dispatches every request whose instant has passed; while every slot is
//! busy it sleeps until one is free instead (as the reactors do).
//! When measurement begins, the warm-up's instants not yet sent are dropped:
//! the window counts the requests intended in it (see WorkerState), and its
//! requests must not wait behind a backlog that nobody measures.

use crate::drive::connection::Slot;
use crate::drive::precise_timer::PreciseTimer;
use crate::plan::worker_plan::OpenLoad;
use crate::worker::context::ConnectionContext;
use crate::worker::load_end::{starts_no_more, LoadLeft};
use crate::worker::open_slots::{Destination, OpenSlots};
use crate::worker::pacer::{is_stale, Backlog, Pacer};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;
use tokio::sync::Notify;

/// A slot's mailbox: where its next job is left while it is parked.
#[derive(Debug, Default)]
struct Inbox {
    job: Cell<Option<Instant>>,
    wake: Notify,
}

/// Work waiting for a free slot, and free slots waiting for work; where a
/// due request goes is the one rule of worker/open_slots.rs.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    backlog: RefCell<Backlog>,
    slots: RefCell<OpenSlots>,
    /// Slot `i`'s inbox, made when the rule first starts it.
    inboxes: RefCell<Vec<Rc<Inbox>>>,
    /// Told when a slot goes idle: the pacer waits for it instead of its
    /// next instant while every slot is busy.
    freed: Notify,
}

impl Dispatcher {
    fn new(measure_start: Instant) -> Dispatcher {
        Dispatcher {
            backlog: RefCell::new(Backlog::new(measure_start)),
            slots: RefCell::default(),
            inboxes: RefCell::default(),
            freed: Notify::new(),
        }
    }

    /// The oldest queued instant (the warm-up's dropped once measurement
    /// has begun, see [`Backlog::pop`]).
    fn next_queued(&self) -> Option<Instant> {
        self.backlog.borrow_mut().pop(Instant::now())
    }

    /// A job a slot took but cannot carry (an HTTP/2 stream beyond the
    /// server's limit, h2_open.rs): to the most recently idle slot, else
    /// first in the backlog, its intended instant kept.
    pub(crate) fn hand_back(&self, intended: Instant) {
        let idle = self.slots.borrow_mut().take_idle();
        match idle.and_then(|slot| self.inboxes.borrow().get(slot).cloned()) {
            Some(inbox) => {
                inbox.job.set(Some(intended));
                inbox.wake.notify_one();
            }
            None => self.backlog.borrow_mut().push_front(intended),
        }
    }

    /// Slot `slot`'s next job once its last is done: the oldest backlog
    /// entry, or else it parks as idle until the rule hands it one.
    pub(crate) async fn next_job(&self, slot: usize) -> Instant {
        if let Some(intended) = self.next_queued() {
            return intended;
        }
        let Some(inbox) = self.inboxes.borrow().get(slot).cloned() else {
            // Only the rule starts slots, each with its inbox.
            return std::future::pending().await;
        };
        self.slots.borrow_mut().went_idle(slot);
        self.freed.notify_one();
        loop {
            inbox.wake.notified().await;
            if let Some(intended) = inbox.job.take() {
                return intended;
            }
        }
    }
}

/// Produces this worker's intended instants until the budget is spent,
/// the count is (`total_iterations`), or there are no more before `end`
/// (then it waits: the worker ends the run at the deadline), and hands
/// them to connections.
pub(crate) async fn run_pacer(
    ctx: Rc<ConnectionContext>,
    load: OpenLoad,
    measure_start: Instant,
    end: Option<Instant>,
) {
    run_pacer_with(
        ctx,
        load,
        measure_start,
        end,
        |ctx, dispatcher, slot, intended| {
            let task = run_open_slot(ctx.clone(), dispatcher.clone(), slot, intended);
            tokio::task::spawn_local(task);
            true
        },
    )
    .await;
}

/// [`run_pacer`] with the slots `spawn_slot` starts: it starts slot number
/// `slot` (up to `load.max_connections`) on its first job (the HTTP/1.1
/// slot in run_pacer, HTTP/2's and HTTP/3's streams in h2_open.rs and
/// h3_open.rs), or returns false when that slot can never carry a request
/// (an HTTP/2 stream beyond the server's limit): the job then goes where
/// the rule says next, and the slot stays busy for good.
pub(crate) async fn run_pacer_with<S>(
    ctx: Rc<ConnectionContext>,
    load: OpenLoad,
    measure_start: Instant,
    end: Option<Instant>,
    spawn_slot: S,
) where
    S: Fn(&Rc<ConnectionContext>, &Rc<Dispatcher>, usize, Instant) -> bool,
{
    let dispatcher = Rc::new(Dispatcher::new(measure_start));
    // The schedule starts at the start of measurement (or now, during warm-up),
    // not when this task happened to be first polled.
    let mut instants = Pacer::new(&load, Instant::now(), measure_start, end);
    let mut timer = PreciseTimer::new();
    let mut dispatched_without_pause = 0u32;
    loop {
        let Some(next) = instants.next_instant() else {
            let left = LoadLeft::Open {
                pacer_exhausted: true,
                has_deadline: end.is_some(),
                // A user's think time is a task in flight here: the worker
                // waits for it (`WorkerState::drained`).
                counted_out: instants.counted_out(),
            };
            if !starts_no_more(ctx.state.has_budget(), left) {
                // No instant before the end: the worker ends the run at
                // its deadline.
                std::future::pending::<()>().await;
            }
            return;
        };
        if is_stale(next, measure_start, Instant::now()) {
            // Behind at the start of measurement: the warm-up's remaining
            // instants are dropped, as its queued ones are (next_queued).
            continue;
        }
        if !ctx.state.has_budget() {
            // `-n` is spent: the next instant is not waited for, only to
            // find that nothing may leave at it (the run would last one
            // arrival gap longer than the reactors' runs).
            ctx.state.claim_budget_at(next);
            // The last job handed to a slot is begun (counted in flight)
            // when that slot runs: let it run before the worker waits for
            // what is in flight, or the wait ends before that job starts.
            tokio::task::yield_now().await;
            return;
        }
        if next > Instant::now() && dispatcher.slots.borrow().all_busy(load.max_connections) {
            // Nothing can leave before a slot is free: wait for that, not for
            // the instant (one timer wake per arrival just to queue it costs
            // a third of the CPU at a saturated server). What fell due
            // meanwhile is dispatched next, from its intended instant.
            dispatcher.freed.notified().await;
            if is_stale(next, measure_start, Instant::now()) {
                continue;
            }
        }
        if next > Instant::now() {
            // The window's later instants are then due, and leave at once.
            timer.sleep_until(instants.wake_for(next)).await;
            dispatched_without_pause = 0;
        } else {
            dispatched_without_pause += 1;
            if dispatched_without_pause.is_multiple_of(1024) {
                // Catching up after a stall: let the connections run too.
                tokio::task::yield_now().await;
            }
        }
        if ctx.state.is_feed_exhausted() {
            // Out of feeder rows, arrivals start no iteration: the worker
            // ends once those under way are over (worker.rs).
            std::future::pending::<()>().await;
        }
        if !ctx.state.claim_budget_at(next) {
            return;
        }
        dispatch(&ctx, &dispatcher, &load, next, &spawn_slot);
    }
}

fn dispatch<S>(
    ctx: &Rc<ConnectionContext>,
    dispatcher: &Rc<Dispatcher>,
    load: &OpenLoad,
    intended: Instant,
    spawn_slot: &S,
) where
    S: Fn(&Rc<ConnectionContext>, &Rc<Dispatcher>, usize, Instant) -> bool,
{
    loop {
        let destination = dispatcher
            .slots
            .borrow_mut()
            .destination(load.max_connections);
        match destination {
            Destination::Idle(slot) => {
                if let Some(inbox) = dispatcher.inboxes.borrow().get(slot) {
                    inbox.job.set(Some(intended));
                    inbox.wake.notify_one();
                }
            }
            Destination::New(slot) => {
                dispatcher.inboxes.borrow_mut().push(Rc::default());
                if !spawn_slot(ctx, dispatcher, slot, intended) {
                    continue;
                }
            }
            Destination::Backlog => dispatcher.backlog.borrow_mut().push(intended),
        }
        return;
    }
}

/// One connection of the open model: runs its job, then takes the oldest
/// backlog entry or parks itself as idle (most recently idle first, so the
/// fewest connections stay warm).
async fn run_open_slot(
    ctx: Rc<ConnectionContext>,
    dispatcher: Rc<Dispatcher>,
    index: usize,
    first: Instant,
) {
    let mut slot = Slot::new(ctx.head_request, index as u32);
    let mut job = first;
    loop {
        let lag = Instant::now().saturating_duration_since(job);
        ctx.state.begin_intended(job, lag);
        slot.run_request(&ctx, job).await;
        // A scenario iteration's later steps follow without new arrivals,
        // each counting from the end of the previous one (and its think time).
        while slot.mid_iteration(&ctx) {
            let intended = Instant::now();
            if !ctx.state.claim_budget_at(intended) {
                break;
            }
            ctx.state
                .begin_intended(intended, std::time::Duration::ZERO);
            slot.run_request(&ctx, intended).await;
        }
        job = dispatcher.next_job(index).await;
    }
}
