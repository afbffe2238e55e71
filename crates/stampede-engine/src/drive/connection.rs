//! A connection slot: sends one request and reads its response, opening a TCP
//! connection when it has none (first request, after an error, after the
//! server closed, after the client retired the last one at the end of its
//! lifetime (conn_lifetime.rs), or for every request without keep-alive). The load models
//! (closed.rs, open.rs) decide when a slot sends.

use crate::exchange::conn_books::{ConnectionLife, Reuse};
use crate::exchange::read_buffer::ReadBuffer;
use crate::exchange::request_books::{Clocks, Failure, RequestBooks};
use crate::http1::{ResponseError, ResponseParser, ResponseProgress};
use crate::net::outcome_class::{classify_io, Stage};
use crate::net::transport::{Connector, Stream};
use crate::plan::worker_plan::WorkerPlan;
use crate::redirects::redirect::{Follow, Hops};
use crate::redirects::redirect_switch::{origin_switch, OriginSwitch};
use crate::worker::request_log::LogFacts;
use crate::worker::request_log::WorkerLog;
use crate::worker::request_log::WorkerLogHandle;
use crate::worker::worker_state::WorkerState;
use crate::workload::{Answer, UserSession};
use stampede_metrics::{ErrorKind, Judged, Outcome};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What every connection of a worker shares.
#[derive(Debug)]
pub(crate) struct ConnectionContext {
    /// Opens connections (TCP or Unix, proxy tunnel, TLS).
    pub connector: Connector,
    /// The pre-encoded request (see `http1::encode_request`).
    pub request: Rc<[u8]>,
    /// The request repeated `--pipeline` times, written as one batch.
    pub pipelined: Rc<[u8]>,
    /// A mix of requests (`--targets`): bytes and HEAD flag of each; empty
    /// for a single request.
    pub mix: Vec<(Rc<[u8]>, bool)>,
    /// The weighted order in which the mix is sent, cycled.
    pub mix_order: Rc<[u16]>,
    pub mix_next: std::cell::Cell<usize>,
    /// How far on the next entry is: one, or for a listed order (a
    /// replayed log) the workers sharing it, so that worker w of W sends
    /// entries w, w + W, … as its pacer takes instants w, w + W, … and its
    /// listed feeder rows w, w + W, ….
    pub mix_stride: usize,
    pub head_request: bool,
    pub keepalive: bool,
    pub timeout: Duration,
    pub state: Rc<WorkerState>,
    /// The per-request log, when one was asked for (`None`: one check per request).
    pub log: Option<WorkerLog>,
    /// One read buffer for all of the worker's plain connections: reads go
    /// here and only bytes the parser cannot consume yet are kept per
    /// connection, so an idle connection holds no buffer.
    pub scratch: RefCell<Box<[u8]>>,
    /// The worker's share of a workload (templates, feeders, checks,
    /// steps); `None` for fixed requests.
    pub(crate) workload: Option<crate::workload::WorkerWorkload>,
    /// Redirects to follow (`--redirects N`).
    pub(crate) redirect: Option<crate::redirects::redirect::RedirectRule>,
    /// The other origins redirects went to, and how each is reached.
    pub(crate) origins: RefCell<crate::redirects::redirect_origin::OriginBook>,
    /// This worker's place among its group's workers: slot `s` is virtual
    /// user `s × workers + worker` (`{{conn}}`, the request log's `vu`).
    pub(crate) users: (u64, u64),
    /// A scenario's steps' own timeouts, keep-alive and redirects, by
    /// target index; `None` when no step sets them (the run's apply).
    pub(crate) step_rules: Option<Box<[crate::workload::StepRules]>>,
    /// When a connection is retired (conn_lifetime.rs).
    pub(crate) lifetime: crate::plan::conn_lifetime::Lifetime,
    /// `--decode`: every encoded body is decoded, its bytes counted.
    pub(crate) decode: bool,
    /// `--sse`: each response is a stream whose events are watched.
    pub(crate) stream: stampede_plan::StreamSpec,
    /// The scenario steps' rendezvous points; `None` when no step has one.
    pub(crate) rendezvous: Option<Arc<crate::workload::RendezvousPoints>>,
}

impl ConnectionContext {
    /// The start of every request on either path (the reactors' books and
    /// the tokio slot): the parser's capture set on first use, then which
    /// request of the mix (or the user's step) goes next, rendered into the
    /// user's buffer when it has a workload. `None`: nothing can be sent (a
    /// `unique` feeder ran out: the user is done; or the script failed: the
    /// worker winds down); the request is taken back.
    pub(crate) fn begin_request(
        &self,
        parser: &mut ResponseParser,
        capture_set: &mut bool,
        session: &mut Option<Box<UserSession>>,
        slot: u32,
        intended: Instant,
    ) -> Option<usize> {
        if !std::mem::replace(capture_set, true) {
            if let Some(capture) = self.capture() {
                parser.set_capture(capture);
            }
        }
        if self.stream.watch {
            parser.new_stream();
        }
        let Some(work) = &self.workload else {
            return Some(self.next_target());
        };
        let session = session.get_or_insert_with(|| Box::new(work.new_user(self.user_id(slot))));
        let target = session.next_target(work, || self.next_target());
        let fixed = self.request_of(target).0;
        match session.prepare(work, target, fixed, || work.spec.sequence.next()) {
            Ok(()) => Some(target),
            Err(not) => {
                self.state.not_prepared(intended, not);
                None
            }
        }
    }

