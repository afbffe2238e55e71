//! The [`Ledger`]'s rules without a socket: a test plays the reactor's
//! part (counts a request, connects, writes, hands response bytes over, at
//! instants it chooses) and reads the worker's books afterwards. Each test
//! names the rule it pins; the bytes a reactor reads are the parser's
//! business and are tested in response_reader.rs.

use crate::exchange::conn_books::Reuse;
use crate::exchange::ledger::{Ledger, LinkBooks};
use crate::http1::{Complete, ResponseProgress};
use crate::plan::worker_plan::WorkerPlan;
use crate::redirects::redirect::Follow;
use crate::worker::context::{connection_context, ConnectionContext};
use crate::worker::worker_state::WorkerState;
use stampede_metrics::{ErrorKind, Snapshot};
use std::rc::Rc;
use std::time::{Duration, Instant};

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
const OK_CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi";
const CREATED: &[u8] = b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n";
const NOT_FOUND: &[u8] = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

/// One slot's ledger and the worker's books it writes to.
struct Slot {
    ctx: ConnectionContext,
    state: Rc<WorkerState>,
    ledger: Ledger,
    t0: Instant,
}

fn slot_of(plan: WorkerPlan) -> Slot {
    let state = Rc::new(WorkerState::for_plan(&plan));
    let ctx = connection_context(&plan, state.clone(), None).expect("context");
    let t0 = plan.measure_start;
    Slot {
        ctx,
        state,
        ledger: Ledger::new(false, t0, 0),
        t0,
    }
}

fn slot() -> Slot {
    slot_of(WorkerPlan::for_tests(REQUEST))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

impl Slot {
    fn at(&self, n: u64) -> Instant {
        self.t0 + ms(n)
    }

    /// The worker counts a request intended at `n` ms and the slot begins it.
    fn begin(&mut self, n: u64) {
        self.state.begin_request();
        assert!(self.ledger.begin(&self.ctx, self.at(n)));
    }

    /// The request goes on a new connection whose handshake runs from
    /// `from` to `to` ms (as reactor/slot.rs `send_request` does it).
    fn connect(&mut self, from: u64, to: u64) {
        self.ledger.reset_response();
        self.ledger.connecting(&self.ctx, self.at(from));
        self.ledger.connected(&self.ctx, self.at(to));
    }

    /// The request goes at `n` ms on the open connection, which must be
    /// fit to carry it.
    fn reuse(&mut self, n: u64) {
        assert!(self.ledger.fit_to_send(&self.ctx, self.at(n)));
        self.ledger.reset_response();
        self.ledger.sending(&self.ctx, self.at(n));
    }

    /// The whole request goes out.
    fn write_all(&mut self) -> Vec<u8> {
        let bytes = self.ledger.unwritten(&self.ctx).to_vec();
        self.ledger.written += bytes.len();
        assert!(self.ledger.unwritten(&self.ctx).is_empty());
        bytes
    }

    /// `bytes` arrive at `n` ms and complete a response.
    fn complete(&mut self, bytes: &[u8], n: u64) -> Complete {
        match self.ledger.received(bytes, self.at(n)) {
            Ok(ResponseProgress::Complete(done)) => done,
            other => panic!("a complete response expected, got {other:?}"),
        }
    }

    /// `bytes` arrive at `n` ms and complete a response, which is booked.
    fn answer(&mut self, bytes: &[u8], n: u64) -> Reuse {
        let done = self.complete(bytes, n);
        assert_eq!(self.ledger.redirect(&self.ctx, &done), Follow::No);
        self.ledger.answered(&self.ctx, self.at(n), &done)
    }

    fn books(&self) -> Snapshot {
        self.state.final_snapshot()
    }
}

#[test]
fn an_answer_is_booked_with_its_status_bytes_and_three_clocks() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 10);
    assert_eq!(s.write_all(), REQUEST);
    // Half the head at 30 ms (the first byte), the rest at 50.
    let (head, rest) = OK.split_at(10);
    assert_eq!(
        s.ledger.received(head, s.at(30)),
        Ok(ResponseProgress::Partial)
    );
    assert_eq!(s.answer(rest, 50), Reuse::Keep);
    let books = s.books();
    let c = &books.counters;
    assert_eq!((c.sent, c.success, c.failed_status), (1, 1, 0));
    assert_eq!(status_count(c, 200), 1);
    assert_eq!(c.bytes_received, OK.len() as u64);
    assert_eq!(c.bytes_body, 5);
    assert_eq!((c.connections_opened, c.connect_attempts), (1, 1));
    assert_eq!(c.reconnects, 0);
    // Latency from the intended instant, service from the send (when the
    // connection was up), waiting to the first byte, connect alone.
    assert_eq!(books.latency.max() / 1000, 50);
    assert_eq!(books.service.max() / 1000, 40);
    assert_eq!(books.waiting.max() / 1000, 20);
    assert_eq!(books.connect.max() / 1000, 10);
}

