//! A scenario step's rendezvous ([`Rendezvous`], the step key `rendezvous`,
//! JMeter's Synchronizing Timer): the group's users wait before the step
//! until `size` of them are there, then all are released together to send.
//! As JMeter's `SyncTimer` (a `CyclicBarrier`), the point is reset for the
//! next batch at each release, and a timeout counted from a batch's first
//! arrival releases whoever is waiting.
//!
//! A run never hangs on it: a user gone for good (its iterations walked,
//! stopped by `on_error`, its task ended with its worker) leaves the point,
//! and once users have left, a batch the rest can no longer fill goes with
//! whoever is waiting; [`Rendezvous::close`] releases everyone. A waiting
//! user whose worker ends is simply dropped (its wait is a future).
//!
//! Each batch's send times are booked ([`Ticket`]): the spread from its
//! first to its last send is what the result reports ([`Rendezvous::report`]).
//! Only steps with a rendezvous come here: the others pay nothing.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// One step's rendezvous, shared by every worker of its group.
#[derive(Debug)]
pub(crate) struct Rendezvous {
    /// Users released together.
    size: usize,
    /// How long a batch's first arrival waits for the rest.
    timeout: Option<Duration>,
    /// The group's users at the start: every one may still arrive.
    users: usize,
    gathering: Mutex<Gathering>,
    released: Notify,
}

#[derive(Debug, Default)]
struct Gathering {
    /// Users waiting for the current batch.
    waiting: usize,
    /// Batches released so far: the number of the batch being gathered.
    batch: u64,
    /// When the current batch's first user arrived.
    first_arrival: Option<Instant>,
    /// Users gone for good.
    left: usize,
    /// The run is over: nobody waits any more.
    closed: bool,
    /// Released batches whose sends are not all booked yet.
    open: Vec<BatchSends>,
    /// Each batch whose sends are all booked: its spread, whether the
    /// timeout released it, and how many users sent.
    sent: Vec<(Duration, bool, usize)>,
}

/// The sends of one released batch.
#[derive(Debug)]
struct BatchSends {
    batch: u64,
    /// Users released in it (each books its send once).
    expected: usize,
    /// Released by the timeout, with fewer than `size`.
    by_timeout: bool,
    booked: usize,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl BatchSends {
    fn spread(&self) -> Option<Duration> {
        Some(self.last? - self.first?)
    }
}

/// A released user's place in its batch: it books its send with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    /// `None`: let through after the close, in no batch.
    batch: Option<u64>,
}

/// A rendezvous's figures at the end of the run: the batches that sent
/// (one released as the run ended, whose users were stopped before
/// sending, sent nothing and is not counted).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RendezvousFigures {
    pub size: usize,
    pub batches: u64,
    /// Of them, those the timeout released with fewer than `size`.
    pub timed_out: u64,
    /// Each batch's spread from first to last send, in release order.
    pub spreads: Vec<Duration>,
    /// Each batch's users that sent, in the same order: fewer than `size`
    /// when the timeout, users leaving or the end of the run let it go.
    pub sizes: Vec<usize>,
}

