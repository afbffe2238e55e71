//! WebSocket runs (`ws://`, `wss://`): messages each way, their round
//! trips, bytes each way, how long a connection took to be ready (TCP,
//! TLS and the upgrade), close codes, pings answered and connections the
//! server dropped, the subprotocols servers chose and whether
//! `permessage-deflate` was agreed. [`WebSocketBooks`] is what workers gather (in their
//! [`crate::Snapshot`], absent from HTTP runs, so those pay nothing);
//! [`WebSocketResult`] is its part of the result file (`websocket`), with
//! its histograms for a lossless merge of agents' results.
//!
//! Each message's round trip is also booked as one request (its latency
//! from the intended send), so the run's latency, its percentiles and
//! `-n` read messages; `websocket.rtt` is the same histogram, summarised.

use crate::{decode_histogram, encode_histogram, new_latency_histogram, record_latency};
use crate::{LatencyHistogram, MetricsError, StreamSummary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// WebSocket figures gathered by a worker, or merged.
#[derive(Debug, Clone)]
pub struct WebSocketBooks {
    /// Data messages written.
    pub messages_sent: u64,
    /// Data messages read.
    pub messages_received: u64,
    /// Bytes written once upgraded (frames, with their headers and masks).
    pub bytes_sent: u64,
    /// Bytes read once upgraded (frames, with their headers).
    pub bytes_received: u64,
    /// Pings the server sent that were answered with a pong.
    pub pings_answered: u64,
    /// Connections upgraded.
    pub connections: u64,
    /// Connections the server ended (a close frame, or the TCP connection
    /// gone) while the client still meant to use them.
    pub dropped: u64,
    /// Close codes the server sent, counted; a close with no code counts
    /// under 1005 (RFC 6455 §7.1.5), a connection gone without a close
    /// under 1006.
    pub close_codes: BTreeMap<u16, u64>,
    /// From the intended send of a message to its reply, µs.
    pub rtt: LatencyHistogram,
    /// From the start of a connection to its upgrade's answer, µs.
    pub setup: LatencyHistogram,
    /// Connections by the subprotocol the server chose
    /// (`--ws-subprotocol`); those with none are not counted.
    pub subprotocols: BTreeMap<String, u64>,
    /// Connections that agreed `permessage-deflate` (`--ws-deflate`).
    pub deflated: u64,
    /// Connections whose server answered `--ws-deflate`'s offer with no
    /// extension: their messages went uncompressed.
    pub deflate_refused: u64,
}

impl Default for WebSocketBooks {
    fn default() -> Self {
        WebSocketBooks {
            messages_sent: 0,
            messages_received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            pings_answered: 0,
            connections: 0,
            dropped: 0,
            close_codes: BTreeMap::new(),
            rtt: new_latency_histogram(),
            setup: new_latency_histogram(),
            subprotocols: BTreeMap::new(),
            deflated: 0,
            deflate_refused: 0,
        }
    }
}

impl WebSocketBooks {
    /// Books a message's round trip.
    pub fn record_rtt(&mut self, rtt: Duration) {
        record_latency(&mut self.rtt, rtt.as_micros() as u64);
    }

    /// Books a connection upgraded after `setup`.
    pub fn record_setup(&mut self, setup: Duration) {
        self.connections += 1;
        record_latency(&mut self.setup, setup.as_micros() as u64);
    }

    /// Adds another worker's or interval's books in (lossless).
    pub fn merge(&mut self, other: &WebSocketBooks) {
        self.messages_sent += other.messages_sent;
        self.messages_received += other.messages_received;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.pings_answered += other.pings_answered;
        self.connections += other.connections;
        self.dropped += other.dropped;
        for (code, count) in &other.close_codes {
            *self.close_codes.entry(*code).or_default() += count;
        }
        for (name, count) in &other.subprotocols {
            *self.subprotocols.entry(name.clone()).or_default() += count;
        }
        self.deflated += other.deflated;
        self.deflate_refused += other.deflate_refused;
        for (mine, theirs) in [(&mut self.rtt, &other.rtt), (&mut self.setup, &other.setup)] {
            if !theirs.is_empty() {
                mine.add(theirs)
                    .expect("histograms share fixed bounds, so adding cannot fail");
            }
        }
    }
}

/// The WebSocket histograms, HDR V2 deflate, base64 (lossless).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebSocketHistograms {
    /// Of `rtt`.
    pub rtt: String,
    /// Of `setup`.
    pub setup: String,
}

