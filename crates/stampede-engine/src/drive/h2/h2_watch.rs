//! One HTTP/2 stream watched with `--sse`: its DATA frames feed the same
//! watch as HTTP/1.1's body (stream/watch.rs: a `text/event-stream` body's
//! events, any other body's DATA frames), booked through the same
//! `book_stream`. A leaf, so that the exchange that feeds it
//! (h2_exchange.rs) and the stream that reconnects (h2_stream.rs) share it.

use crate::stream::{is_event_stream_type, StreamWatch};
use crate::worker::context::ConnectionContext;
use stampede_metrics::{ErrorKind, Outcome};
use std::time::Instant;

/// One HTTP/2 stream watched, over its reconnections: its events and the
/// response so far, which `--sse-for` may end in its body.
#[derive(Debug, Default)]
pub(crate) struct H2Watch {
    pub(crate) watch: StreamWatch,
    /// The last response's status, once its head came.
    status: Option<u16>,
    /// When the first response's head came.
    first_byte: Option<Instant>,
    /// Body bytes of all the stream's responses.
    body: u64,
}

impl H2Watch {
    /// A response's head came, at `at`: its body is watched as an event
    /// stream when its `Content-Type` says so.
    pub(crate) fn head(
        &mut self,
        status: u16,
        at: Instant,
        headers: &http::HeaderMap,
    ) -> &mut Self {
        let event_stream = headers
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|v| is_event_stream_type(v.as_bytes()));
        self.watch.begin(event_stream);
        self.status = Some(status);
        self.first_byte.get_or_insert(at);
        self
    }

    /// A DATA frame's payload: a piece of the body (an event, when the
    /// body is not an event stream). An empty one (a bare END_STREAM, as
    /// hypercorn ends a 204) carries nothing, so it is no piece.
    pub(crate) fn data(&mut self, chunk: &[u8]) {
        self.body += chunk.len() as u64;
        if !chunk.is_empty() {
            self.watch.body(chunk, true);
        }
    }

    /// Whether a failure may send the request again as never processed:
    /// not once the server answered it (a reconnection's failure ends the
    /// stream).
    pub(crate) fn answered(&self) -> bool {
        self.status.is_some()
    }

    /// The stream's end as its outcome says it (`timed_out`: the request's
    /// timer fired): `--sse-for` over in a body ends it as a success with
    /// its last status; its first byte and body are the stream's.
    pub(crate) fn ended(
        &self,
        ctx: &ConnectionContext,
        timed_out: bool,
        (result, first_byte, _): (Result<u16, ErrorKind>, Option<Instant>, u64),
    ) -> (Result<u16, ErrorKind>, Option<Instant>, u64) {
        let result = match (timed_out, ctx.stream.for_at_most, self.status) {
            (true, Some(_), Some(status)) => Ok(status),
            _ => result,
        };
        (result, self.first_byte.or(first_byte), self.body)
    }

    /// Books the stream (its events, gaps, length) with its request's `outcome`.
    pub(crate) fn book(&self, ctx: &ConnectionContext, outcome: &Outcome) {
        ctx.book_stream(&self.watch, outcome);
    }
}
