//! Streamed responses (`--sse`): one request is one stream, and
//! what matters is when its events came, not one latency per response.
//! [`StreamBooks`] is what workers gather (in their [`crate::Snapshot`],
//! absent from runs without `--sse`, so they pay nothing), and
//! [`StreamResult`] is its part of the result file (`stream`), with its
//! histograms for a lossless merge of agents' results.

use crate::{decode_histogram, encode_histogram, new_latency_histogram, record_latency};
use crate::{LatencyHistogram, MetricsError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What one stream showed, booked once it ended.
#[derive(Debug, Clone, Copy)]
pub struct StreamFigures<'a> {
    /// From the request's send to the first byte of the body.
    pub first_byte: Option<Duration>,
    /// From the request's send to the first event.
    pub first_event: Option<Duration>,
    /// The gaps between its events, in µs (events in one read are 0 apart).
    pub gaps_us: &'a [u64],
    /// Events: server-sent events, else the chunks of a chunked body, else
    /// the reads of the body.
    pub events: u64,
    /// From the request's send to the stream's end.
    pub length: Duration,
    /// Connections made again to go on with the stream (`--sse-reconnect`).
    pub reconnects: u64,
    /// Network errors the stream was connected again after (counted in
    /// `reconnects` too).
    pub errors: u64,
}

/// Streams gathered by a worker, or merged.
#[derive(Debug, Clone)]
pub struct StreamBooks {
    /// Streams that ended.
    pub streams: u64,
    /// Events over all streams.
    pub events: u64,
    /// Connections made again to go on with a stream (`--sse-reconnect`).
    pub reconnects: u64,
    /// Network errors a stream was connected again after.
    pub errors: u64,
    /// From a request's send to the first byte of its body, µs.
    pub first_byte: LatencyHistogram,
    /// From a request's send to its first event, µs.
    pub first_event: LatencyHistogram,
    /// Between consecutive events of a stream, µs.
    pub gap: LatencyHistogram,
    /// From a request's send to its stream's end, µs.
    pub length: LatencyHistogram,
}

impl Default for StreamBooks {
    fn default() -> Self {
        StreamBooks {
            streams: 0,
            events: 0,
            reconnects: 0,
            errors: 0,
            first_byte: new_latency_histogram(),
            first_event: new_latency_histogram(),
            gap: new_latency_histogram(),
            length: new_latency_histogram(),
        }
    }
}

fn micros(d: Duration) -> u64 {
    d.as_micros() as u64
}

impl StreamBooks {
    /// Books one stream that ended.
    pub fn record(&mut self, s: &StreamFigures) {
        self.streams += 1;
        self.events += s.events;
        self.reconnects += s.reconnects;
        self.errors += s.errors;
        if let Some(d) = s.first_byte {
            record_latency(&mut self.first_byte, micros(d));
        }
        if let Some(d) = s.first_event {
            record_latency(&mut self.first_event, micros(d));
        }
        for &gap in s.gaps_us {
            record_latency(&mut self.gap, gap);
        }
        record_latency(&mut self.length, micros(s.length));
    }

    /// Adds another worker's or interval's books in (lossless).
    pub fn merge(&mut self, other: &StreamBooks) {
        self.streams += other.streams;
        self.events += other.events;
        self.reconnects += other.reconnects;
        self.errors += other.errors;
        for (mine, theirs) in [
            (&mut self.first_byte, &other.first_byte),
            (&mut self.first_event, &other.first_event),
            (&mut self.gap, &other.gap),
            (&mut self.length, &other.length),
        ] {
            if !theirs.is_empty() {
                mine.add(theirs)
                    .expect("histograms share fixed bounds, so adding cannot fail");
            }
        }
    }
}

/// A distribution in four figures (µs): the `stream.*` timings' shape,
/// and what an SLO on them reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamSummary {
    /// How many values.
    pub count: u64,
    /// Median, µs.
    pub p50_us: u64,
    /// 99th percentile, µs.
    pub p99_us: u64,
    /// Highest, µs.
    pub max_us: u64,
}