#[test]
fn an_error_status_is_booked_as_a_failed_status_not_an_error() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    assert_eq!(s.answer(NOT_FOUND, 2), Reuse::Keep);
    let c = s.books().counters;
    assert_eq!((c.success, c.failed_status, c.error_total()), (0, 1, 0));
    assert_eq!(status_count(&c, 404), 1);
}

#[test]
fn a_server_that_says_close_closes_and_its_successor_is_a_reconnect() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    let reuse = s.answer(OK_CLOSE, 2);
    assert_eq!(reuse, Reuse::Close { by_server: true });
    s.ledger.connection_gone(&s.ctx, true);
    s.begin(3);
    s.connect(3, 4);
    s.write_all();
    assert_eq!(s.answer(OK, 5), Reuse::Keep);
    let c = s.books().counters;
    assert_eq!((c.success, c.connections_opened, c.reconnects), (2, 2, 1));
    assert_eq!(c.planned_reconnects, 0);
    assert_eq!(s.state.gauges().open_connections, 1, "one closed, one open");
}

#[test]
fn no_keepalive_closes_after_each_answer_and_it_is_not_a_reconnect() {
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.keepalive = false;
    let mut s = slot_of(plan);
    for round in 0..2 {
        s.begin(round * 10);
        s.connect(round * 10, round * 10 + 1);
        s.write_all();
        assert_eq!(
            s.answer(OK, round * 10 + 2),
            Reuse::Close { by_server: false }
        );
        s.ledger.connection_gone(&s.ctx, false);
    }
    let c = s.books().counters;
    assert_eq!((c.success, c.connections_opened), (2, 2));
    assert_eq!((c.reconnects, c.planned_reconnects), (0, 0));
}

#[test]
fn a_connection_past_its_request_limit_is_retired_as_a_planned_reconnect() {
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.lifetime = crate::plan::conn_lifetime::Lifetime::new(&stampede_plan::ConnLifetime {
        max_requests: Some(2),
        ..Default::default()
    });
    let mut s = slot_of(plan);
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    assert_eq!(s.answer(OK, 2), Reuse::Keep);
    s.begin(3);
    s.reuse(3);
    s.write_all();
    assert_eq!(s.answer(OK, 4), Reuse::Close { by_server: false });
    s.ledger.connection_gone(&s.ctx, false);
    s.begin(5);
    s.connect(5, 6);
    s.write_all();
    s.answer(OK, 7);
    let c = s.books().counters;
    assert_eq!((c.success, c.connections_opened), (3, 2));
    assert_eq!((c.reconnects, c.planned_reconnects), (0, 1));
}

#[test]
fn bytes_no_request_asked_for_make_the_connection_unfit() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    // A second response to one request.
    let mut two = OK.to_vec();
    two.extend_from_slice(OK);
    s.answer(&two, 2);
    assert!(s.ledger.has_unsolicited_bytes());
    assert!(!s.ledger.fit_to_send(&s.ctx, s.at(3)));
    s.ledger.connection_gone(&s.ctx, false);
    assert!(
        !s.ledger.has_unsolicited_bytes(),
        "a new connection starts clean"
    );
}

#[test]
fn an_idle_close_of_a_reused_connection_is_retried_once_then_is_an_error() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    s.answer(OK, 2);
    s.begin(3);
    s.reuse(3);
    s.write_all();
    // The server had closed it while idle: nothing of the answer came.
    assert!(s.ledger.retry_after_idle_close(ErrorKind::ClosedEarly));
    assert!(
        !s.ledger.retry_after_idle_close(ErrorKind::ClosedEarly),
        "once per exchange"
    );
    s.ledger.failed(&s.ctx, ErrorKind::ClosedEarly, true);
    let c = s.books().counters;
    assert_eq!((c.success, c.error(ErrorKind::ClosedEarly)), (1, 1));
}

