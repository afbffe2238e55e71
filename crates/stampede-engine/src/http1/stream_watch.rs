//! What `--sse` watches of a response body, fed by the capture
//! as the body passes through the parser, on every HTTP/1.1 event loop:
//! when the body's first byte came, when each event came and the gaps
//! between them. A `text/event-stream` body's events are its server-sent
//! events (sse.rs); any other body's are its chunks when it is chunked,
//! else its reads. A run without `--sse` has none of this.

use super::sse::EventParser;
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
    }

    /// The response's head came: is it an event stream?
    pub(crate) fn head(&mut self, head: &[u8]) {
        self.sse = is_event_stream(head);
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

/// Whether a response head says `Content-Type: text/event-stream`.
fn is_event_stream(head: &[u8]) -> bool {
    let name = b"content-type:";
    head.split(|&b| b == b'\n').any(|line| {
        let Some(start) = line.get(..name.len()) else {
            return false;
        };
        if !start.eq_ignore_ascii_case(name) {
            return false;
        }
        let value = line[name.len()..].trim_ascii_start();
        value
            .get(..17)
            .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"))
    })
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
}
