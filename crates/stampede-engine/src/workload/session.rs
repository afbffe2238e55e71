//! A worker's share of the workload ([`WorkerWorkload`]: its feeder
//! cursors, random generator and virtual-user numbers) and one virtual
//! user's state ([`UserSession`]: its extracted values, iteration, step,
//! feeder rows and the buffer its requests are rendered into).

use super::cookie_jar::CookieJar;
use super::phases::RunPhases;
use super::rendezvous::{Party, RendezvousPoints};
use super::spec::{GroupWork, WorkloadSpec};
use crate::http1::Capture;
use stampede_workload::{
    Exhausted, FeedCursor, FeedMode, OnError, RenderContext, ScriptError, ScriptThread, VarStore,
};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

/// What the connections of one worker share of the workload.
#[derive(Debug)]
pub(crate) struct WorkerWorkload {
    pub spec: Arc<WorkloadSpec>,
    /// The group this worker's users belong to (index into `spec.groups`).
    group: usize,
    /// One cursor per feeder (each worker walks its own part of a file).
    cursors: RefCell<Vec<FeedCursor>>,
    pub rng: RefCell<fastrand::Rng>,
    worker: usize,
    /// Virtual users of this worker that are done (their iterations
    /// walked, or stopped by `on_error = "stop_user"`).
    users_done: Cell<usize>,
    /// A step failed under `on_error = "stop_run"`: this worker stops
    /// sending now, the others at their next housekeeping turn.
    stop_run: Cell<bool>,
    /// Users of this worker inside an iteration that took feeder rows (the
    /// rows taken, its last step not over yet): when a `unique` feeder has
    /// run out, the worker stops once none is left ([`Self::feed_drained`]).
    open_iterations: Cell<usize>,
    /// A `listed` feeder had no row left for this worker.
    listed_out: Cell<bool>,
    /// The run's group clock (`None` outside scenarios).
    phases: Option<Arc<RunPhases>>,
    /// This worker's script state (wrk's per-thread Lua), with the request
    /// it sends when it builds none (computed once, as wrk does).
    pub script: Option<WorkerScript>,
    /// The run's rendezvous points (a step's `rendezvous`); its users are
    /// parties to their group's.
    rendezvous: Option<Arc<RendezvousPoints>>,
}

/// A worker's script: its state and its fixed request.
pub(crate) struct WorkerScript {
    pub thread: RefCell<Box<dyn ScriptThread>>,
    fixed: Option<Vec<u8>>,
}

impl std::fmt::Debug for WorkerScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerScript").finish_non_exhaustive()
    }
}

/// Why the next request cannot be prepared: the worker stops sending.
#[derive(Debug)]
pub(crate) enum NotPrepared {
    /// A `unique` feeder ran out of rows.
    Exhausted,
    /// The script failed (its message names the script and line).
    Script(ScriptError),
}

impl From<Exhausted> for NotPrepared {
    fn from(_: Exhausted) -> Self {
        NotPrepared::Exhausted
    }
}

impl WorkerWorkload {
    /// The worker's share of `spec`; its script state is made here, on the
    /// worker's own thread.
    /// `worker` of `workers` counts within the group's workers.
    pub(crate) fn new(
        spec: Arc<WorkloadSpec>,
        group: usize,
        worker: usize,
        workers: usize,
        seed: u64,
        phases: Option<Arc<RunPhases>>,
    ) -> Result<Self, ScriptError> {
        let script = match &spec.script {
            Some(script) => {
                let mut thread = script.thread(worker)?;
                let fixed = if thread.builds_requests() {
                    None
                } else {
                    Some(thread.fixed_request()?)
                };
                Some(WorkerScript {
                    thread: RefCell::new(thread),
                    fixed,
                })
            }
            None => None,
        };
        let cursors = spec.groups[group]
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
        Ok(WorkerWorkload {
            group,
            cursors: RefCell::new(cursors),
            rng: RefCell::new(fastrand::Rng::with_seed(seed)),
            spec,
            worker,
            users_done: Cell::new(0),
            stop_run: Cell::new(false),
            open_iterations: Cell::new(0),
            listed_out: Cell::new(false),
            phases,
            script,
            rendezvous: None,
        })
    }

