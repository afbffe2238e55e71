//! A worker's share of the workload ([`WorkerWorkload`]: its feeder
//! cursors, random generator and virtual-user numbers) and one virtual
//! user's state ([`UserSession`]: its extracted values, iteration, step,
//! feeder rows and the buffer its requests are rendered into).

use super::spec::WorkloadSpec;
use crate::http1::Capture;
use stampede_workload::{Exhausted, FeedCursor, RenderContext, VarStore};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

/// What the connections of one worker share of the workload.
#[derive(Debug)]
pub(crate) struct WorkerWorkload {
    pub spec: Arc<WorkloadSpec>,
    /// One cursor per feeder (each worker walks its own part of a file).
    cursors: RefCell<Vec<FeedCursor>>,
    pub rng: RefCell<fastrand::Rng>,
    worker: usize,
    workers: usize,
    /// Virtual users this worker has started.
    users: Cell<u64>,
}

impl WorkerWorkload {
    pub fn new(spec: Arc<WorkloadSpec>, worker: usize, workers: usize, seed: u64) -> Self {
        let cursors = spec
            .feeders
            .iter()
            .enumerate()
            .map(|(i, feeder)| {
                let stream = seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                feeder.cursor(
                    worker,
                    workers,
                    spec.agent as usize,
                    spec.agents.max(1) as usize,
                    stream,
                )
            })
            .collect();
        WorkerWorkload {
            cursors: RefCell::new(cursors),
            rng: RefCell::new(fastrand::Rng::with_seed(seed)),
            spec,
            worker,
            workers: workers.max(1),
            users: Cell::new(0),
        }
    }

    /// A new virtual user: numbered `k × workers + worker`, so that
    /// `{{conn}}` is unique across the agent's workers.
    pub fn new_user(&self) -> UserSession {
        let local = self.users.get();
        self.users.set(local + 1);
        UserSession {
            conn: local * self.workers as u64 + self.worker as u64,
            iter: 0,
            step: 0,
            store: VarStore::new(self.spec.extract_slots),
            rows: vec![0; self.spec.feeders.len()],
            buffer: Vec::new(),
            rendered: false,
        }
    }

    /// What the parser keeps of each response for this workload's checks,
    /// or `None` when nothing reads responses.
    pub fn capture(&self) -> Option<Capture> {
        let (head, body) = (self.spec.keeps_headers(), self.spec.keeps_body());
        (head || body).then(|| Capture::new(head, body, self.spec.capture_max))
    }

    fn take_rows(&self, rows: &mut [usize]) -> Result<(), Exhausted> {
        let mut cursors = self.cursors.borrow_mut();
        for (row, cursor) in rows.iter_mut().zip(cursors.iter_mut()) {
            *row = cursor.next_index()?;
        }
        Ok(())
    }
}

/// One virtual user (a connection slot) of a workload.
#[derive(Debug)]
pub(crate) struct UserSession {
    conn: u64,
    iter: u64,
    /// Scenario: the step this user sends next.
    step: usize,
    pub store: VarStore,
    /// The row of each feeder for the current iteration.
    rows: Vec<usize>,
    /// The request rendered for the current send.
    buffer: Vec<u8>,
    /// True when `buffer` holds the current request (its step has a template).
    rendered: bool,
}

impl UserSession {
    /// The plan's target index this user sends next: its step in a
    /// scenario, else the mix's next (`mix_next`).
    pub fn next_target(&self, work: &WorkerWorkload, mix_next: impl FnOnce() -> usize) -> usize {
        if work.spec.sequential {
            self.step
        } else {
            mix_next()
        }
    }

    /// Prepares the request of `target`: an iteration's first request takes
    /// its feeder rows, and a templated request is rendered into the user's
    /// buffer. Err when a `unique` feeder has no rows left (nothing is sent).
    pub fn prepare(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        seq: impl FnOnce() -> u64,
    ) -> Result<(), Exhausted> {
        let spec = &work.spec;
        let starts_iteration = !spec.sequential || self.step == 0;
        if starts_iteration && !spec.feeders.is_empty() {
            work.take_rows(&mut self.rows)?;
        }
        self.rendered = false;
        let Some(template) = spec.steps.get(target).and_then(|s| s.template.as_ref()) else {
            return Ok(());
        };
        let mut row_refs: [&[Box<[u8]>]; 8] = [&[]; 8];
        let rows: Vec<&[Box<[u8]>]>;
        let rows: &[&[Box<[u8]>]] = if spec.feeders.len() <= row_refs.len() {
            for (i, (feeder, row)) in spec.feeders.iter().zip(&self.rows).enumerate() {
                row_refs[i] = feeder.data().row(*row);
            }
            &row_refs[..spec.feeders.len()]
        } else {
            rows = spec
                .feeders
                .iter()
                .zip(&self.rows)
                .map(|(feeder, row)| feeder.data().row(*row))
                .collect();
            &rows
        };
        let mut rng = work.rng.borrow_mut();
        let mut context = RenderContext {
            seq: seq(),
            conn: self.conn,
            iter: self.iter,
            worker: work.worker as u32,
            agent: spec.agent,
            rows,
            vars: &self.store,
            rng: &mut rng,
        };
        self.buffer.clear();
        template.render(&mut context, &mut self.buffer);
        self.rendered = true;
        Ok(())
    }

    /// True before an iteration's first step (always, without steps).
    pub fn at_first_step(&self) -> bool {
        self.step == 0
    }

    /// The rendered request, when the current one was rendered.
    pub fn rendered(&self) -> Option<&[u8]> {
        self.rendered.then_some(&self.buffer[..])
    }

    /// The current request is over: a scenario user moves to its next step
    /// (after its last, the next iteration); `restart`: the iteration
    /// failed (an extractor found nothing) and starts again from step 0.
    /// Returns the pause before the next step (`think`), if any.
    pub fn advance(&mut self, work: &WorkerWorkload, restart: bool) -> Option<Duration> {
        let spec = &work.spec;
        if !spec.sequential {
            self.iter += 1;
            return None;
        }
        self.step += 1;
        if restart || self.step >= spec.steps.len() {
            self.step = 0;
            self.iter += 1;
        }
        spec.think
            .map(|think| think.sample(&mut work.rng.borrow_mut()))
    }
}