    /// True when the virtual user `session` of a scenario is inside an
    /// iteration (its next step is not the first): in the open model it
    /// goes on without a new arrival (both HTTP/1.1 paths ask).
    pub(crate) fn mid_iteration(&self, session: Option<&UserSession>) -> bool {
        self.workload.as_ref().is_some_and(|w| w.sequential())
            && session.is_some_and(|s| !s.at_first_step())
    }

    /// What a connection's parser keeps of each response: what the
    /// workload's checks and script read, the `Location` of redirects, and
    /// with `--decode` the decoded size of every body.
    pub(crate) fn capture(&self) -> Option<crate::http1::Capture> {
        use crate::http1::Capture;
        let workload = self.workload.as_ref().and_then(|w| w.capture());
        let redirect = self
            .redirect
            .as_ref()
            .map(|_| Capture::new(true, false, 8 * 1024));
        let decode = self.decode.then(Capture::decoding);
        let stream = self.stream.watch.then(Capture::streaming);
        [workload, redirect, decode, stream]
            .into_iter()
            .flatten()
            .reduce(Capture::union)
    }

    /// After a response on either HTTP/1.1 path (the reactors' books, the
    /// tokio slot), by what its parser's capture saw: with `--decode`, a
    /// complete response's decoded bytes are counted; a body that did not
    /// decode has its reason sampled. Fixed requests have no capture and
    /// pay one test.
    pub(crate) fn settle_decoding(
        &self,
        parser: &ResponseParser,
        intended: Instant,
        result: Result<u16, ErrorKind>,
    ) {
        let Some(capture) = parser.capture() else {
            return;
        };
        match result {
            Ok(_) => {
                if let Some((decoded, encoded)) = capture.decoded() {
                    self.state.decoded(intended, decoded, encoded);
                }
            }
            Err(ErrorKind::UndecodableBody) => {
                if let Some(why) = capture.decode_failure() {
                    self.state
                        .sample_error(ErrorKind::UndecodableBody, || why.to_string());
                }
            }
            Err(_) => {}
        }
    }

    /// `--sse-for`: a stream still in its body when the time ran out (the
    /// request's timeout is `--sse-for`) ended as the user asked: the
    /// response, with the status it came with, not a timeout.
    fn stream_cut(&self, parser: &ResponseParser, outcome: &Outcome) -> Option<Outcome> {
        self.stream.for_at_most?;
        if outcome.result != Err(ErrorKind::Timeout) {
            return None;
        }
        let (status, body_bytes) = parser.in_body()?;
        Some(Outcome {
            result: Ok(status),
            body_bytes,
            ..*outcome
        })
    }

    /// After a request on either HTTP/1.1 path, with `--sse`: the stream
    /// its parser's capture watched is booked, whatever ended it (events
    /// seen before an error were seen). Without `--sse`, one test.
    pub(crate) fn settle_stream(&self, parser: &ResponseParser, outcome: &Outcome) {
        if !self.stream.watch {
            return;
        }
        let Some(stream) = parser.capture().and_then(|c| c.stream()) else {
            return;
        };
        let since_sent = |at: Instant| at.saturating_duration_since(outcome.sent);
        let figures = stampede_metrics::StreamFigures {
            first_byte: stream.first_body().map(since_sent),
            first_event: stream.first_event().map(since_sent),
            gaps_us: stream.gaps_us(),
            events: stream.events(),
            length: since_sent(outcome.done),
            reconnects: 0,
        };
        self.state.stream_ended(outcome.intended, &figures);
    }

    /// The verdict on a request's end on either HTTP/1.1 path (the
    /// reactors' books, the tokio slot; workload/judge.rs): a complete
    /// response (`answer`) is judged by the workload's checks, extractors
    /// and script, a failure (`None`) is a failed step. Either moves the
    /// virtual user on (its think time is returned), and a script's
    /// `thread:stop()` or a group's `stop_run` stops the sending. Fixed
    /// requests pay one test.
    pub(crate) fn judge(
        &self,
        session: Option<&mut UserSession>,
        target: usize,
        answer: Option<Answer>,
        capture: Option<&crate::http1::Capture>,
    ) -> (Option<Judged>, Option<Duration>) {
        let (Some(work), Some(session)) = (&self.workload, session) else {
            return (None, None);
        };
        let (judged, failed, restart) = match answer {
            Some(answer) => {
                let recorder = &mut self.state.recorder.borrow_mut();
                let judgement = session.judge(work, target, answer, capture, recorder);
                (judgement.judged, judgement.failed, judgement.restart)
            }
            None => (None, true, false),
        };
        let think = session.advance(work, failed, restart);
        if work.script_stopped() || work.stopped_run() {
            self.state.stop_sending();
        }
        (judged, think)
    }

    /// Counts the requests of a script's pipelined batch after its first
    /// (counted already): each claims the budget, so `-n` stays exact; a
    /// batch the budget cannot pay for in full is cut to what it can.
    /// Returns how many requests the batch holds.
    pub(crate) fn count_batch(&self, session: Option<&mut UserSession>) -> usize {
        let Some(session) = session.filter(|s| s.requests > 1) else {
            return 1;
        };
        let mut kept = 1;
        while kept < session.requests && self.state.claim_budget() {
            self.state.begin_request();
            kept += 1;
        }
        if kept < session.requests {
            session.keep_requests(kept);
        }
        kept
    }

