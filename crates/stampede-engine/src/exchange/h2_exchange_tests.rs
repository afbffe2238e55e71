//! The [`H2Exchange`]'s rules without a socket: a test plays the epoll
//! slot's part (counts requests, opens a connection, hands the server's
//! frames over at instants it chooses) and reads the worker's books
//! afterwards, as ledger_tests.rs does for HTTP/1.1.

use crate::exchange::h2_exchange::{H2Exchange, H2Wire};
use crate::plan::h2_request::H2Request;
use crate::plan::worker_plan::WorkerPlan;
use crate::worker::context::{connection_context, ConnectionContext};
use crate::worker::worker_state::WorkerState;
use stampede_metrics::{ErrorKind, Snapshot};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The server's SETTINGS, empty.
const SETTINGS: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0];
/// A SETTINGS frame five octets long: a frame size error.
const BAD_SETTINGS: &[u8] = &[0, 0, 5, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// HEADERS `:status 200` on `stream`, ending it when `end`.
fn ok_head(stream: u8, end: bool) -> Vec<u8> {
    let flags = 0x4 | u8::from(end);
    vec![0, 0, 1, 1, flags, 0, 0, 0, stream, 0x88]
}

/// DATA `body` on `stream` with END_STREAM.
fn last_data(stream: u8, body: &[u8]) -> Vec<u8> {
    let mut frame = vec![0, 0, body.len() as u8, 0, 1, 0, 0, 0, stream];
    frame.extend_from_slice(body);
    frame
}

/// A graceful GOAWAY whose last processed stream is `last`.
fn goaway(last: u8) -> Vec<u8> {
    vec![0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, last, 0, 0, 0, 0]
}

/// RST_STREAM on `stream` with INTERNAL_ERROR.
fn reset(stream: u8) -> Vec<u8> {
    vec![0, 0, 4, 3, 0, 0, 0, 0, stream, 0, 0, 0, 2]
}

struct Slot {
    ctx: ConnectionContext,
    state: Rc<WorkerState>,
    wire: H2Wire,
    exchange: H2Exchange,
    t0: Instant,
}

fn slot(streams: usize) -> Slot {
    let plan = WorkerPlan::for_tests(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    let state = Rc::new(WorkerState::for_plan(&plan));
    let ctx = connection_context(&plan, state.clone(), None).expect("context");
    let request = H2Request {
        method: http::Method::GET,
        uri: "http://t/".parse().expect("a URI"),
        headers: http::HeaderMap::new(),
        body: bytes::Bytes::new(),
    };
    let t0 = plan.measure_start;
    Slot {
        ctx,
        state,
        wire: H2Wire::new(&[request], streams).expect("a request HTTP/2 can send"),
        exchange: H2Exchange::new(0, streams, t0),
        t0,
    }
}

impl Slot {
    fn at(&self, n: u64) -> Instant {
        self.t0 + Duration::from_millis(n)
    }

    /// The worker counts a request intended at `n` ms; the slot begins it.
    fn begin(&mut self, n: u64) {
        self.state.begin_request();
        self.exchange.begin(&self.ctx, self.at(n));
    }

    /// A new connection's handshake runs from `from` to `to` ms.
    fn connect(&mut self, from: u64, to: u64) {
        self.exchange
            .connecting(&self.ctx, &self.wire, self.at(from));
        self.exchange.connected(&self.ctx, self.at(to));
    }

    /// The server's bytes arrive at `n` ms; then what waits starts.
    fn receive(&mut self, bytes: &[u8], n: u64) {
        self.exchange.receive(&self.ctx, bytes, self.at(n));
        self.exchange
            .start_waiting(&self.ctx, &self.wire, self.at(n));
    }

    fn books(&self) -> Snapshot {
        self.state.final_snapshot()
    }
}

#[test]
fn a_stream_is_booked_with_its_status_body_and_clocks() {
    let mut s = slot(4);
    s.begin(0);
    s.connect(0, 10);
    assert!(s.exchange.output().starts_with(b"PRI * HTTP/2.0"));
    s.receive(SETTINGS, 20);
    s.receive(&ok_head(1, false), 30);
    assert_eq!(s.exchange.open_streams(), 1);
    s.receive(&last_data(1, b"hello"), 50);
    assert_eq!(s.exchange.open_streams(), 0);
    let books = s.books();
    let c = &books.counters;
    assert_eq!((c.sent, c.success, c.error_total()), (1, 1, 0));
    assert_eq!(c.bytes_body, 5, "DATA payload, as on the tokio path");
    assert_eq!((c.connections_opened, c.connect_attempts), (1, 1));
    // Latency from the intended instant, service from the send once the
    // connection was up, waiting to the response's head.
    assert_eq!(books.latency.max() / 1000, 50);
    assert_eq!(books.service.max() / 1000, 40);
    assert_eq!(books.waiting.max() / 1000, 20);
    assert_eq!(books.connect.max() / 1000, 10);
}

#[test]
fn one_stream_goes_before_the_servers_settings_then_as_many_as_asked() {
    let mut s = slot(3);
    for _ in 0..3 {
        s.begin(0);
    }
    s.connect(0, 1);
    assert_eq!(s.exchange.open_streams(), 1, "one before SETTINGS");
    assert!(!s.exchange.can_take());
    s.receive(SETTINGS, 2);
    assert_eq!(s.exchange.open_streams(), 3);
    assert!(!s.exchange.can_take(), "--streams 3 reached");
    for stream in [1, 3, 5] {
        s.receive(&ok_head(stream, true), 3);
    }
    assert!(s.exchange.can_take());
    assert_eq!(s.books().counters.success, 3);
}

#[test]
fn a_stream_above_a_goaway_goes_again_once_on_the_next_connection() {
    let mut s = slot(2);
    s.begin(0);
    s.begin(0);
    s.connect(0, 1);
    s.receive(SETTINGS, 2);
    assert_eq!(s.exchange.open_streams(), 2);
    // Stream 3 was never processed: it waits, not an outcome.
    s.receive(&goaway(1), 3);
    assert!(s.exchange.has_waiting());
    assert_eq!(s.exchange.drained(), None, "stream 1 still runs");
    s.receive(&ok_head(1, true), 4);
    assert_eq!(s.exchange.drained(), Some(true), "closed by the server");
    s.exchange.connection_gone(&s.ctx, true);
    s.connect(5, 6);
    // Its second try: unprocessed again, it is booked as the GOAWAY's.
    s.receive(SETTINGS, 7);
    s.receive(&goaway(0), 8);
    let books = s.books();
    let c = &books.counters;
    assert_eq!((c.sent, c.success), (2, 1));
    assert_eq!(c.error(ErrorKind::GoAway), 1);
    assert_eq!((c.connections_opened, c.reconnects), (2, 1));
    assert!(!s.exchange.has_waiting());
}

#[test]
fn a_reset_stream_is_a_stream_reset_and_the_connection_goes_on() {
    let mut s = slot(2);
    s.begin(0);
    s.connect(0, 1);
    s.receive(SETTINGS, 2);
    s.receive(&reset(1), 3);
    assert_eq!(s.books().counters.error(ErrorKind::StreamReset), 1);
    assert_eq!(s.exchange.drained(), None);
    assert!(s.exchange.can_take());
}

#[test]
fn a_bad_frame_ends_the_connection_with_protocol_errors() {
    let mut s = slot(2);
    s.begin(0);
    s.connect(0, 1);
    s.receive(BAD_SETTINGS, 2);
    assert_eq!(
        s.exchange.drained(),
        Some(false),
        "broken, not closed by the server"
    );
    let books = s.books();
    assert_eq!(books.counters.error(ErrorKind::Protocol), 1);
    assert_eq!(books.counters.sent, 1);
}

#[test]
fn the_transport_closing_under_a_stream_is_a_reset_and_an_overdue_stream_a_timeout() {
    let mut s = slot(2);
    s.begin(0);
    s.begin(0);
    s.connect(0, 1);
    s.receive(SETTINGS, 2);
    // The second stream's response is overdue (the plan's timeout).
    let late = s.at(2) + s.ctx.timeout;
    s.receive(&ok_head(1, true), 3);
    s.exchange.time_out_streams(&s.ctx, late);
    s.begin(0);
    s.exchange.start_waiting(&s.ctx, &s.wire, late);
    assert!(s.exchange.transport_closed(&s.ctx, ErrorKind::Reset));
    // (The books are read once: a snapshot takes what it reports.)
    let books = s.books();
    assert_eq!(books.counters.error(ErrorKind::Timeout), 1);
    assert_eq!(books.counters.error(ErrorKind::Reset), 1);
    assert_eq!((books.counters.sent, books.counters.success), (3, 1));
}

#[test]
fn a_failed_connect_fails_only_the_request_it_was_opened_for() {
    let mut s = slot(4);
    s.begin(0);
    s.begin(0);
    s.exchange.connecting(&s.ctx, &s.wire, s.at(0));
    s.exchange.connect_failed(&s.ctx, ErrorKind::ConnectRefused);
    assert!(s.exchange.retry_at().is_some(), "the slot backs off");
    assert!(s.exchange.has_waiting(), "the other waits for a connection");
    assert_eq!(s.books().counters.error(ErrorKind::ConnectRefused), 1);
}
