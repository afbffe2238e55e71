//! The WebSocket and streams series of `--metrics` and `--remote-write`:
//! messages and bytes each way, drops and close codes, the round trip's and
//! the setup's quantiles (`stampede_ws_*`); streams, events and reconnects,
//! the gaps' and the first event's quantiles (`stampede_stream_*`). Read
//! from the books the workers keep in their snapshots, summarised by
//! [`StreamSummary::of`], the function the result's `websocket.rtt` and
//! `stream.gap` come from; absent from runs without them.

use crate::metrics_family::{Family, Labels, Values};
use stampede_metrics::{StreamBooks, StreamSummary, WebSocketBooks};
use std::collections::BTreeMap;

/// A WebSocket run's figures so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebSocketReading {
    /// Data messages written.
    pub messages_sent: u64,
    /// Data messages read.
    pub messages_received: u64,
    /// Bytes written once upgraded.
    pub bytes_sent: u64,
    /// Bytes read once upgraded.
    pub bytes_received: u64,
    /// Connections upgraded.
    pub connections: u64,
    /// Connections the server ended while the client meant to use them.
    pub dropped: u64,
    /// Pings answered with a pong.
    pub pings_answered: u64,
    /// Close codes the server sent, counted.
    pub close_codes: BTreeMap<u16, u64>,
    /// From a message's intended send to its reply.
    pub rtt: StreamSummary,
    /// From a connection's start to its upgrade's answer.
    pub setup: StreamSummary,
}

impl WebSocketReading {
    /// The reading of the books so far.
    pub fn of(books: &WebSocketBooks) -> WebSocketReading {
        WebSocketReading {
            messages_sent: books.messages_sent,
            messages_received: books.messages_received,
            bytes_sent: books.bytes_sent,
            bytes_received: books.bytes_received,
            connections: books.connections,
            dropped: books.dropped,
            pings_answered: books.pings_answered,
            close_codes: books.close_codes.clone(),
            rtt: StreamSummary::of(&books.rtt),
            setup: StreamSummary::of(&books.setup),
        }
    }
}

/// Streams' figures so far (`--sse`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamReading {
    /// Streams that ended.
    pub streams: u64,
    /// Events over all streams.
    pub events: u64,
    /// Connections made again to go on with a stream.
    pub reconnects: u64,
    /// From a request's send to its first event.
    pub first_event: StreamSummary,
    /// Between consecutive events of a stream.
    pub gap: StreamSummary,
}

impl StreamReading {
    /// The reading of the books so far.
    pub fn of(books: &StreamBooks) -> StreamReading {
        StreamReading {
            streams: books.streams,
            events: books.events,
            reconnects: books.reconnects,
            first_event: StreamSummary::of(&books.first_event),
            gap: StreamSummary::of(&books.gap),
        }
    }
}

/// A summary's points as `quantile` gauges in seconds: 0.5, 0.99 and 1
/// (the maximum); none before the first value.
fn quantiles(s: &StreamSummary) -> Vec<(Labels, f64)> {
    if s.count == 0 {
        return Vec::new();
    }
    [("0.5", s.p50_us), ("0.99", s.p99_us), ("1", s.max_us)]
        .into_iter()
        .map(|(q, us)| (vec![("quantile", q.to_string())], us as f64 / 1e6))
        .collect()
}

fn counter(name: &'static str, help: &'static str, value: u64) -> Family {
    Family {
        name,
        help,
        values: Values::Counter(vec![(Vec::new(), value)]),
    }
}

fn gauge(name: &'static str, help: &'static str, values: Vec<(Labels, f64)>) -> Family {
    Family {
        name,
        help,
        values: Values::Gauge(values),
    }
}