    /// Judges a response of a pipelined batch that is not its last (a
    /// script's `request()` returned several): its checks and the script's
    /// `response()` see it as any response, but the user moves on (and
    /// `delay()` is asked) once, after the batch's last ([`Self::judge`]).
    pub(crate) fn judge_within_batch(
        &self,
        session: Option<&mut UserSession>,
        target: usize,
        answer: Answer,
        capture: Option<&crate::http1::Capture>,
    ) -> Option<Judged> {
        let (Some(work), Some(session)) = (&self.workload, session) else {
            return None;
        };
        let recorder = &mut self.state.recorder.borrow_mut();
        session
            .judge(work, target, answer, capture, recorder)
            .judged
    }

    /// Books how a request ended on either HTTP/1.1 path: its decoded body
    /// (by `parser`'s capture), then the rule of every protocol
    /// (booking.rs) with the time its connection took to open (`connect`)
    /// and the virtual user of slot `slot`; `session`: the user's, whose
    /// rendered request the log may keep the target of.
    pub(crate) fn record(
        &self,
        parser: &ResponseParser,
        outcome: &Outcome,
        connect: Option<Duration>,
        slot: u32,
        session: Option<&UserSession>,
    ) {
        let cut = self.stream_cut(parser, outcome);
        let outcome = cut.as_ref().unwrap_or(outcome);
        self.settle_decoding(parser, outcome.intended, outcome.result);
        self.settle_stream(parser, outcome);
        let facts = LogFacts {
            connect,
            user: self.user_id(slot),
            rendered: session.and_then(UserSession::rendered),
        };
        self.book(outcome, facts);
    }

    /// Whether the complete response (`status`, what `parser` kept of it)
    /// to request `target` redirects it (redirect.rs), on either HTTP/1.1
    /// path: a hop's request is made ready in `hops` (and counted), an
    /// offsite redirect is counted and is the response.
    pub(crate) fn redirect(
        &self,
        target: usize,
        status: u16,
        parser: &ResponseParser,
        session: Option<&UserSession>,
        hops: &mut Hops,
    ) -> Follow {
        let Some(rule) = self.redirect_of(target) else {
            return Follow::No;
        };
        let location = parser.capture().and_then(|c| c.header("location"));
        let rendered = session.and_then(|s| s.rendered());
        let original = rendered.unwrap_or_else(|| self.request_of(target).0);
        hops.follow(
            rule,
            status,
            location,
            original,
            &*self.state,
            &self.origins,
        )
    }

    /// [`ConnectionContext::settle_decoding`] for HTTP/2 and HTTP/3, whose
    /// bodies are counted as their DATA arrives ([`crate::http1::DecodedCount`]):
    /// the response's result, `undecodable_body` when it did not decode.
    pub(crate) fn settle_stream_decoding(
        &self,
        intended: Instant,
        status: u16,
        decoded: Option<Result<(u64, bool), crate::http1::DecodeError>>,
    ) -> Result<u16, ErrorKind> {
        match decoded {
            None => Ok(status),
            Some(Ok((decoded, encoded))) => {
                self.state.decoded(intended, decoded, encoded);
                Ok(status)
            }
            Some(Err(why)) => {
                self.state
                    .sample_error(ErrorKind::UndecodableBody, || why.to_string());
                Err(ErrorKind::UndecodableBody)
            }
        }
    }
}

impl ConnectionContext {
    /// The virtual user of slot `slot`: unique among the group's workers.
    pub(crate) fn user_id(&self, slot: u32) -> u64 {
        let (worker, workers) = self.users;
        u64::from(slot) * workers + worker
    }

    /// The response timeout of request `target` (a step may set its own).
    #[inline]
    pub(crate) fn timeout_of(&self, target: usize) -> Duration {
        self.rules_of(target).map_or(self.timeout, |r| r.timeout)
    }

    /// The connect timeout of request `target`.
    #[inline]
    pub(crate) fn connect_timeout_of(&self, target: usize) -> Duration {
        (self.rules_of(target)).map_or(self.connector.connect_timeout, |r| r.connect_timeout)
    }

    /// True when the connection stays open after request `target`.
    #[inline]
    pub(crate) fn keep_alive_of(&self, target: usize) -> bool {
        self.rules_of(target)
            .map_or(self.keepalive, |r| r.keep_alive)
    }

    /// The redirects request `target` follows, if any.
    #[inline]
    pub(crate) fn redirect_of(
        &self,
        target: usize,
    ) -> Option<&crate::redirects::redirect::RedirectRule> {
        let rule = self.redirect.as_ref()?;
        match self.rules_of(target) {
            Some(rules) => rules.follow_redirects.then_some(rule),
            None => Some(rule),
        }
    }

    /// The connector that reaches a hop's `origin` (`None`: the run's
    /// own target; else another origin of the book).
    pub(crate) fn connector_to(&self, origin: Option<u16>) -> Option<Rc<Connector>> {
        origin.and_then(|id| self.origins.borrow().connector(id))
    }

    /// The rendezvous before request `target`, if its step has one (a
    /// run without any pays this one test).
    #[inline]
    pub(crate) fn rendezvous_of(&self, target: usize) -> Option<&crate::workload::Rendezvous> {
        self.rendezvous.as_ref()?.step(target)
    }

    fn rules_of(&self, target: usize) -> Option<&crate::workload::StepRules> {
        self.step_rules.as_ref().and_then(|rules| rules.get(target))
    }

    /// The next request of the mix (for HTTP/2, which keeps its own request forms).
    pub(crate) fn next_target_index(&self) -> usize {
        self.next_target()
    }

