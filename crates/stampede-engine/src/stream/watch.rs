//! What `--sse` watches of a response body: fed by HTTP/1.1's capture as
//! the body passes through the parser (every HTTP/1.1 event loop), and by
//! an HTTP/2 stream's DATA frames (drive/h2/h2_exchange.rs):
//! when the body's first byte came, when each event came and the gaps
//! between them. A `text/event-stream` body's events are its server-sent
//! events (event_parser.rs); any other body's are its chunks when it is chunked,
//! else its reads. A run without `--sse` has none of this.
//!
//! With `--sse-reconnect` one stream spans its reconnections: its events,
//! first event and gaps are the stream's, but the wait across a
//! reconnection is no gap between events (the server ended the response;
//! the client chose the wait, `retry:`), so the first event after one
//! starts the gaps afresh.

use super::event_parser::EventParser;
use std::time::Instant;

/// One stream's clocks and counts, kept across its reconnections.
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamWatch {
    events_parser: EventParser,
    /// This response's body is `text/event-stream`.
    sse: bool,
    first_body: Option<Instant>,
    first_event: Option<Instant>,
    last_event: Option<Instant>,
    events: u64,
    /// Gaps between consecutive events, µs.
    gaps_us: Vec<u64>,
    /// Times the stream was connected again (`--sse-reconnect`).
    reconnects: u64,
    /// Network errors it was connected again after.
    errors: u64,
    /// A response of this stream was an event stream: a network error
    /// later is reconnected after, as a browser's `EventSource` does.
    opened: bool,
}

impl StreamWatch {
    /// A new stream: clocks and counts emptied, memory kept. The last
    /// event ID is kept too: a reconnection sends it back.
    pub(crate) fn clear(&mut self) {
        self.events_parser.restart();
        self.sse = false;
        self.first_body = None;
        self.first_event = None;
        self.last_event = None;
        self.events = 0;
        self.gaps_us.clear();
        self.reconnects = 0;
        self.errors = 0;
        self.opened = false;
    }

    /// The stream goes on over a new request (`--sse-reconnect`): counted,
    /// and the next event's gap is not measured from the last one.
    pub(crate) fn reconnected(&mut self) {
        self.reconnects += 1;
        self.last_event = None;
        // Until the next head says so.
        self.sse = false;
    }

    /// The stream goes on over a new request after a network error cut
    /// it (`--sse-reconnect`): a reconnection, and the error counted.
    pub(crate) fn broken(&mut self) {
        self.errors += 1;
        self.reconnected();
    }

    /// Whether a response of this stream was `text/event-stream`: one a
    /// network error cuts is reconnected.
    pub(crate) fn was_event_stream(&self) -> bool {
        self.opened
    }

    /// Network errors the stream was connected again after.
    pub(crate) fn errors(&self) -> u64 {
        self.errors
    }

    /// Whether the last response's body was `text/event-stream` (only
    /// such a stream is reconnected, as a browser does).
    pub(crate) fn is_event_stream(&self) -> bool {
        self.sse
    }

    /// The stream's last event ID (empty: none), sent as `Last-Event-ID`.
    pub(crate) fn last_event_id(&self) -> &[u8] {
        self.events_parser.last_event_id()
    }

    /// The reconnection time the stream asked for with `retry:`, in ms.
    pub(crate) fn retry_ms(&self) -> Option<u64> {
        self.events_parser.retry_ms()
    }

    /// Times the stream was connected again.
    pub(crate) fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// An HTTP/1.1 response's head came: is it an event stream?
    pub(crate) fn head(&mut self, head: &[u8]) {
        self.begin(is_event_stream(head));
    }

    /// A response's head came (`event_stream`: its `Content-Type` is
    /// `text/event-stream`, [`is_event_stream_type`]); its body follows.
    pub(crate) fn begin(&mut self, event_stream: bool) {
        self.sse = event_stream;
        self.opened |= event_stream;
        self.events_parser.restart();
    }

    /// Body bytes came; `ends_piece`: they end a chunk (chunked) or a
    /// read (other framings).
    pub(crate) fn body(&mut self, data: &[u8], ends_piece: bool) {
        if data.is_empty() && !ends_piece {
            return;
        }
        let now = Instant::now();
        self.first_body.get_or_insert(now);
        let events = if self.sse {
            self.events_parser.feed(data)
        } else {
            u64::from(ends_piece)
        };
        for _ in 0..events {
            if let Some(last) = self.last_event {
                self.gaps_us
                    .push(now.saturating_duration_since(last).as_micros() as u64);
            }
            self.last_event = Some(now);
        }
        if events > 0 {
            self.first_event.get_or_insert(now);
            self.events += events;
        }
    }

    pub(crate) fn first_body(&self) -> Option<Instant> {
        self.first_body
    }

    pub(crate) fn first_event(&self) -> Option<Instant> {
        self.first_event
    }

    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    pub(crate) fn gaps_us(&self) -> &[u64] {
        &self.gaps_us
    }
}

/// Whether an HTTP/1.1 response head says `Content-Type: text/event-stream`.
fn is_event_stream(head: &[u8]) -> bool {
    let name = b"content-type:";
    head.split(|&b| b == b'\n').any(|line| {
        let Some(start) = line.get(..name.len()) else {
            return false;
        };
        start.eq_ignore_ascii_case(name) && is_event_stream_type(&line[name.len()..])
    })
}

/// Whether a `Content-Type` value is `text/event-stream` (parameters
/// after it, such as a charset, allowed): the one rule of both protocols.
pub(crate) fn is_event_stream_type(value: &[u8]) -> bool {
    value
        .trim_ascii_start()
        .get(..17)
        .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_streams_count_events_other_bodies_their_pieces() {
        let mut w = StreamWatch::default();
        w.head(b"HTTP/1.1 200 OK\r\ncontent-type: Text/Event-Stream; charset=utf-8\r\n\r\n");
        w.body(b"data: 1\n\nda", true);
        w.body(b"ta: 2\n\ndata: 3\n\n", true);
        assert_eq!(w.events(), 3);
        assert_eq!(w.gaps_us().len(), 2);
        assert!(w.first_event().is_some() && w.first_body().is_some());
        w.clear();
        w.head(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
        w.body(b"half a chunk", false);
        assert_eq!(w.events(), 0);
        w.body(b"the rest", true);
        w.body(b"another", true);
        assert_eq!((w.events(), w.gaps_us().len()), (2, 1));
    }

    #[test]
    fn a_reconnection_keeps_the_streams_figures_but_measures_no_gap_across_it() {
        let mut w = StreamWatch::default();
        w.head(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
        w.body(b"retry: 10\nid: 1\ndata: a\n\nid: 2\ndata: b\n\n", true);
        assert!(w.is_event_stream());
        assert_eq!((w.last_event_id(), w.retry_ms()), (&b"2"[..], Some(10)));
        w.reconnected();
        w.head(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
        w.body(b"id: 3\ndata: c\n\n", true);
        assert_eq!((w.events(), w.reconnects()), (3, 1));
        assert_eq!(
            w.gaps_us().len(),
            1,
            "one gap before the reconnection, none across it"
        );
        assert_eq!(w.last_event_id(), b"3");
        assert_eq!(
            w.retry_ms(),
            Some(10),
            "the reconnection time outlives the response"
        );
        w.clear();
        assert_eq!((w.reconnects(), w.last_event_id()), (0, &b"3"[..]));
    }
}