/// The WebSocket families, when the run is one.
pub fn websocket_families(ws: &WebSocketReading) -> Vec<Family> {
    let codes = (ws.close_codes.iter())
        .map(|(code, count)| (vec![("code", code.to_string())], *count))
        .collect();
    vec![
        counter(
            "stampede_ws_messages_sent",
            "WebSocket data messages written",
            ws.messages_sent,
        ),
        counter(
            "stampede_ws_messages_received",
            "WebSocket data messages read",
            ws.messages_received,
        ),
        counter(
            "stampede_ws_bytes_sent",
            "WebSocket bytes written once upgraded (frames)",
            ws.bytes_sent,
        ),
        counter(
            "stampede_ws_bytes_received",
            "WebSocket bytes read once upgraded (frames)",
            ws.bytes_received,
        ),
        counter(
            "stampede_ws_connections",
            "WebSocket connections upgraded",
            ws.connections,
        ),
        counter(
            "stampede_ws_dropped",
            "WebSocket connections the server ended while the client meant to use them",
            ws.dropped,
        ),
        counter(
            "stampede_ws_pings_answered",
            "WebSocket pings from the server answered with a pong",
            ws.pings_answered,
        ),
        Family {
            name: "stampede_ws_close_codes",
            help: "WebSocket close codes the server sent, by code (1006: gone without a close)",
            values: Values::Counter(codes),
        },
        gauge(
            "stampede_ws_rtt_quantile_seconds",
            "WebSocket round trip from a message's intended send to its reply, so far: \
             quantiles 0.5, 0.99 and 1 (the maximum)",
            quantiles(&ws.rtt),
        ),
        gauge(
            "stampede_ws_setup_quantile_seconds",
            "WebSocket connection setup (TCP, TLS, upgrade), so far: quantiles 0.5, 0.99 and 1",
            quantiles(&ws.setup),
        ),
    ]
}

/// The streams' families, when the run watches streams.
pub fn stream_families(stream: &StreamReading) -> Vec<Family> {
    vec![
        counter(
            "stampede_stream_streams",
            "Streams that ended (--sse)",
            stream.streams,
        ),
        counter(
            "stampede_stream_events",
            "Events seen in all streams",
            stream.events,
        ),
        counter(
            "stampede_stream_reconnects",
            "Connections made again to go on with a stream (--sse-reconnect)",
            stream.reconnects,
        ),
        gauge(
            "stampede_stream_gap_quantile_seconds",
            "Gaps between consecutive events of a stream, so far: quantiles 0.5, 0.99 and 1 \
             (the maximum)",
            quantiles(&stream.gap),
        ),
        gauge(
            "stampede_stream_first_event_quantile_seconds",
            "From a stream's request to its first event, so far: quantiles 0.5, 0.99 and 1",
            quantiles(&stream.first_event),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_quantiles_are_the_results_summary_in_seconds() {
        let mut books = WebSocketBooks {
            messages_sent: 3,
            messages_received: 2,
            ..Default::default()
        };
        books.record_rtt(Duration::from_millis(2));
        books.record_rtt(Duration::from_millis(40));
        books.close_codes.insert(1000, 2);
        let reading = WebSocketReading::of(&books);
        let result = stampede_metrics::WebSocketResult::of(&books, Duration::from_secs(1));
        assert_eq!(reading.rtt, result.rtt);
        let families = websocket_families(&reading);
        let rtt = families
            .iter()
            .find(|f| f.name == "stampede_ws_rtt_quantile_seconds")
            .expect("the rtt family");
        let Values::Gauge(points) = &rtt.values else {
            panic!("a gauge")
        };
        assert_eq!(points.len(), 3);
        assert_eq!(points[1].1, result.rtt.p99_us as f64 / 1e6);
        assert_eq!(points[2].1, result.rtt.max_us as f64 / 1e6);
        let setup = families
            .iter()
            .find(|f| f.name == "stampede_ws_setup_quantile_seconds")
            .expect("the setup family");
        assert!(
            matches!(&setup.values, Values::Gauge(points) if points.is_empty()),
            "no connection yet: no quantile"
        );
    }
}
