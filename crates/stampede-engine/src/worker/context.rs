//! What every connection of a worker shares, whichever loop drives it
//! (tokio's slots, the reactors' slots, HTTP/2 and HTTP/3 streams): the
//! connector, the encoded requests and the mix, timeouts, the worker's
//! state, the request log, the workload's share, redirects. The start of
//! every request (`begin_request`) and its end (`judge`, `record`,
//! `redirect`) are its methods; booking.rs books the outcome.

use crate::http1::ResponseParser;
use crate::net::transport::{ConnectFailure, ConnectTimes, Connector, Stream};
use crate::plan::worker_plan::WorkerPlan;
use crate::redirects::redirect::{Follow, Hops};
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
    /// A WebSocket run (`ws://`): the upgrade and the message.
    pub(crate) websocket: Option<Arc<crate::plan::ws_plan::WsConfig>>,
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
        if let Some(stream) = parser.capture().and_then(|c| c.stream()) {
            self.book_stream(stream, outcome);
        }
    }

    /// `--sse`: the stream `stream` watched, whose request ended in
    /// `outcome`, booked: the one booking of HTTP/1.1's streams and
    /// HTTP/2's (drive/h2/h2_stream.rs).
    pub(crate) fn book_stream(&self, stream: &crate::stream::StreamWatch, outcome: &Outcome) {
        let outlived = outcome.result == Err(ErrorKind::Timeout) && stream.first_body().is_some();
        if outlived && self.stream.for_at_most.is_none() {
            // A healthy stream longer than --timeout: say what ran out.
            self.state.sample_error(ErrorKind::Timeout, || {
                format!(
                    "the stream was still open after --timeout {}: a stream must end within it; --sse-for DUR ends each stream as a success",
                    stampede_plan::format_duration(self.timeout)
                )
            });
        }
        let since_sent = |at: Instant| at.saturating_duration_since(outcome.sent);
        let figures = stampede_metrics::StreamFigures {
            first_byte: stream.first_body().map(since_sent),
            first_event: stream.first_event().map(since_sent),
            gaps_us: stream.gaps_us(),
            events: stream.events(),
            length: since_sent(outcome.done),
            reconnects: stream.reconnects(),
            errors: stream.errors(),
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
    /// Opens a connection with `connector` within `timeout`, counting the
    /// attempt and, once it is open, its TLS handshake apart from its
    /// connect: every tokio driver (HTTP/1.1, HTTP/2, WebSocket) counts an
    /// open so. What the open counts as (a reconnect, a planned one) is
    /// the caller's to say.
    pub(crate) async fn connect_counted(
        &self,
        connector: &Connector,
        timeout: Duration,
    ) -> Result<(Stream, ConnectTimes), ConnectFailure> {
        self.state.connect_attempt();
        let (stream, times) = connector.connect_within(timeout).await?;
        if let Some(handshake) = times.tls {
            self.state.tls_handshake(times.connect, handshake);
        }
        Ok((stream, times))
    }

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
        websocket: plan.websocket.clone(),
    })
}