    /// The run's rendezvous points, which this worker's users join.
    pub(crate) fn with_rendezvous(mut self, points: Option<Arc<RendezvousPoints>>) -> Self {
        self.rendezvous = points;
        self
    }

    /// The group this worker's users walk.
    pub(crate) fn group(&self) -> &GroupWork {
        &self.spec.groups[self.group]
    }

    /// The target `user` sends next (its step; a new user's first), known
    /// before its request is prepared: where it meets a rendezvous.
    pub(crate) fn upcoming_target(&self, user: Option<&UserSession>) -> usize {
        let step = user.map_or_else(|| self.first_step(0), |u| u.step);
        self.group().steps.start + step
    }

    /// True when the group's users walk steps in order (a scenario).
    pub(crate) fn sequential(&self) -> bool {
        self.group().sequential
    }

    /// True when the script reads every response (wrk's `response()`).
    pub(crate) fn script_reads_responses(&self) -> bool {
        self.script
            .as_ref()
            .is_some_and(|s| s.thread.borrow().wants_responses())
    }

    /// True once the script asked its thread to stop (`thread:stop()`).
    pub(crate) fn script_stopped(&self) -> bool {
        self.script
            .as_ref()
            .is_some_and(|s| s.thread.borrow().stop_requested())
    }

    /// A new virtual user numbered `conn` (its slot's number, unique
    /// across the group's workers: `{{conn}}`).
    pub(crate) fn new_user(&self, conn: u64) -> UserSession {
        UserSession {
            conn,
            iter: 0,
            step: self.first_step(0),
            starting: true,
            done: false,
            store: VarStore::new(self.group().extract_slots),
            rows: vec![0; self.group().feeders.len()],
            buffer: Vec::new(),
            rendered: false,
            in_iteration: false,
            requests: 1,
            jar: CookieJar::default(),
            party: (self.rendezvous.as_ref()).and_then(|points| points.party(self.group)),
        }
    }

    /// What the parser keeps of each response for this workload's checks,
    /// or `None` when nothing reads responses.
    pub(crate) fn capture(&self) -> Option<Capture> {
        let script = self.script_reads_responses();
        let (head, body) = (
            self.spec.keeps_headers() || script,
            self.spec.keeps_body() || script,
        );
        (head || body).then(|| Capture::new(head, body, self.spec.capture_max))
    }

    /// True when the group's users are all done: each of the worker's
    /// `slots` users has walked its iterations or stopped (a worker with no
    /// slot is done at once when its group counts iterations).
    pub(crate) fn all_users_done(&self, slots: usize) -> bool {
        let group = self.group();
        group.sequential
            && self.users_done.get() >= slots
            && (slots > 0 || group.limits.iterations.is_some())
    }

    /// True when a `unique` feeder of the group has handed out all its rows
    /// (no user can begin another iteration) and no user of this worker is
    /// inside one: the worker is done, as JMeter's "stop thread on EOF"
    /// stops each thread when it needs a row, once the iteration it is in
    /// is over. Looked at by the worker's housekeeping, not per request.
    pub(crate) fn feed_drained(&self) -> bool {
        if !self.watches_feed() {
            return false;
        }
        let spec = &self.spec;
        let (agent, agents) = (spec.agent as usize, spec.agents as usize);
        self.open_iterations.get() == 0
            && (self.listed_out.get()
                || (self.group().feeders.iter()).any(|feeder| feeder.is_exhausted(agent, agents)))
    }

    /// True when the group has a `unique` or `listed` feeder, which may run out.
    pub(crate) fn watches_feed(&self) -> bool {
        (self.group().feeders.iter())
            .any(|f| matches!(f.mode(), FeedMode::Unique | FeedMode::Listed))
    }

    /// True once a step of this worker failed under `on_error = "stop_run"`.
    pub(crate) fn stopped_run(&self) -> bool {
        self.stop_run.get()
    }

    /// The first step of iteration `iter` (`once` steps only in the first),
    /// or the step count when the iteration has none.
    fn first_step(&self, iter: u64) -> usize {
        self.next_step_from(0, iter)
    }