#[test]
fn a_close_after_part_of_the_answer_or_on_a_fresh_connection_is_not_retried() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    assert!(
        !s.ledger.retry_after_idle_close(ErrorKind::ClosedEarly),
        "a fresh connection is not idle"
    );
    s.answer(OK, 2);
    s.begin(3);
    s.reuse(3);
    s.write_all();
    assert_eq!(
        s.ledger.received(&OK[..4], s.at(4)),
        Ok(ResponseProgress::Partial)
    );
    assert!(!s.ledger.retry_after_idle_close(ErrorKind::ClosedEarly));
    assert!(
        !s.ledger.retry_after_idle_close(ErrorKind::Timeout),
        "only a close or a reset is idle"
    );
}

#[test]
fn a_failed_connect_counts_from_the_intended_start_and_backs_the_slot_off() {
    let mut s = slot();
    s.begin(0);
    s.ledger.connecting(&s.ctx, s.at(0));
    assert_eq!(s.ledger.retry_at(), None);
    let before = Instant::now();
    s.ledger.failed(&s.ctx, ErrorKind::ConnectRefused, false);
    let retry = s.ledger.retry_at().expect("a failed connect backs off");
    assert!(retry > before, "the slot waits before its next connect");
    let books = s.books();
    let c = &books.counters;
    assert_eq!((c.success, c.error(ErrorKind::ConnectRefused)), (0, 1));
    assert_eq!((c.connect_attempts, c.connections_opened), (1, 0));
    assert_eq!(c.bytes_body, 0);
}

#[test]
fn a_failure_on_an_open_connection_does_not_back_the_slot_off() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    s.ledger.failed(&s.ctx, ErrorKind::Timeout, true);
    assert_eq!(s.ledger.retry_at(), None);
    s.ledger.connection_gone(&s.ctx, false);
    assert_eq!(s.state.gauges().open_connections, 0);
    // A second `gone` does not close it twice.
    s.ledger.connection_gone(&s.ctx, false);
    assert_eq!(s.state.gauges().open_connections, 0);
    let c = s.books().counters;
    assert_eq!(c.error(ErrorKind::Timeout), 1);
}

#[test]
fn a_malformed_answer_is_sampled_with_its_first_bytes() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    let err = s
        .ledger
        .received(b"SSH-2.0-OpenSSH_9.2\r\n", s.at(2))
        .expect_err("not HTTP");
    s.ledger.failed(&s.ctx, err, true);
    let books = s.books();
    assert_eq!(books.counters.error(err), 1);
    let (kind, reason) = books.error_samples.first().expect("a sample");
    assert_eq!(*kind, err);
    assert!(reason.contains("SSH-2.0"), "{reason}");
}

#[test]
fn a_pipelined_batch_books_each_answer_and_the_last_decides_the_connection() {
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.pipeline = 3;
    let mut s = slot_of(plan);
    for _ in 0..3 {
        s.state.begin_request();
    }
    assert!(s.ledger.begin_batch(&s.ctx, s.at(0), 3));
    s.connect(0, 1);
    assert_eq!(s.write_all(), REQUEST.repeat(3));
    let mut three = OK.to_vec();
    three.extend_from_slice(NOT_FOUND);
    three.extend_from_slice(OK_CLOSE);
    let first = s.complete(&three, 2);
    assert_eq!(s.ledger.redirect(&s.ctx, &first), Follow::No);
    assert_eq!(s.ledger.answered(&s.ctx, s.at(2), &first), Reuse::Keep);
    assert!(s.ledger.batch_pending());
    let ResponseProgress::Complete(second) = s.ledger.next_of_batch(s.at(2)).unwrap() else {
        panic!("the second answer is in the same bytes")
    };
    assert_eq!(second.status, 404);
    assert_eq!(s.ledger.answered(&s.ctx, s.at(2), &second), Reuse::Keep);
    let ResponseProgress::Complete(third) = s.ledger.next_of_batch(s.at(3)).unwrap() else {
        panic!("the third answer is in the same bytes")
    };
    let reuse = s.ledger.answered(&s.ctx, s.at(3), &third);
    assert_eq!(reuse, Reuse::Close { by_server: true });
    assert!(!s.ledger.batch_pending());
    let c = s.books().counters;
    assert_eq!((c.sent, c.success, c.failed_status), (3, 2, 1));
    assert_eq!(c.bytes_received, three.len() as u64);
    assert_eq!(c.bytes_body, 5 + 2);
}

