//! A tiny blocking driver for the codec: one std::net TCP connection at a
//! time (h2c with prior knowledge), up to `streams` requests in flight, the
//! socket read into [`Connection::receive`] and [`Connection::output`]
//! written back. Unprocessed streams (GOAWAY, REFUSED_STREAM) are retried on
//! a new connection, as the engine does. Every loop is bounded: a read times
//! out after 10 s, and at most 20 connections are opened.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::Bytes;
use stampede_h2::{Config, Connection, End, Event, RequestBlock};

/// What a run saw, counted from the codec's events.
#[derive(Debug, Default)]
pub struct Tally {
    /// Streams that ended [`End::Finished`], by status.
    pub finished_by_status: BTreeMap<u16, u64>,
    /// Body octets read.
    pub body_bytes: u64,
    /// Streams that ended otherwise (reset, failed).
    pub other_ends: Vec<End>,
    /// Streams retried after [`End::Unprocessed`].
    pub retried: u64,
    /// Connections opened.
    pub connections: u64,
    /// The most streams open at once.
    pub max_open: usize,
    /// Finished responses by body size (octets → responses).
    pub body_sizes: BTreeMap<u64, u64>,
    /// Responses whose content-length was not what the body came to.
    pub length_mismatches: u64,
    statuses: BTreeMap<u32, u16>,
    lengths: BTreeMap<u32, (Option<u64>, u64)>,
}

impl Tally {
    /// Streams that finished, any status.
    pub fn finished(&self) -> u64 {
        self.finished_by_status.values().sum()
    }

    fn event(&mut self, e: Event<'_>, pending: &mut u64) {
        match e {
            Event::Response { stream, head } => {
                self.statuses.insert(stream, head.status);
                self.lengths.insert(stream, (head.content_length, 0));
            }
            Event::Data { stream, data } => {
                self.body_bytes += data.len() as u64;
                if let Some(l) = self.lengths.get_mut(&stream) {
                    l.1 += data.len() as u64;
                }
            }
            Event::Ended { stream, end } => {
                let status = self.statuses.remove(&stream);
                let length = self.lengths.remove(&stream);
                match end {
                    End::Finished => {
                        *self
                            .finished_by_status
                            .entry(status.unwrap_or(0))
                            .or_default() += 1;
                        if let Some((want, got)) = length {
                            *self.body_sizes.entry(got).or_default() += 1;
                            self.length_mismatches += u64::from(want.is_some_and(|w| w != got));
                        }
                    }
                    End::Unprocessed => {
                        self.retried += 1;
                        *pending += 1;
                    }
                    other => self.other_ends.push(other),
                }
            }
            Event::SettingsAcked | Event::Trailers { .. } | Event::GoAway { .. } => {}
        }
    }
}

/// Sends `total` requests (`request`, with `body` when given) to `addr`,
/// `streams` at a time.
pub fn run(
    addr: SocketAddr,
    request: &RequestBlock,
    body: Option<Bytes>,
    total: u64,
    streams: usize,
    config: &Config,
) -> Tally {
    let mut tally = Tally::default();
    let mut pending = total;
    let mut buf = vec![0u8; 64 << 10];
    while pending > 0 {
        tally.connections += 1;
        assert!(
            tally.connections <= 20,
            "more than 20 connections for {total} requests: {tally:?}"
        );
        let mut socket = TcpStream::connect(addr).expect("connect");
        socket.set_nodelay(true).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut conn = Connection::new(config.clone());
        loop {
            while pending > 0 && conn.open_streams() < streams && conn.can_start() {
                conn.start(request, body.clone())
                    .expect("can_start said yes");
                pending -= 1;
            }
            tally.max_open = tally.max_open.max(conn.open_streams());
            let out = conn.output();
            if !out.is_empty() {
                socket.write_all(out).expect("write");
                let n = out.len();
                conn.consume_output(n);
            }
            if conn.open_streams() == 0 && (pending == 0 || !conn.can_start()) {
                break;
            }
            let n = socket
                .read(&mut buf)
                .expect("the server answers within 10 s");
            if n == 0 {
                conn.closed(&mut |e| tally.event(e, &mut pending));
                break;
            }
            if let Err(e) = conn.receive(&buf[..n], &mut |e| tally.event(e, &mut pending)) {
                panic!("the server broke the protocol: {e}");
            }
        }
    }
    tally
}