    /// The next request of the mix (index into `mix`), round-robin by weight.
    pub(crate) fn next_target(&self) -> usize {
        if self.mix_order.is_empty() {
            return 0;
        }
        let at = self.mix_next.get();
        self.mix_next
            .set((at + self.mix_stride) % self.mix_order.len());
        usize::from(self.mix_order[at])
    }

    /// The bytes of request `target` and whether it is a HEAD.
    pub(crate) fn request_of(&self, target: usize) -> (&[u8], bool) {
        match self.mix.get(target) {
            Some((bytes, head)) => (bytes, *head),
            None => (&self.request, self.head_request),
        }
    }

    /// Requests per pipelined batch (1: no pipelining).
    pub(crate) fn pipeline_depth(&self) -> usize {
        self.pipelined.len() / self.request.len().max(1)
    }
}

/// The worker's shared read buffer: large reads for bulk bodies, allocated once.
const SCRATCH_BYTES: usize = 64 * 1024;

/// What the connections of a worker share, built from its plan (a
/// script's `init` runs here, on the worker's thread; its error is the
/// worker's).
pub(crate) fn connection_context(
    plan: &WorkerPlan,
    state: Rc<WorkerState>,
    log: Option<WorkerLogHandle>,
) -> std::io::Result<ConnectionContext> {
    let workload = plan
        .workload
        .as_ref()
        .map(|spec| {
            let (index, workers) = plan.share;
            crate::workload::WorkerWorkload::new(
                spec.clone(),
                plan.group,
                index,
                workers,
                plan.seed,
                plan.phases.clone(),
            )
            .map(|work| work.with_rendezvous(plan.rendezvous.clone()))
        })
        .transpose()
        .map_err(|e| std::io::Error::other(e.0))?;
    let defaults = crate::workload::StepRules {
        timeout: plan.timeout,
        connect_timeout: plan.connector.connect_timeout,
        keep_alive: plan.keepalive,
        follow_redirects: plan.follows_redirects,
    };
    let step_rules =
        (plan.workload.as_deref()).and_then(|w| crate::workload::StepRules::of(w, defaults));
    let listed = (plan.workload.as_ref()).is_some_and(|w| w.mix_sequence.is_some());
    let (mix_next, mix_stride) = match listed {
        true => (plan.share.0, plan.share.1.max(1)),
        // Workers start at different places of the cycle so that a mix is
        // spread even when each sends few requests.
        false => (plan.index, 1),
    };
    Ok(ConnectionContext {
        connector: plan.connector.build(plan.index, plan.seed),
        request: Rc::from(&plan.request[..]),
        pipelined: plan.request.repeat(plan.pipeline.max(1)).into(),
        mix: plan
            .mix
            .iter()
            .map(|(bytes, head)| (Rc::from(&bytes[..]), *head))
            .collect(),
        mix_order: Rc::from(&plan.mix_order[..]),
        // The start must lie inside the cycle, which may be shorter than
        // the number of workers (a file of one block has a cycle of one).
        mix_next: std::cell::Cell::new(mix_next % plan.mix_order.len().max(1)),
        mix_stride,
        head_request: plan.head_request,
        keepalive: plan.keepalive,
        timeout: plan.timeout,
        state,
        log: log.map(|handle| WorkerLog::new(handle, plan.measure_start)),
        scratch: std::cell::RefCell::new(vec![0u8; SCRATCH_BYTES].into_boxed_slice()),
        workload,
        redirect: plan.redirect.clone(),
        origins: RefCell::default(),
        users: (plan.share.0 as u64, plan.share.1.max(1) as u64),
        step_rules,
        lifetime: plan.lifetime,
        decode: plan.decode,
        stream: plan.stream,
        rendezvous: plan.rendezvous.clone(),
    })
}

/// The result of one exchange before it is turned into an [`Outcome`].
struct Exchange {
    result: Result<u16, ErrorKind>,
    body_bytes: u64,
    /// Its clocks (request_books.rs, the reactors' too).
    clocks: Clocks,
}

/// A connection slot's reusable parts.
pub(crate) struct Slot {
    stream: Option<Stream>,
    buffer: ReadBuffer,
    parser: ResponseParser,
    /// Its connection's life: responses served, age, what the next counts as.
    life: ConnectionLife,
    /// The request of the mix being sent.
    current: usize,
    /// The exchange's idle-close retry and the slot's connect backoff
    /// (request_books.rs, the reactors' too).
    books: RequestBooks,
    /// The wait the last connect failure asked for, taken after the request
    /// that paid for it is recorded.
    backoff_due: Option<Duration>,
    /// The virtual user of a workload (workload/): `None` for fixed requests.
    session: Option<Box<UserSession>>,
    /// The parser keeps what checks and redirects read (set on first use).
    capture_set: bool,
    /// Redirects the request in flight has followed (`--redirects`).
    hops: Hops,
    /// The origin `stream` goes to: `None` the run's, else another a
    /// redirect went to (redirect.rs).
    origin: Option<u16>,
    /// The slot's other connection, parked while a hop uses the current one
    /// (only after a redirect to another origin; see [`Slot::switch_to`]).
    side: Option<Box<SideLink>>,
    /// This slot's index in its worker (its virtual user's number).
    index: u32,
    /// Released from its step's rendezvous: the batch its send is booked in.
    ticket: Option<crate::workload::Ticket>,
}

/// A connection of a slot parked aside, with its books: the slot's own
/// while a hop is at another origin, or that origin's while the slot is home.
struct SideLink {
    origin: Option<u16>,
    stream: Option<Stream>,
    buffer: ReadBuffer,
    life: ConnectionLife,
}