    /// The first step at or after `from` that iteration `iter` sends.
    fn next_step_from(&self, from: usize, iter: u64) -> usize {
        let group = self.group();
        let steps = &self.spec.steps[group.steps.clone()];
        (from..steps.len())
            .find(|&i| iter == 0 || !steps[i].options.once)
            .unwrap_or(steps.len())
    }

    fn take_rows(&self, rows: &mut [usize]) -> Result<(), Exhausted> {
        let mut cursors = self.cursors.borrow_mut();
        for (row, cursor) in rows.iter_mut().zip(cursors.iter_mut()) {
            *row = cursor.next_index().inspect_err(|_| {
                // A listed feeder's rows are this worker's own: once they
                // are out, no user of it can begin another iteration.
                if cursor.feeder().mode() == FeedMode::Listed {
                    self.listed_out.set(true);
                }
            })?;
        }
        Ok(())
    }
}

/// What a step renders per send: an HTTP request, or a WebSocket message.
enum Rendered<'a> {
    Request(&'a stampede_workload::RequestTemplate),
    Message(&'a stampede_workload::Template),
}

/// One virtual user (a connection slot) of a workload.
#[derive(Debug)]
pub(crate) struct UserSession {
    conn: u64,
    iter: u64,
    /// Scenario: the step this user sends next.
    step: usize,
    /// The next step begins an iteration (its feeder rows are taken then).
    starting: bool,
    /// The user is done: its slot sends nothing more.
    done: bool,
    pub store: VarStore,
    /// The row of each feeder for the current iteration.
    rows: Vec<usize>,
    /// The request rendered for the current send.
    buffer: Vec<u8>,
    /// HTTP requests in `buffer` (a script's `request()` may pipeline several).
    pub requests: usize,
    /// `--cookie-jar`: the cookies this user was sent.
    pub jar: CookieJar,
    /// True when `buffer` holds the current request (its step has a template).
    rendered: bool,
    /// The user took feeder rows for an iteration not over yet (counted in
    /// the worker's `open_iterations`).
    in_iteration: bool,
    /// Its group's rendezvous points, which it leaves when done or dropped.
    party: Option<Party>,
}

impl UserSession {
    /// The plan's target index this user sends next: its step in a
    /// scenario, else the mix's next (`mix_next`).
    pub(crate) fn next_target(
        &self,
        work: &WorkerWorkload,
        mix_next: impl FnOnce() -> usize,
    ) -> usize {
        if work.sequential() {
            work.group().steps.start + self.step
        } else {
            mix_next()
        }
    }

    /// Prepares the request of `target`: an iteration's first request takes
    /// its feeder rows, and a templated request is rendered into the user's
    /// buffer (or the script builds it); `fixed` is the target's pre-encoded
    /// request. Err when a `unique` feeder has no rows left (the user is
    /// done: it stops where it needed a row, JMeter's "stop thread on
    /// EOF") or the script failed (nothing is sent).
    pub(crate) fn prepare(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        fixed: &[u8],
        seq: impl FnOnce() -> u64,
    ) -> Result<(), NotPrepared> {
        self.prepare_request(work, target, fixed, seq)?;
        // A WebSocket message carries no cookie: its upgrade does (ws_conn.rs).
        let message = (work.spec.steps.get(target)).is_some_and(|s| s.message.is_some());
        if work.spec.cookie_jar && !message {
            if !self.rendered {
                self.buffer.clear();
                self.buffer.extend_from_slice(fixed);
                self.rendered = true;
            }
            self.jar.apply(&mut self.buffer);
        }
        Ok(())
    }

    fn prepare_request(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        _fixed: &[u8],
        seq: impl FnOnce() -> u64,
    ) -> Result<(), NotPrepared> {
        let spec = &work.spec;
        self.requests = 1;
        if let Some(script) = &work.script {
            self.buffer.clear();
            match &script.fixed {
                Some(fixed) => self.buffer.extend_from_slice(fixed),
                None => {
                    let n = script
                        .thread
                        .borrow_mut()
                        .request(&mut self.buffer)
                        .map_err(NotPrepared::Script)?;
                    self.requests = n.max(1);
                }
            }
            self.rendered = true;
            return Ok(());
        }
        let group = work.group();
        let starts_iteration = !group.sequential || self.starting;
        if starts_iteration && !group.feeders.is_empty() {
            if let Err(exhausted) = work.take_rows(&mut self.rows) {
                self.finish(work);
                return Err(exhausted.into());
            }
            self.end_iteration(work);
            self.in_iteration = true;
            work.open_iterations.set(work.open_iterations.get() + 1);
        }
        // CounterConfig.iterationStart: each counter's value for the
        // iteration, set before its first request is rendered (once its rows are
        // taken: an iteration a drained feeder stops uses no value).
        if starts_iteration {
            for counter in &group.counters {
                counter.advance(&mut self.store, None);
            }
        }
        self.rendered = false;
        let Some(step) = spec.steps.get(target) else {
            return Ok(());
        };
        // An HTTP request's template, or a WebSocket message's: one renderer.
        let template = match (&step.template, &step.message) {
            (Some(request), _) => Rendered::Request(request),
            (None, Some(message)) => Rendered::Message(message),
            (None, None) => return Ok(()),
        };
        let mut row_refs: [&[Box<[u8]>]; 8] = [&[]; 8];
        let rows: Vec<&[Box<[u8]>]>;
        let rows: &[&[Box<[u8]>]] = if group.feeders.len() <= row_refs.len() {
            for (i, (feeder, row)) in group.feeders.iter().zip(&self.rows).enumerate() {
                row_refs[i] = feeder.data().row(*row);
            }
            &row_refs[..group.feeders.len()]
        } else {
            rows = group
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
            vars: &mut self.store,
            rng: &mut rng,
        };
        self.buffer.clear();
        match template {
            Rendered::Request(request) => request.render(&mut context, &mut self.buffer),
            Rendered::Message(message) => message.render(&mut context, &mut self.buffer),
        }
        self.rendered = true;
        Ok(())
    }

    /// True before an iteration's first step (always, without steps).
    pub(crate) fn at_first_step(&self) -> bool {
        self.starting
    }

    /// The user's number (`{{conn}}`).
    pub(crate) fn conn(&self) -> u64 {
        self.conn
    }

    /// True once the user is done (its iterations walked, or stopped by
    /// `on_error`): its slot sends nothing more.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, work: &WorkerWorkload) {
        self.end_iteration(work);
        if let Some(party) = &mut self.party {
            party.leave();
        }
        if !std::mem::replace(&mut self.done, true) {
            work.users_done.set(work.users_done.get() + 1);
        }
    }

    /// The iteration whose rows the user took is over.
    fn end_iteration(&mut self, work: &WorkerWorkload) {
        if std::mem::take(&mut self.in_iteration) {
            work.open_iterations
                .set(work.open_iterations.get().saturating_sub(1));
        }
    }

    /// The user is done with its current iteration: the next begins, or
    /// the user is done when its `iterations` are walked (or the new
    /// iteration has no step to send).
    fn next_iteration(&mut self, work: &WorkerWorkload) {
        let group = work.group();
        self.end_iteration(work);
        self.iter += 1;
        self.starting = true;
        self.step = work.first_step(self.iter);
        let walked = group.limits.iterations.is_some_and(|n| self.iter >= n);
        if walked || self.step >= group.steps.len() {
            self.finish(work);
        }
    }

    /// A script's pipelined batch cut to its first `k` requests (what `-n`
    /// has left to send).
    pub(crate) fn keep_requests(&mut self, k: usize) {
        let len = stampede_workload::request_bytes::first_requests_len(&self.buffer, k);
        self.buffer.truncate(len);
        self.requests = k;
    }

    /// The first `k` requests of a script's pipelined batch were answered
    /// and the server closed the connection: the rest go again.
    pub(crate) fn drop_first_requests(&mut self, k: usize) {
        let len = stampede_workload::request_bytes::first_requests_len(&self.buffer, k);
        self.buffer.drain(..len);
        self.requests = self.requests.saturating_sub(k).max(1);
    }

    /// The rendered request, when the current one was rendered.
    pub(crate) fn rendered(&self) -> Option<&[u8]> {
        self.rendered.then_some(&self.buffer[..])
    }

    /// The current request is over: a scenario user moves to its next step
    /// (after its last, the next iteration). `failed`: the step failed (a
    /// transport error, a failed status or a failed check), which the
    /// group's `on_error` acts on; `restart`: an extractor found nothing,
    /// so the iteration starts again from its first step. Returns the
    /// pause before the next step (its own `think`, else the group's).
    pub(crate) fn advance(
        &mut self,
        work: &WorkerWorkload,
        failed: bool,
        restart: bool,
    ) -> Option<Duration> {
        if let Some(script) = &work.script {
            let mut thread = script.thread.borrow_mut();
            // wrk's delay(): a script error there means no delay, and no
            // delay is no pause at all (a timer of 0 would still wait for
            // the next tick of tokio's millisecond wheel).
            return thread
                .has_delay()
                .then(|| thread.delay().unwrap_or_default())
                .filter(|delay| !delay.is_zero());
        }
        let group = work.group();
        if !group.sequential {
            // Each request is an iteration of its own.
            self.end_iteration(work);
            self.iter += 1;
            return None;
        }
        let mut restart = restart;
        if failed {
            match group.limits.on_error {
                OnError::Continue => {}
                OnError::NextIteration => restart = true,
                OnError::StopUser => {
                    self.finish(work);
                    return None;
                }
                OnError::StopRun => {
                    work.stop_run.set(true);
                    if let Some(phases) = &work.phases {
                        phases.stop_run();
                    }
                    self.finish(work);
                    return None;
                }
            }
        }
        self.starting = false;
        self.step = work.next_step_from(self.step + 1, self.iter);
        if restart || self.step >= group.steps.len() {
            self.next_iteration(work);
        }
        if self.done {
            return None;
        }
        let step = &work.spec.steps[group.steps.start + self.step];
        step.options
            .think
            .or(group.think)
            .map(|think| think.sample(&mut work.rng.borrow_mut()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec::{GroupWork, StepWork};
    use super::*;
    use stampede_workload::{ResponseView, Script};

    /// A script whose `delay()` returns `ms` milliseconds.
    #[derive(Debug)]
    struct Delays(u64);

    struct DelayThread(u64);

    impl Script for Delays {
        fn thread(&self, _index: usize) -> Result<Box<dyn ScriptThread>, ScriptError> {
            Ok(Box::new(DelayThread(self.0)))
        }
    }

    impl ScriptThread for DelayThread {
        fn builds_requests(&self) -> bool {
            false
        }
        fn fixed_request(&mut self) -> Result<Vec<u8>, ScriptError> {
            Ok(b"GET / HTTP/1.1\r\n\r\n".to_vec())
        }
        fn request(&mut self, out: &mut Vec<u8>) -> Result<usize, ScriptError> {
            out.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
            Ok(1)
        }
        fn has_delay(&self) -> bool {
            true
        }
        fn delay(&mut self) -> Result<Duration, ScriptError> {
            Ok(Duration::from_millis(self.0))
        }
        fn wants_responses(&self) -> bool {
            false
        }
        fn response(&mut self, _response: &ResponseView<'_>) -> Result<(), ScriptError> {
            Ok(())
        }
        fn stop_requested(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_zero_delay_is_no_pause_and_any_other_is_its_length() {
        for (ms, pause) in [(0, None), (5, Some(Duration::from_millis(5)))] {
            let spec = WorkloadSpec {
                steps: vec![StepWork::default()],
                groups: vec![GroupWork {
                    steps: 0..1,
                    ..Default::default()
                }],
                script: Some(Arc::new(Delays(ms))),
                ..WorkloadSpec::default()
            };
            let work = WorkerWorkload::new(Arc::new(spec), 0, 0, 1, 1, None).expect("a script");
            let mut user = work.new_user(0);
            assert_eq!(user.advance(&work, false, false), pause, "delay() = {ms}");
        }
    }
}