/// The result file's `websocket`: present for a `ws://` or `wss://` run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebSocketResult {
    /// Data messages written.
    pub messages_sent: u64,
    /// Data messages read.
    pub messages_received: u64,
    /// Messages written per second of the run.
    pub sent_per_s: f64,
    /// Messages read per second of the run.
    pub received_per_s: f64,
    /// Bytes written once upgraded.
    pub bytes_sent: u64,
    /// Bytes read once upgraded.
    pub bytes_received: u64,
    /// From a message's intended send to its reply.
    pub rtt: StreamSummary,
    /// From a connection's start to its upgrade's answer (TCP, TLS, upgrade).
    pub setup: StreamSummary,
    /// Connections upgraded.
    pub connections: u64,
    /// Connections the server ended while the client meant to use them.
    pub dropped: u64,
    /// Close codes the server sent, by code (1006: gone without a close).
    pub close_codes: BTreeMap<String, u64>,
    /// Pings answered with a pong.
    pub pings_answered: u64,
    /// Connections by the subprotocol the server chose (`--ws-subprotocol`);
    /// absent when none chose one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub subprotocols: BTreeMap<String, u64>,
    /// Connections that agreed `permessage-deflate` (`--ws-deflate`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deflated: u64,
    /// Connections whose server refused `--ws-deflate` (no extension in
    /// its answer): they ran uncompressed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deflate_refused: u64,
    /// The histograms behind the summaries, for a lossless merge.
    pub histograms: WebSocketHistograms,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl WebSocketResult {
    /// The result of `books` over a run of `elapsed`.
    pub fn of(books: &WebSocketBooks, elapsed: Duration) -> WebSocketResult {
        WebSocketResult {
            messages_sent: books.messages_sent,
            messages_received: books.messages_received,
            sent_per_s: crate::per_second(books.messages_sent, elapsed),
            received_per_s: crate::per_second(books.messages_received, elapsed),
            bytes_sent: books.bytes_sent,
            bytes_received: books.bytes_received,
            rtt: StreamSummary::of(&books.rtt),
            setup: StreamSummary::of(&books.setup),
            connections: books.connections,
            dropped: books.dropped,
            close_codes: (books.close_codes.iter())
                .map(|(code, count)| (code.to_string(), *count))
                .collect(),
            pings_answered: books.pings_answered,
            subprotocols: books.subprotocols.clone(),
            deflated: books.deflated,
            deflate_refused: books.deflate_refused,
            histograms: WebSocketHistograms {
                rtt: encode_histogram(&books.rtt),
                setup: encode_histogram(&books.setup),
            },
        }
    }

    /// The books this result was made of, read back from its histograms.
    pub fn books(&self) -> Result<WebSocketBooks, MetricsError> {
        Ok(WebSocketBooks {
            messages_sent: self.messages_sent,
            messages_received: self.messages_received,
            bytes_sent: self.bytes_sent,
            bytes_received: self.bytes_received,
            pings_answered: self.pings_answered,
            connections: self.connections,
            dropped: self.dropped,
            close_codes: (self.close_codes.iter())
                .filter_map(|(code, count)| Some((code.parse().ok()?, *count)))
                .collect(),
            rtt: decode_histogram(&self.histograms.rtt)?,
            setup: decode_histogram(&self.histograms.setup)?,
            subprotocols: self.subprotocols.clone(),
            deflated: self.deflated,
            deflate_refused: self.deflate_refused,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websocket_books_merge_losslessly_and_read_back() {
        let mut a = WebSocketBooks {
            messages_sent: 3,
            messages_received: 2,
            bytes_sent: 33,
            bytes_received: 14,
            pings_answered: 1,
            dropped: 1,
            ..Default::default()
        };
        a.close_codes.insert(1001, 1);
        a.record_rtt(Duration::from_micros(500));
        a.record_rtt(Duration::from_micros(700));
        a.record_setup(Duration::from_micros(900));
        let mut b = WebSocketBooks {
            messages_sent: 1,
            messages_received: 1,
            ..Default::default()
        };
        b.close_codes.insert(1001, 2);
        b.close_codes.insert(1006, 1);
        b.record_rtt(Duration::from_millis(20));
        a.merge(&b);
        let r = WebSocketResult::of(&a, Duration::from_secs(2));
        assert_eq!((r.messages_sent, r.messages_received), (4, 3));
        assert_eq!((r.sent_per_s, r.received_per_s), (2.0, 1.5));
        assert_eq!((r.connections, r.dropped, r.pings_answered), (1, 1, 1));
        assert_eq!(r.close_codes["1001"], 3);
        assert_eq!(r.close_codes["1006"], 1);
        assert_eq!(r.rtt.count, 3);
        assert!(r.rtt.max_us.abs_diff(20_000) < 100, "{:?}", r.rtt);
        let back = WebSocketResult::of(&r.books().unwrap(), Duration::from_secs(2));
        assert_eq!(back, r);
    }
}