impl Slot {
    pub(crate) fn new(head_request: bool, index: u32) -> Slot {
        Slot {
            stream: None,
            buffer: ReadBuffer::default(),
            parser: ResponseParser::new(head_request),
            life: ConnectionLife::new(Instant::now()),
            current: 0,
            books: RequestBooks::default(),
            backoff_due: None,
            session: None,
            capture_set: false,
            hops: Hops::default(),
            origin: None,
            side: None,
            index,
            ticket: None,
        }
    }

    /// Makes the slot's current connection the one to `want` (the origin
    /// of the request in flight), by the rule in redirect_switch.rs; the one
    /// not in use is parked in `side`.
    fn switch_to(&mut self, ctx: &ConnectionContext, want: Option<u16>) {
        let side = self.side.as_ref().map(|side| side.origin);
        match origin_switch(self.origin, side, want) {
            OriginSwitch::Stay => return,
            OriginSwitch::SwapSide => {
                self.swap_side();
                return;
            }
            OriginSwitch::ParkCurrent => {
                self.close_side(ctx);
                self.swap_side();
            }
            OriginSwitch::DropCurrent => self.drop_stream(ctx, false),
        }
        self.origin = want;
    }

    fn swap_side(&mut self) {
        let side = self.side.get_or_insert_with(|| {
            Box::new(SideLink {
                origin: None,
                stream: None,
                buffer: ReadBuffer::default(),
                life: ConnectionLife::new(Instant::now()),
            })
        });
        std::mem::swap(&mut self.origin, &mut side.origin);
        std::mem::swap(&mut self.stream, &mut side.stream);
        std::mem::swap(&mut self.buffer, &mut side.buffer);
        std::mem::swap(&mut self.life, &mut side.life);
    }

    /// Closes the parked connection, if any.
    fn close_side(&mut self, ctx: &ConnectionContext) {
        if self.side.as_ref().is_some_and(|side| side.stream.is_some()) {
            self.swap_side();
            self.drop_stream(ctx, false);
            self.swap_side();
        }
    }

    /// True when a scenario user is inside an iteration (its next step is
    /// not the first): in the open model it goes on without a new arrival.
    pub(crate) fn mid_iteration(&self, ctx: &ConnectionContext) -> bool {
        ctx.mid_iteration(self.session.as_deref())
    }

    /// Picks the request to send (the user's next step with a workload)
    /// and renders it; false when a `unique` feeder ran out of rows.
    fn prepare(&mut self, ctx: &ConnectionContext, intended: Instant) -> bool {
        self.hops.reset();
        let begun = ctx.begin_request(
            &mut self.parser,
            &mut self.capture_set,
            &mut self.session,
            self.index,
            intended,
        );
        match begun {
            Some(target) => {
                self.current = target;
                true
            }
            None => false,
        }
    }

    /// Waits at the rendezvous of the user's next step, if it has one,
    /// before the request is counted or its intended time taken: a user
    /// held there has sent nothing, and the wait is no part of the
    /// request's time (JMeter's timers delay the sampler before its sample
    /// starts). A run without rendezvous pays one test.
    pub(crate) async fn rendezvous(&mut self, ctx: &ConnectionContext) {
        let (Some(points), Some(work)) = (&ctx.rendezvous, &ctx.workload) else {
            return;
        };
        let target = work.upcoming_target(self.session.as_deref());
        if let Some(point) = points.step(target) {
            self.ticket = Some(point.wait().await);
        }
    }