#[test]
fn a_failure_mid_batch_fails_every_request_not_answered_yet() {
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.pipeline = 4;
    let mut s = slot_of(plan);
    for _ in 0..4 {
        s.state.begin_request();
    }
    assert!(s.ledger.begin_batch(&s.ctx, s.at(0), 4));
    s.connect(0, 1);
    s.write_all();
    let done = s.complete(OK, 2);
    s.ledger.answered(&s.ctx, s.at(2), &done);
    assert!(
        !s.ledger.retry_after_idle_close(ErrorKind::Reset),
        "part of the batch was answered"
    );
    s.ledger.failed(&s.ctx, ErrorKind::Reset, true);
    assert!(!s.ledger.batch_pending());
    let c = s.books().counters;
    assert_eq!((c.success, c.error(ErrorKind::Reset)), (1, 3));
    assert_eq!(c.unfinished, 0);
}

#[test]
fn the_rest_of_a_batch_the_server_closed_on_goes_again_and_only_it() {
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.pipeline = 3;
    let mut s = slot_of(plan);
    for _ in 0..3 {
        s.state.begin_request();
    }
    assert!(s.ledger.begin_batch(&s.ctx, s.at(0), 3));
    s.connect(0, 1);
    s.write_all();
    let done = s.complete(OK_CLOSE, 2);
    s.ledger.answered(&s.ctx, s.at(2), &done);
    s.ledger.rest_of_batch();
    assert!(s.ledger.batch_pending());
    s.ledger.connection_gone(&s.ctx, true);
    s.connect(3, 4);
    // Two requests are left, sent and answered on the new connection.
    assert_eq!(s.write_all(), REQUEST.repeat(2));
    let mut two = OK.to_vec();
    two.extend_from_slice(OK);
    let first = s.complete(&two, 5);
    assert_eq!(s.ledger.answered(&s.ctx, s.at(5), &first), Reuse::Keep);
    assert!(s.ledger.batch_pending());
    let ResponseProgress::Complete(second) = s.ledger.next_of_batch(s.at(5)).unwrap() else {
        panic!("the second answer is in the same bytes")
    };
    s.ledger.answered(&s.ctx, s.at(5), &second);
    assert!(!s.ledger.batch_pending());
    let c = s.books().counters;
    assert_eq!((c.sent, c.success, c.error_total()), (3, 3, 0));
    assert_eq!(c.reconnects, 1);
}

#[test]
fn a_tls_connection_times_its_connect_and_handshake_apart() {
    let mut s = slot();
    s.begin(0);
    s.ledger.connecting(&s.ctx, s.at(0));
    s.ledger.handshaking(&s.ctx, s.at(4));
    s.ledger.connected_over_tls(&s.ctx, s.at(4), s.at(10));
    s.write_all();
    s.answer(OK, 12);
    let books = s.books();
    assert_eq!(books.connect.max() / 1000, 4);
    assert_eq!(books.tls.max() / 1000, 6);
    assert_eq!(books.connect_tls.max() / 1000, 10);
    assert_eq!(
        books.service.max() / 1000,
        2,
        "the send waits for the handshake"
    );
}

#[test]
fn deadlines_follow_the_phase_a_request_is_in() {
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.timeout = ms(700);
    plan.connector.connect_timeout = ms(300);
    let mut s = slot_of(plan);
    s.begin(0);
    s.ledger.connecting(&s.ctx, s.at(5));
    assert_eq!(s.ledger.deadline, s.at(305));
    s.ledger.handshaking(&s.ctx, s.at(20));
    assert_eq!(
        s.ledger.deadline,
        s.at(320),
        "the handshake has a connect timeout of its own"
    );
    s.ledger.connected(&s.ctx, s.at(30));
    assert_eq!(s.ledger.deadline, s.at(730));
    s.ledger.sending(&s.ctx, s.at(40));
    assert_eq!(s.ledger.deadline, s.at(740));
}

#[test]
fn a_parked_connection_keeps_its_own_leftover_and_life() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    let mut two = OK.to_vec();
    two.extend_from_slice(b"HTTP/1.1 2");
    s.answer(&two, 2);
    assert!(s.ledger.has_unsolicited_bytes());
    let mut parked = LinkBooks::new(s.at(3));
    s.ledger.swap_link(&mut parked);
    assert!(
        !s.ledger.has_unsolicited_bytes(),
        "the other connection's books"
    );
    // The other connection has served nothing: an idle close there is no retry.
    s.begin(4);
    s.ledger.reset_response();
    assert!(!s.ledger.retry_after_idle_close(ErrorKind::ClosedEarly));
    s.ledger.swap_link(&mut parked);
    assert!(
        s.ledger.has_unsolicited_bytes(),
        "back home, its leftover is back"
    );
}