impl StreamSummary {
    /// The summary of a histogram of µs: the one place a `stream.*` or
    /// `websocket.*` summary is read from its histogram, for the result
    /// and for what shows a run while it goes (`--metrics`, the live view).
    pub fn of(h: &LatencyHistogram) -> StreamSummary {
        if h.is_empty() {
            return StreamSummary::default();
        }
        StreamSummary {
            count: h.len(),
            p50_us: h.value_at_quantile(0.5),
            p99_us: h.value_at_quantile(0.99),
            max_us: h.max(),
        }
    }
}

/// The streams' histograms, HDR V2 deflate, base64 (lossless).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamHistograms {
    /// Of `first_byte`.
    pub first_byte: String,
    /// Of `first_event`.
    pub first_event: String,
    /// Of `gap`.
    pub gap: String,
    /// Of `length`.
    pub length: String,
}

/// The result file's `stream`: present when the run watched streams (`--sse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    /// Streams that ended (each one request, with its reconnects).
    pub streams: u64,
    /// Events seen in all streams.
    pub events: u64,
    /// Events per second of the run.
    pub events_per_s: f64,
    /// Connections made again to go on with a stream (`--sse-reconnect`).
    pub reconnects: u64,
    /// Network errors a stream was connected again after (`--sse-reconnect`;
    /// each is in `reconnects` too). Absent from files written before it.
    #[serde(default)]
    pub errors: u64,
    /// From the send to the first body byte, per stream.
    pub first_byte: StreamSummary,
    /// From the send to the first event, per stream.
    pub first_event: StreamSummary,
    /// Between consecutive events of a stream.
    pub gap: StreamSummary,
    /// From the send to the stream's end, per stream.
    pub length: StreamSummary,
    /// The histograms behind the summaries, for a lossless merge.
    pub histograms: StreamHistograms,
}

impl StreamResult {
    /// The result of `books` over a run of `elapsed`.
    pub fn of(books: &StreamBooks, elapsed: Duration) -> StreamResult {
        StreamResult {
            streams: books.streams,
            events: books.events,
            events_per_s: crate::per_second(books.events, elapsed),
            reconnects: books.reconnects,
            errors: books.errors,
            first_byte: StreamSummary::of(&books.first_byte),
            first_event: StreamSummary::of(&books.first_event),
            gap: StreamSummary::of(&books.gap),
            length: StreamSummary::of(&books.length),
            histograms: StreamHistograms {
                first_byte: encode_histogram(&books.first_byte),
                first_event: encode_histogram(&books.first_event),
                gap: encode_histogram(&books.gap),
                length: encode_histogram(&books.length),
            },
        }
    }

    /// The books this result was made of, read back from its histograms.
    pub fn books(&self) -> Result<StreamBooks, MetricsError> {
        Ok(StreamBooks {
            streams: self.streams,
            events: self.events,
            reconnects: self.reconnects,
            errors: self.errors,
            first_byte: decode_histogram(&self.histograms.first_byte)?,
            first_event: decode_histogram(&self.histograms.first_event)?,
            gap: decode_histogram(&self.histograms.gap)?,
            length: decode_histogram(&self.histograms.length)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_book_their_gaps_and_merge_losslessly() {
        let mut a = StreamBooks::default();
        a.record(&StreamFigures {
            first_byte: Some(Duration::from_micros(300)),
            first_event: Some(Duration::from_micros(400)),
            gaps_us: &[50_000, 50_000, 1_000_000],
            events: 4,
            length: Duration::from_millis(1_200),
            reconnects: 2,
            errors: 1,
        });
        let mut b = StreamBooks::default();
        b.record(&StreamFigures {
            first_byte: None,
            first_event: None,
            gaps_us: &[],
            events: 0,
            length: Duration::from_millis(5),
            reconnects: 0,
            errors: 0,
        });
        a.merge(&b);
        let r = StreamResult::of(&a, Duration::from_secs(2));
        assert_eq!((r.streams, r.events, r.reconnects, r.errors), (2, 4, 2, 1));
        assert_eq!(r.events_per_s, 2.0);
        assert_eq!(r.gap.count, 3);
        assert!(r.gap.p50_us.abs_diff(50_000) < 100, "{:?}", r.gap);
        assert!(r.gap.max_us.abs_diff(1_000_000) < 1_000, "{:?}", r.gap);
        assert_eq!(r.first_event.count, 1);
        let back = StreamResult::of(&r.books().unwrap(), Duration::from_secs(2));
        assert_eq!(back, r);
    }
}