impl Rendezvous {
    /// A point releasing `size` users at a time (at least 1) of a group of
    /// `users`, with an optional timeout from each batch's first arrival.
    pub(crate) fn new(size: usize, timeout: Option<Duration>, users: usize) -> Rendezvous {
        Rendezvous {
            size: size.max(1),
            timeout,
            users,
            gathering: Mutex::new(Gathering::default()),
            released: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Gathering> {
        // A panic elsewhere must not stop the other users: the books are
        // plain counters, still sound.
        self.gathering.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until this user's batch is released. Cancel-safe: a wait
    /// dropped before its release takes the user out of the batch.
    pub(crate) async fn wait(&self) -> Ticket {
        let (batch, deadline) = {
            let mut g = self.lock();
            if g.closed {
                return Ticket { batch: None };
            }
            g.waiting += 1;
            let first = *g.first_arrival.get_or_insert_with(Instant::now);
            let batch = g.batch;
            if self.fills(&g) {
                self.release(&mut g, false);
                return Ticket { batch: Some(batch) };
            }
            (batch, self.timeout.map(|t| first + t))
        };
        let mut waiting = Waiting {
            point: self,
            batch,
            released: false,
        };
        loop {
            let notified = self.released.notified();
            tokio::pin!(notified);
            // Registered before looking, so a release in between is not missed.
            notified.as_mut().enable();
            {
                let g = self.lock();
                if g.batch != batch || g.closed {
                    waiting.released = true;
                    return Ticket {
                        batch: (g.batch != batch).then_some(batch),
                    };
                }
            }
            match deadline {
                Some(deadline) => {
                    let at = tokio::time::Instant::from_std(deadline);
                    if tokio::time::timeout_at(at, notified).await.is_err() {
                        let mut g = self.lock();
                        if g.batch == batch && !g.closed {
                            // As SyncTimer's TimeoutException breaking the
                            // barrier: whoever waits goes.
                            self.release(&mut g, true);
                        }
                    }
                }
                None => notified.await,
            }
        }
    }

    /// True when the waiting users make a batch: `size` of them, or (once
    /// users have left for good) all that are left.
    fn fills(&self, g: &Gathering) -> bool {
        g.waiting > 0
            && (g.waiting >= self.size
                || (g.left > 0 && g.waiting >= self.users.saturating_sub(g.left)))
    }

    fn release(&self, g: &mut Gathering, by_timeout: bool) {
        g.open.push(BatchSends {
            batch: g.batch,
            expected: g.waiting,
            by_timeout: by_timeout && g.waiting < self.size,
            booked: 0,
            first: None,
            last: None,
        });
        g.batch += 1;
        g.waiting = 0;
        g.first_arrival = None;
        self.released.notify_waiters();
    }

    /// A user of the group is gone for good: a batch the others can no
    /// longer fill goes now.
    pub(crate) fn leave(&self) {
        let mut g = self.lock();
        g.left += 1;
        if !g.closed && self.fills(&g) {
            self.release(&mut g, false);
        }
    }

    /// The run is over: whoever waits goes, and nobody waits again.
    pub(crate) fn close(&self) {
        let mut g = self.lock();
        g.closed = true;
        self.released.notify_waiters();
    }

    /// A released user sent its request at `at`.
    pub(crate) fn sent(&self, ticket: Ticket, at: Instant) {
        let Some(batch) = ticket.batch else {
            return;
        };
        let mut g = self.lock();
        let Some(i) = g.open.iter().position(|b| b.batch == batch) else {
            return;
        };
        let sends = &mut g.open[i];
        sends.booked += 1;
        sends.first = Some(sends.first.map_or(at, |t| t.min(at)));
        sends.last = Some(sends.last.map_or(at, |t| t.max(at)));
        if sends.booked >= sends.expected {
            let done = g.open.swap_remove(i);
            if let Some(spread) = done.spread() {
                g.sent.push((spread, done.by_timeout, done.booked));
            }
        }
    }

    /// The figures so far; a batch some of whose users never sent (the run
    /// ended first) counts with the sends it has.
    pub(crate) fn report(&self) -> RendezvousFigures {
        let g = self.lock();
        let mut partial: Vec<&BatchSends> = g.open.iter().collect();
        partial.sort_by_key(|b| b.batch);
        let partial = partial
            .iter()
            .filter_map(|b| Some((b.spread()?, b.by_timeout, b.booked)));
        let sent: Vec<(Duration, bool, usize)> = g.sent.iter().copied().chain(partial).collect();
        RendezvousFigures {
            size: self.size,
            batches: sent.len() as u64,
            timed_out: sent.iter().filter(|(_, by_timeout, _)| *by_timeout).count() as u64,
            spreads: sent.iter().map(|(spread, _, _)| *spread).collect(),
            sizes: sent.iter().map(|(_, _, users)| *users).collect(),
        }
    }
}

/// A user waiting: dropped before its release, it leaves the batch.
struct Waiting<'a> {
    point: &'a Rendezvous,
    batch: u64,
    released: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        let mut g = self.point.lock();
        if g.batch == self.batch && !g.closed {
            g.waiting = g.waiting.saturating_sub(1);
            if g.waiting == 0 {
                g.first_arrival = None;
            }
        }
    }
}

/// A user's membership of its group's rendezvous points: it leaves them
/// once, when it is done or dropped.
#[derive(Debug)]
pub(crate) struct Party {
    points: Option<Arc<[Arc<Rendezvous>]>>,
}

impl Party {
    pub(crate) fn new(points: Arc<[Arc<Rendezvous>]>) -> Party {
        Party {
            points: Some(points),
        }
    }

    /// The user is gone for good.
    pub(crate) fn leave(&mut self) {
        for point in self.points.take().iter().flat_map(|p| p.iter()) {
            point.leave();
        }
    }
}

impl Drop for Party {
    fn drop(&mut self) {
        self.leave();
    }
}

/// The run's rendezvous points: by the plan's target index (the steps
/// that have one) and by group (what each of its users is a party to).
#[derive(Debug)]
pub(crate) struct RendezvousPoints {
    by_step: Vec<Option<Arc<Rendezvous>>>,
    by_group: Vec<Option<Arc<[Arc<Rendezvous>]>>>,
}

impl RendezvousPoints {
    /// The points of `spec`'s steps, `None` when no step has one;
    /// `users(group)`: the users the group starts with (its connections).
    pub(crate) fn of(
        spec: &super::WorkloadSpec,
        users: impl Fn(usize) -> usize,
    ) -> Option<RendezvousPoints> {
        let mut by_step = vec![None; spec.steps.len()];
        let mut by_group = Vec::with_capacity(spec.groups.len());
        for (g, group) in spec.groups.iter().enumerate() {
            let users = users(g);
            let mut points = Vec::new();
            for target in group.steps.clone() {
                let Some(want) = spec.steps.get(target).and_then(|s| s.options.rendezvous) else {
                    continue;
                };
                let size = want.users.map_or(users, |n| n as usize);
                let point = Arc::new(Rendezvous::new(size, want.timeout, users));
                by_step[target] = Some(point.clone());
                points.push(point);
            }
            by_group.push((!points.is_empty()).then(|| Arc::from(points)));
        }
        by_group
            .iter()
            .any(Option::is_some)
            .then_some(RendezvousPoints { by_step, by_group })
    }

    /// The point before request `target`, if it has one.
    #[inline]
    pub(crate) fn step(&self, target: usize) -> Option<&Rendezvous> {
        self.by_step.get(target)?.as_deref()
    }

    /// A new user of `group`'s membership, when the group has points.
    pub(crate) fn party(&self, group: usize) -> Option<Party> {
        let points = self.by_group.get(group)?.as_ref()?;
        Some(Party::new(points.clone()))
    }

    /// The run is over: every point lets its users go.
    pub(crate) fn close(&self) {
        for point in self.by_step.iter().flatten() {
            point.close();
        }
    }

    /// Each point's figures, by its step's target index.
    pub(crate) fn figures(&self) -> Vec<(usize, RendezvousFigures)> {
        (self.by_step.iter().enumerate())
            .filter_map(|(target, point)| Some((target, point.as_ref()?.report())))
            .collect()
    }
}

#[cfg(test)]
#[path = "rendezvous_tests.rs"]
mod tests;