#[test]
fn a_head_request_ends_at_the_head_whatever_its_length_says() {
    let mut plan = WorkerPlan::for_tests(b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n");
    plan.head_request = true;
    let mut s = slot_of(plan);
    s.ledger = Ledger::new(true, s.t0, 0);
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    let done = s.complete(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 2);
    assert_eq!(done.body_bytes, 0);
    s.ledger.answered(&s.ctx, s.at(2), &done);
    assert_eq!(s.books().counters.success, 1);
}

#[test]
fn a_response_framed_by_the_close_ends_at_the_end_of_the_stream() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    assert_eq!(
        s.ledger
            .received(b"HTTP/1.1 200 OK\r\n\r\nall of it", s.at(2)),
        Ok(ResponseProgress::Partial)
    );
    let done = s.ledger.end_of_stream().expect("framed by the close");
    assert_eq!(
        (done.status, done.body_bytes, done.keep_alive),
        (200, 9, false)
    );
    let reuse = s.ledger.answered(&s.ctx, s.at(3), &done);
    assert_eq!(reuse, Reuse::Close { by_server: true });
}

#[test]
fn early_bytes_are_kept_until_the_request_is_out() {
    let mut s = slot();
    s.begin(0);
    s.connect(0, 1);
    s.ledger.keep_early(OK);
    s.write_all();
    let ResponseProgress::Complete(done) = s.ledger.parse_early(s.at(2)).unwrap() else {
        panic!("the kept bytes are a whole answer")
    };
    assert_eq!(done.status, 200);
    s.ledger.answered(&s.ctx, s.at(2), &done);
    assert_eq!(s.books().counters.bytes_received, OK.len() as u64);
}

fn status_count(c: &stampede_metrics::Counters, status: u16) -> u64 {
    (c.status.iter())
        .find(|(s, _)| *s == status)
        .map_or(0, |(_, n)| n)
}

/// A slot whose virtual user walks a scenario of two fixed-request steps
/// (`first`, then `second`) `iterations` times, from a `feeder` if given.
fn scenario_slot(
    iterations: u64,
    feeder: Option<stampede_workload::Feeder>,
) -> (Slot, Vec<u8>, Vec<u8>) {
    use crate::workload::{GroupWork, StepWork, WorkloadSpec};
    use std::sync::Arc;
    let first = b"GET /first HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
    let second = b"GET /second HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
    let mut plan = WorkerPlan::for_tests(&first);
    plan.mix = vec![
        (Arc::from(&first[..]), false),
        (Arc::from(&second[..]), false),
    ];
    plan.mix_order = Arc::from(&[0u16, 1][..]);
    let mut group = GroupWork {
        steps: 0..2,
        sequential: true,
        feeders: feeder.into_iter().map(Arc::new).collect(),
        ..GroupWork::default()
    };
    group.limits.iterations = Some(iterations);
    plan.workload = Some(Arc::new(WorkloadSpec {
        steps: vec![StepWork::default(), StepWork::default()],
        groups: vec![group],
        ..WorkloadSpec::default()
    }));
    let mut s = slot_of(plan);
    s.ledger = Ledger::new(false, s.t0, 0);
    (s, first, second)
}

#[test]
fn a_scenario_user_walks_its_steps_in_order_and_is_done_after_its_iterations() {
    let (mut s, first, second) = scenario_slot(1, None);
    assert!(!s.ledger.user_done());
    s.begin(0);
    s.connect(0, 1);
    assert_eq!(s.write_all(), first);
    s.answer(OK, 2);
    assert!(s.ledger.mid_iteration(&s.ctx), "the second step is next");
    assert!(!s.ledger.user_done());
    s.begin(3);
    s.reuse(3);
    assert_eq!(s.write_all(), second);
    s.answer(OK, 4);
    assert!(!s.ledger.mid_iteration(&s.ctx), "the iteration is over");
    assert!(s.ledger.user_done(), "its one iteration is walked");
    let books = s.books();
    assert_eq!(books.counters.success, 2);
    let per_step: Vec<u64> = books.per_target.iter().map(|t| t.counters.sent).collect();
    assert_eq!(per_step, [1, 1]);
}