    /// True once the virtual user is done (its iterations walked, or
    /// stopped by `on_error`): the slot sends nothing more.
    pub(crate) fn user_done(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.is_done())
    }

    /// Sends one request intended at `intended` and records its outcome.
    /// The caller has already counted it with `begin_request`.
    /// With a workload the response is judged, and a scenario's think
    /// time is waited out before returning.
    pub(crate) async fn run_request(&mut self, ctx: &ConnectionContext, intended: Instant) {
        if !self.prepare(ctx, intended) {
            return;
        }
        // Released from a rendezvous (Self::rendezvous): its send is booked.
        let ticket = self.ticket.take();
        let (_, head) = ctx.request_of(self.current);
        self.parser.set_head_request(head);
        let batch = ctx.count_batch(self.session.as_deref_mut());
        if batch > 1 {
            // A script's request() wrote several pipelined requests: their
            // responses are read in order.
            self.run_batch(ctx, intended, batch, true).await;
            return;
        }
        let mut exchange = self.exchange(ctx, intended).await;
        if let (Some(ticket), Some(point)) = (ticket, ctx.rendezvous_of(self.current)) {
            point.sent(ticket, exchange.clocks.sent);
        }
        // A redirect it cannot follow was read in full: its connection stays.
        let mut answered = false;
        while let Ok(status) = exchange.result {
            let session = self.session.as_deref();
            let follow = ctx.redirect(self.current, status, &self.parser, session, &mut self.hops);
            let refused = match follow {
                Follow::Hop => {
                    exchange = self.exchange(ctx, intended).await;
                    continue;
                }
                Follow::Limit => ErrorKind::RedirectLimit,
                Follow::Unreachable => ErrorKind::Other,
                Follow::No | Follow::Offsite => break,
            };
            exchange.result = Err(refused);
            answered = true;
        }
        let answer = exchange.result.ok().map(|status| Answer {
            status,
            body_bytes: exchange.body_bytes,
            elapsed: intended.elapsed(),
        });
        let session = self.session.as_deref_mut();
        let capture = self.parser.capture();
        let (judged, think) = ctx.judge(session, self.current, answer, capture);
        self.finish_judged(ctx, &exchange, exchange.result, judged);
        if exchange.result.is_err() && !answered {
            self.drop_stream(ctx, false);
            self.after_failure(ctx).await;
        }
        if let Some(think) = think {
            tokio::time::sleep(think).await;
        }
    }

    /// After a failed request: waits out the connect backoff if the failure
    /// was a connect, else yields (a refused port answers at once: a dead
    /// target must not starve the worker's timers and other connections).
    async fn after_failure(&mut self, ctx: &ConnectionContext) {
        match self.backoff_due.take() {
            Some(delay) => ctx.state.wait_out_backoff(delay).await,
            None => tokio::task::yield_now().await,
        }
    }

    /// HTTP/1.1 pipelining: writes `n` requests at once (all intended at
    /// `intended`) and reads their `n` responses in order, recording each as
    /// it completes. An error ends the remaining requests of the batch with
    /// the same class, and the connection. A reused connection the server
    /// closed while idle (nothing of the batch answered) is an idle close:
    /// the batch goes again, once, on a new connection.
    pub(crate) async fn run_pipelined(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        n: usize,
    ) {
        self.run_batch(ctx, intended, n, false).await;
    }

    /// A batch of `n` pipelined requests: `--pipeline`'s fixed ones, or
    /// (`scripted`) the user's rendered bytes (a script's `request()`
    /// returned several), whose every response is judged (checks, the
    /// script's `response()`), the user moving on once, after the last.
    async fn run_batch(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        n: usize,
        scripted: bool,
    ) {
        self.books.arm();
        let mut n = n;
        let think = 'batch: loop {
            let mut exchange = self.fresh_exchange(intended);
            if let Err(kind) = self.ensure_connected(ctx, &mut exchange).await {
                for _ in 0..n {
                    self.finish(ctx, &exchange, Err(kind));
                }
                let (_, think) = ctx.judge(self.session.as_deref_mut(), self.current, None, None);
                self.drop_stream(ctx, false);
                self.after_failure(ctx).await;
                break 'batch think;
            }
            let sent = Instant::now();
            let deadline = tokio::time::Instant::from_std(sent + ctx.timeout_of(self.current));
            let batch = match (scripted, self.session.as_ref()) {
                (true, Some(session)) => session.rendered().unwrap_or_default(),
                _ => &ctx.pipelined[..n * ctx.request.len()],
            };
            let stream = self.stream.as_mut().expect("connected above");
            let written = tokio::time::timeout_at(deadline, stream.write_all(batch)).await;
            let mut failure = match written {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(classify_io(&e)),
                Err(_) => Some(Stage::Exchange.timeout_kind()),
            };
            let mut reusable = true;
            let mut think = None;
            let mut closed_early = false;
            let mut resend_after = None;
            for answered in 0..n {
                let mut exchange = self.fresh_exchange(intended);
                exchange.clocks.sent = sent;
                let result = match failure {
                    Some(kind) => Err(kind),
                    None => {
                        let read = self.read_response(ctx, &mut exchange);
                        match tokio::time::timeout_at(deadline, read).await {
                            Ok(Ok((status, keep_alive))) => {
                                reusable &= keep_alive;
                                closed_early = !keep_alive && answered + 1 < n;
                                Ok(status)
                            }
                            Ok(Err(kind)) => Err(kind),
                            Err(_) => Err(Stage::Exchange.timeout_kind()),
                        }
                    }
                };
                let mut judged = None;
                match result {
                    Err(kind) => {
                        let (life, received) = (&self.life, exchange.clocks.bytes_received);
                        if (self.books).retry_after_idle_close(life, kind, answered, received) {
                            self.drop_stream(ctx, true);
                            continue 'batch;
                        }
                        failure = Some(kind);
                    }
                    Ok(status) => {
                        self.life.answered();
                        if scripted && answered + 1 < n {
                            let answer = Answer {
                                status,
                                body_bytes: exchange.body_bytes,
                                elapsed: intended.elapsed(),
                            };
                            let session = self.session.as_deref_mut();
                            let capture = self.parser.capture();
                            judged = ctx.judge_within_batch(session, self.current, answer, capture);
                        }
                    }
                }
                if scripted && answered + 1 == n {
                    let answer = result.ok().map(|status| Answer {
                        status,
                        body_bytes: exchange.body_bytes,
                        elapsed: intended.elapsed(),
                    });
                    let session = self.session.as_deref_mut();
                    let capture = self.parser.capture();
                    (judged, think) = ctx.judge(session, self.current, answer, capture);
                }
                self.finish_judged(ctx, &exchange, result, judged);
                if closed_early {
                    resend_after = Some(answered + 1);
                    break;
                }
            }
            if let Some(done) = resend_after {
                // The server closed after that response: the rest of the
                // batch was never answered (nor processed) and goes again
                // on a new connection (RFC 9112 §9.3.2).
                if let Some(session) = self.session.as_deref_mut().filter(|_| scripted) {
                    session.drop_first_requests(done);
                }
                n -= done;
                self.drop_stream(ctx, true);
                continue 'batch;
            }
            if let Some(kind) = failure {
                self.failed(ctx, kind, true);
                self.drop_stream(ctx, false);
            } else if let Reuse::Close { by_server } =
                (self.life).after_answer(&ctx.lifetime, reusable, ctx.keepalive, Instant::now)
            {
                self.drop_stream(ctx, by_server);
            }
            break 'batch think;
        };
        if let Some(think) = think {
            tokio::time::sleep(think).await;
        }
    }

    fn fresh_exchange(&self, intended: Instant) -> Exchange {
        Exchange {
            result: Err(ErrorKind::Other),
            body_bytes: 0,
            clocks: Clocks::new(intended),
        }
    }

    /// Records one request of a batch.
    fn finish(&self, ctx: &ConnectionContext, exchange: &Exchange, result: Result<u16, ErrorKind>) {
        self.finish_judged(ctx, exchange, result, None);
    }

    /// Records one request with its verdict.
    fn finish_judged(
        &self,
        ctx: &ConnectionContext,
        exchange: &Exchange,
        result: Result<u16, ErrorKind>,
        judged: Option<Judged>,
    ) {
        let (clocks, body) = (&exchange.clocks, exchange.body_bytes);
        let outcome = clocks.outcome(Instant::now(), result, body, self.current, judged);
        let session = self.session.as_deref();
        ctx.record(&self.parser, &outcome, clocks.connect, self.index, session);
    }

    /// Books what a failed exchange costs the slot (request_books.rs): the
    /// backoff it waits out once the request is recorded.
    /// `had_connection`: it failed on an open connection, not opening one.
    fn failed(&mut self, ctx: &ConnectionContext, kind: ErrorKind, had_connection: bool) {
        let failure = Failure {
            kind,
            had_connection,
            reused: self.life.is_reused(),
            abroad: self.origin.is_some(),
        };
        if let Some(wait) = self.books.failed(&ctx.state, failure) {
            self.backoff_due = Some(wait);
        }
    }

    /// Closes the connections, if any (the slot is being parked).
    pub(crate) fn close(&mut self, ctx: &ConnectionContext) {
        self.drop_stream(ctx, false);
        self.close_side(ctx);
    }

    fn drop_stream(&mut self, ctx: &ConnectionContext, by_server: bool) {
        if self.stream.take().is_some() {
            ctx.state.connection_closed();
        }
        self.buffer.clear();
        self.life.gone(by_server);
    }

    /// Sends the request (or a hop of its redirects) and reads its
    /// response, retrying once on a fresh connection when a reused one
    /// turns out to have been closed by the server while idle (no byte of
    /// a response arrived): that is a reconnect, not an error.
    async fn exchange(&mut self, ctx: &ConnectionContext, intended: Instant) -> Exchange {
        self.books.arm();
        loop {
            let exchange = self.attempt(ctx, intended).await;
            let (life, received) = (&self.life, exchange.clocks.bytes_received);
            let retry = (exchange.result)
                .is_err_and(|kind| self.books.retry_after_idle_close(life, kind, 0, received));
            if !retry {
                return exchange;
            }
            self.drop_stream(ctx, true);
        }
    }

    async fn attempt(&mut self, ctx: &ConnectionContext, intended: Instant) -> Exchange {
        let mut exchange = self.fresh_exchange(intended);
        if let Err(kind) = self.ensure_connected(ctx, &mut exchange).await {
            exchange.result = Err(kind);
            return exchange;
        }
        exchange.clocks.sent = Instant::now();
        let timeout = ctx.timeout_of(self.current);
        let deadline = tokio::time::Instant::from_std(exchange.clocks.sent + timeout);
        let transfer = self.transfer(ctx, &mut exchange);
        let result = match tokio::time::timeout_at(deadline, transfer).await {
            Ok(result) => result,
            Err(_elapsed) => Err(Stage::Exchange.timeout_kind()),
        };
        match result {
            Ok((status, keep_alive)) => {
                exchange.result = Ok(status);
                self.life.answered();
                let planned = ctx.keep_alive_of(self.current);
                let reuse =
                    (self.life).after_answer(&ctx.lifetime, keep_alive, planned, Instant::now);
                if let Reuse::Close { by_server } = reuse {
                    self.drop_stream(ctx, by_server);
                }
            }
            Err(kind) => {
                self.failed(ctx, kind, true);
                exchange.result = Err(kind);
            }
        }
        exchange
    }

    /// Opens a connection when the slot has none (or no longer trusts its own).
    async fn ensure_connected(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(), ErrorKind> {
        self.switch_to(ctx, self.hops.origin());
        let unsolicited = !self.buffer.pending().is_empty();
        if self.stream.is_some()
            && !(self.life).fit_to_send(unsolicited, &ctx.lifetime, Instant::now)
        {
            self.drop_stream(ctx, false);
        }
        if self.stream.is_some() {
            return Ok(());
        }
        ctx.state.connect_attempt();
        let timeout = ctx.connect_timeout_of(self.current);
        let foreign = ctx.connector_to(self.origin);
        let connector = foreign.as_deref().unwrap_or(&ctx.connector);
        match connector.connect_within(timeout).await {
            Ok((stream, times)) => {
                self.books.connected();
                exchange.clocks.connect = Some(times.connect);
                (self.life).opened(&ctx.state, times.connect, Instant::now());
                if let Some(handshake) = times.tls {
                    ctx.state.tls_handshake(times.connect, handshake);
                }
                self.stream = Some(stream);
                Ok(())
            }
            Err(failure) => {
                if let Some(reason) = failure.reason {
                    ctx.state.sample_error(failure.kind, || reason);
                }
                self.failed(ctx, failure.kind, false);
                Err(failure.kind)
            }
        }
    }

    /// Writes the request and reads until the response is complete; returns
    /// the status and whether the connection may be reused.
    async fn transfer(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(u16, bool), ErrorKind> {
        let rendered = self.session.as_ref().and_then(|s| s.rendered());
        let request = match self.hops.request() {
            Some(hop) => hop,
            None => rendered.unwrap_or_else(|| ctx.request_of(self.current).0),
        };
        let stream = self.stream.as_mut().expect("connected above");
        if let Err(error) = stream.write_all(request).await {
            let kind = classify_io(&error);
            if kind != ErrorKind::Reset {
                return Err(kind);
            }
            // The server reset the connection before the request was all
            // out: an answer it sent first (a 413 to a body too large, RFC
            // 9112 §9.3) is still readable, and is the response; the
            // connection, its request cut short, carries no other.
            return match self.read_response(ctx, exchange).await {
                Ok((status, _)) => Ok((status, false)),
                Err(_) => Err(kind),
            };
        }
        self.read_response(ctx, exchange).await
    }

    /// Reads one response from the connection.
    async fn read_response(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(u16, bool), ErrorKind> {
        self.parser.reset();
        if self.stream.as_ref().is_some_and(Stream::is_plain) {
            return self.read_plain_response(ctx, exchange).await;
        }
        let stream = self.stream.as_mut().expect("connected above");
        // The bytes pending came with the read of this response's first.
        let mut first = false;
        loop {
            if !self.buffer.pending().is_empty() {
                // Bytes at hand (a pipelined response read with the last
                // one) are this response's first.
                exchange.clocks.first_byte.get_or_insert_with(Instant::now);
                let progress = self.buffer.parse_pending(&mut self.parser);
                let read = self.buffer.pending();
                let first = std::mem::take(&mut first);
                if let Some(start) = crate::http1::malformed_start(first, &progress, read) {
                    ctx.state.sample_error(ErrorKind::MalformedResponse, || {
                        crate::http1::malformed_reason(start)
                    });
                }
                if let ResponseProgress::Complete(done) = progress.map_err(response_error_kind)? {
                    exchange.body_bytes = done.body_bytes;
                    return Ok((done.status, done.keep_alive));
                }
            }
            let read = stream.read(self.buffer.spare()).await;
            match read {
                Ok(0) => {
                    let done = self.parser.finish_on_close().map_err(response_error_kind)?;
                    exchange.body_bytes = done.body_bytes;
                    return Ok((done.status, false));
                }
                Ok(n) => {
                    if exchange.clocks.first_byte.is_none() {
                        exchange.clocks.first_byte = Some(Instant::now());
                        first = true;
                    }
                    self.buffer.filled(n);
                    exchange.clocks.bytes_received += n as u64;
                }
                Err(e) => return Err(classify_io(&e)),
            }
        }
    }
}

impl Slot {
    /// [`Slot::read_response`] for TCP and Unix streams: waits for readiness,
    /// reads into the worker's scratch buffer, parses from there, and keeps
    /// only an incomplete head (or unsolicited bytes) in the slot's buffer.
    async fn read_plain_response(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(u16, bool), ErrorKind> {
        loop {
            if !self.buffer.pending().is_empty() {
                // Bytes at hand (a pipelined response read with the last
                // one) are this response's first.
                exchange.clocks.first_byte.get_or_insert_with(Instant::now);
                let progress = self
                    .buffer
                    .parse_pending(&mut self.parser)
                    .map_err(response_error_kind)?;
                if let ResponseProgress::Complete(done) = progress {
                    exchange.body_bytes = done.body_bytes;
                    return Ok((done.status, done.keep_alive));
                }
            }
            let stream = self.stream.as_ref().expect("connected above");
            stream.readable().await.map_err(|e| classify_io(&e))?;
            let mut scratch = ctx.scratch.borrow_mut();
            let n = match stream.try_read(&mut scratch) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(classify_io(&e)),
            };
            if n == 0 {
                let done = self.parser.finish_on_close().map_err(response_error_kind)?;
                exchange.body_bytes = done.body_bytes;
                return Ok((done.status, false));
            }
            let first = exchange.clocks.first_byte.is_none();
            if first {
                exchange.clocks.first_byte = Some(Instant::now());
            }
            exchange.clocks.bytes_received += n as u64;
            let progress = self.buffer.parse_read(&mut self.parser, &scratch[..n]);
            if let Some(start) = crate::http1::malformed_start(first, &progress, &scratch[..n]) {
                ctx.state.sample_error(ErrorKind::MalformedResponse, || {
                    crate::http1::malformed_reason(start)
                });
            }
            let progress = progress.map_err(response_error_kind)?;
            if let ResponseProgress::Complete(done) = progress {
                exchange.body_bytes = done.body_bytes;
                return Ok((done.status, done.keep_alive));
            }
        }
    }
}

/// Hops are counted in the worker's recorder, their errors sampled there.
impl crate::redirects::redirect::HopBooks for WorkerState {
    fn hop_followed(&self) {
        self.recorder.borrow_mut().record_redirect();
    }

    fn hop_offsite(&self) {
        self.recorder.borrow_mut().record_offsite_redirect();
    }

    fn hop_sample(&self, kind: ErrorKind, reason: &dyn Fn() -> String) {
        self.sample_error(kind, reason);
    }
}

/// The error class of a response that could not be read.
pub(crate) fn response_error_kind(error: ResponseError) -> ErrorKind {
    match error {
        ResponseError::Malformed => ErrorKind::MalformedResponse,
        ResponseError::ClosedEarly => ErrorKind::ClosedEarly,
        ResponseError::Undecodable => ErrorKind::UndecodableBody,
    }
}