#[test]
fn a_unique_feeder_out_of_rows_takes_the_request_back_and_sends_nothing() {
    use stampede_workload::{FeedData, FeedMode, Feeder};
    let data = FeedData::from_csv("ids", b"id\n7\n", b',').expect("csv");
    let (mut s, _, _) = scenario_slot(5, Some(Feeder::new(data, FeedMode::Unique)));
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    s.answer(OK, 2);
    s.begin(3);
    s.reuse(3);
    s.write_all();
    s.answer(OK, 4);
    // The second iteration finds no row: nothing is begun.
    s.state.begin_request();
    assert!(!s.ledger.begin(&s.ctx, s.at(5)));
    assert!(s.state.is_feed_exhausted());
}

#[test]
fn a_mix_sends_each_request_of_its_order() {
    use std::sync::Arc;
    let a = b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
    let b = b"GET /b HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.mix = vec![(Arc::from(&a[..]), false), (Arc::from(&b[..]), false)];
    plan.mix_order = Arc::from(&[0u16, 1][..]);
    let mut s = slot_of(plan);
    s.begin(0);
    s.connect(0, 1);
    assert_eq!(s.write_all(), a);
    s.answer(OK, 2);
    s.begin(3);
    s.reuse(3);
    assert_eq!(s.write_all(), b, "the mix's second, not the plan's request");
    s.answer(NOT_FOUND, 4);
    let books = s.books();
    let by_target: Vec<(u64, u64)> = (books.per_target.iter())
        .map(|t| (t.counters.success, t.counters.failed_status))
        .collect();
    assert_eq!(by_target, [(1, 0), (0, 1)]);
}

/// A slot that follows up to 5 redirects, to other origins too (plain TCP).
fn redirecting_slot(pipeline: usize) -> Slot {
    use crate::redirects::redirect::RedirectRule;
    use crate::redirects::redirect_origin::{ForeignRules, Origin};
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.pipeline = pipeline;
    plan.follows_redirects = true;
    plan.redirect = Some(RedirectRule {
        max_hops: 5,
        home: Origin::parse("http", "127.0.0.1:9").expect("origin"),
        foreign: Some(ForeignRules {
            resolve: Vec::new(),
            tls: None,
            connect_timeout: ms(100),
            http2: false,
        }),
    });
    slot_of(plan)
}

fn found(location: &str) -> Vec<u8> {
    format!("HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n").into_bytes()
}

#[test]
fn a_redirect_is_a_hop_with_its_own_request_and_origin() {
    let mut s = redirecting_slot(1);
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    // Home first: a hop on the same origin.
    let done = s.complete(&found("/next"), 2);
    assert_eq!(s.ledger.redirect(&s.ctx, &done), Follow::Hop);
    assert_eq!(s.ledger.origin(), None, "home");
    s.ledger.hop_answered(&s.ctx, s.at(2), done.keep_alive);
    s.ledger.reset_response();
    let hop = s.write_all();
    assert!(hop.starts_with(b"GET /next HTTP/1.1\r\n"), "{hop:?}");
    // Then two other origins, each its own.
    let done = s.complete(&found("http://127.0.0.1:10/x"), 3);
    assert_eq!(s.ledger.redirect(&s.ctx, &done), Follow::Hop);
    assert_eq!(s.ledger.origin(), Some(0));
    s.ledger.reset_response();
    s.write_all();
    let done = s.complete(&found("http://127.0.0.1:11/y"), 4);
    assert_eq!(s.ledger.redirect(&s.ctx, &done), Follow::Hop);
    assert_eq!(s.ledger.origin(), Some(1));
    s.ledger.reset_response();
    assert!(s.write_all().starts_with(b"GET /y HTTP/1.1\r\n"));
    let done = s.complete(OK, 5);
    assert_eq!(s.ledger.redirect(&s.ctx, &done), Follow::No);
    s.ledger.answered(&s.ctx, s.at(5), &done);
    let c = s.books().counters;
    assert_eq!((c.sent, c.success, c.redirects), (1, 1, 3));
}

#[test]
fn a_hop_may_be_retried_after_an_idle_close_as_its_request_could() {
    let mut s = redirecting_slot(1);
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    s.answer(OK, 2);
    s.begin(3);
    s.reuse(3);
    s.write_all();
    assert!(
        s.ledger.retry_after_idle_close(ErrorKind::Reset),
        "the request's retry"
    );
    let done = s.complete(&found("/next"), 4);
    assert_eq!(s.ledger.redirect(&s.ctx, &done), Follow::Hop);
    s.ledger.hop_answered(&s.ctx, s.at(4), true);
    s.ledger.reset_response();
    s.write_all();
    assert!(
        s.ledger.retry_after_idle_close(ErrorKind::Reset),
        "the hop is an exchange of its own: its retry is armed again"
    );
}

#[test]
fn a_pipelined_batch_follows_no_redirect() {
    let mut s = redirecting_slot(2);
    for _ in 0..2 {
        s.state.begin_request();
    }
    assert!(s.ledger.begin_batch(&s.ctx, s.at(0), 2));
    s.connect(0, 1);
    s.write_all();
    let mut two = found("/next");
    two.extend_from_slice(OK);
    let done = s.complete(&two, 2);
    assert_eq!(s.ledger.redirect(&s.ctx, &done), Follow::No);
    assert_eq!(s.books().counters.redirects, 0);
}

/// A slot whose user's one step checks `status == 200` and thinks 40 ms
/// after each answer (a 201 succeeds but fails the check).
fn judging_slot(plan: WorkerPlan) -> Slot {
    use crate::workload::{GroupWork, StepWork, WorkloadSpec};
    use stampede_workload::{CheckSet, ThinkTime};
    use std::sync::Arc;
    let mut plan = plan;
    plan.workload = Some(Arc::new(WorkloadSpec {
        steps: vec![StepWork {
            checks: CheckSet::parse(&["status == 200"]).expect("check"),
            ..StepWork::default()
        }],
        groups: vec![GroupWork {
            steps: 0..1,
            think: Some(ThinkTime {
                min: ms(40),
                max: ms(40),
            }),
            sequential: true,
            ..GroupWork::default()
        }],
        ..WorkloadSpec::default()
    }));
    slot_of(plan)
}

#[test]
fn checks_judge_each_answer_and_the_user_thinks_after_it() {
    let mut s = judging_slot(WorkerPlan::for_tests(REQUEST));
    s.begin(0);
    s.connect(0, 1);
    s.write_all();
    s.answer(OK, 2);
    assert_eq!(s.ledger.pause_until, Some(s.at(42)));
    s.begin(50);
    s.reuse(50);
    s.write_all();
    s.answer(CREATED, 60);
    assert_eq!(s.ledger.pause_until, Some(s.at(100)));
    let books = s.books();
    assert_eq!(books.counters.check_failed, 1);
    let tally: Vec<(u64, u64)> = (books.checks.iter())
        .map(|c| (c.passed, c.failed))
        .collect();
    assert_eq!(tally, [(1, 1)]);
}

#[test]
fn a_failed_request_still_lets_its_user_think() {
    let mut s = judging_slot(WorkerPlan::for_tests(REQUEST));
    s.begin(0);
    s.connect(0, 30);
    s.write_all();
    let before = Instant::now();
    s.ledger.failed(&s.ctx, ErrorKind::Timeout, true);
    let pause = s.ledger.pause_until.expect("a think time");
    assert!(pause >= before + ms(40), "{pause:?}");
    assert!(pause <= Instant::now() + ms(40), "{pause:?}");
}

/// Collects the request log's records in memory.
struct Collect(std::sync::Arc<std::sync::Mutex<Vec<crate::worker::request_log::LoggedRequest>>>);

impl crate::worker::request_log::RequestSink for Collect {
    fn write(
        &mut self,
        request: &crate::worker::request_log::LoggedRequest,
        _: &crate::worker::request_log::RunClock,
    ) -> std::io::Result<()> {
        self.0.lock().unwrap().push(request.clone());
        Ok(())
    }
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failed_request_is_logged_from_its_send_or_its_intended_start() {
    use crate::worker::request_log::{RequestLog, RequestLogOptions, RunClock};
    use std::sync::{Arc, Mutex};
    let plan = WorkerPlan::for_tests(REQUEST);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let clock = RunClock {
        measure_start: plan.measure_start,
        measure_start_wall: std::time::SystemTime::now(),
    };
    let options = RequestLogOptions::new(Box::new(Collect(seen.clone())));
    let mut log = RequestLog::start(options, 1, clock).expect("log");
    let state = Rc::new(WorkerState::for_plan(&plan));
    let ctx = connection_context(&plan, state.clone(), log.worker(0)).expect("context");
    let t0 = plan.measure_start;
    let mut s = Slot {
        ctx,
        state,
        ledger: Ledger::new(false, t0, 0),
        t0,
    };
    // On a connection: sent when the connection was up, at 30 ms.
    s.begin(0);
    s.connect(0, 30);
    s.write_all();
    s.ledger.failed(&s.ctx, ErrorKind::Timeout, true);
    s.ledger.connection_gone(&s.ctx, false);
    // Without one: sent at its intended start, 50 ms.
    s.begin(50);
    s.ledger.reset_response();
    s.ledger.connecting(&s.ctx, s.at(50));
    s.ledger.failed(&s.ctx, ErrorKind::ConnectRefused, false);
    if let Some(log) = &s.ctx.log {
        log.finish();
    }
    drop(s);
    log.finish();
    let seen = seen.lock().unwrap();
    let sent: Vec<Duration> = (seen.iter())
        .map(|r| r.outcome.sent.duration_since(t0))
        .collect();
    assert_eq!(sent, [ms(30), ms(50)]);
}

/// A script (wrk's `request()` returning two pipelined requests, and a
/// `response()` that notes each status) for the batch tests.
#[derive(Debug)]
struct TwoAtOnce(std::sync::Arc<std::sync::Mutex<Vec<u16>>>);

struct TwoAtOnceThread(std::sync::Arc<std::sync::Mutex<Vec<u16>>>);

impl stampede_workload::Script for TwoAtOnce {
    fn thread(
        &self,
        _: usize,
    ) -> Result<Box<dyn stampede_workload::ScriptThread>, stampede_workload::ScriptError> {
        Ok(Box::new(TwoAtOnceThread(self.0.clone())))
    }
}

impl stampede_workload::ScriptThread for TwoAtOnceThread {
    fn builds_requests(&self) -> bool {
        true
    }
    fn fixed_request(&mut self) -> Result<Vec<u8>, stampede_workload::ScriptError> {
        Ok(REQUEST.to_vec())
    }
    fn request(&mut self, out: &mut Vec<u8>) -> Result<usize, stampede_workload::ScriptError> {
        out.extend_from_slice(&REQUEST.repeat(2));
        Ok(2)
    }
    fn has_delay(&self) -> bool {
        false
    }
    fn delay(&mut self) -> Result<Duration, stampede_workload::ScriptError> {
        Ok(Duration::ZERO)
    }
    fn wants_responses(&self) -> bool {
        true
    }
    fn response(
        &mut self,
        response: &stampede_workload::ResponseView<'_>,
    ) -> Result<(), stampede_workload::ScriptError> {
        self.0.lock().unwrap().push(response.status);
        Ok(())
    }
    fn stop_requested(&self) -> bool {
        false
    }
}

#[test]
fn a_scripts_batch_shows_the_script_every_response_of_it() {
    use crate::workload::{GroupWork, StepWork, WorkloadSpec};
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut plan = WorkerPlan::for_tests(REQUEST);
    plan.workload = Some(Arc::new(WorkloadSpec {
        steps: vec![StepWork::default()],
        groups: vec![GroupWork {
            steps: 0..1,
            ..GroupWork::default()
        }],
        script: Some(Arc::new(TwoAtOnce(seen.clone()))),
        ..WorkloadSpec::default()
    }));
    let mut s = slot_of(plan);
    s.state.begin_request();
    assert!(s.ledger.begin(&s.ctx, s.at(0)));
    s.connect(0, 1);
    assert_eq!(
        s.write_all(),
        REQUEST.repeat(2),
        "the script's two requests"
    );
    let mut two = NOT_FOUND.to_vec();
    two.extend_from_slice(OK);
    let first = s.complete(&two, 2);
    assert_eq!(s.ledger.answered(&s.ctx, s.at(2), &first), Reuse::Keep);
    let ResponseProgress::Complete(second) = s.ledger.next_of_batch(s.at(2)).unwrap() else {
        panic!("the second answer is in the same bytes")
    };
    s.ledger.answered(&s.ctx, s.at(2), &second);
    assert_eq!(*seen.lock().unwrap(), [404, 200], "the script saw both");
    let c = s.books().counters;
    assert_eq!((c.success, c.failed_status), (1, 1));
}
