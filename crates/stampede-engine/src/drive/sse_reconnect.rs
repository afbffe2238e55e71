//! `--sse-reconnect` on the tokio HTTP/1.1 slot: a stream the server ends
//! before `--sse-for` is over goes on as a browser's `EventSource` does
//! (WHATWG HTML, "Server-sent events", §9.2.3 "reestablish the
//! connection"; the rules are stream/resume.rs's): after the stream's
//! reconnection time, the request again with `Last-Event-ID`, on the same
//! connection when the server kept it open, else on a new one. A network
//! error that cuts the stream is reconnected after too, as a browser does. The plan
//! runs `--sse-reconnect` on tokio only (stampede-plan's
//! `reactor_limitation`), so this is the one place it is driven.

use super::{Exchange, Slot};
use crate::exchange::request_books::Clocks;
use crate::net::outcome_class::Stage;
use crate::stream::{reconnection_delay, with_last_event_id};
use crate::worker::context::ConnectionContext;
use std::time::Instant;

impl Slot {
    /// Goes on with the stream `first` began while the server ends it
    /// cleanly with a 200 `text/event-stream` answer and `--sse-for` is
    /// not over, or a network error cuts a stream that was an event
    /// stream (counted in the stream's `errors`). The stream ends at
    /// `--sse-for` (as a success; with the error when one cut it too close
    /// to the end to ask again), or on an answer that is not a 200 event
    /// stream (a 204 is a server's "no more", §9.2.3: "fail the
    /// connection"). It is one request from its first send: its clocks are
    /// the first exchange's, its bytes all of them, its status the last
    /// answer's.
    pub(super) async fn go_on_with_stream(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        first: Exchange,
    ) -> Exchange {
        let Some(for_at_most) = ctx.stream.for_at_most else {
            return first;
        };
        let clocks = first.clocks;
        let end = clocks.sent + for_at_most;
        let mut exchange = first;
        let mut request = Vec::new();
        loop {
            let cut = match exchange.result {
                Ok(200) => false,
                // A network error (a failure before `--sse-for` is over,
                // which times out only at its end) is reconnected after too:
                // "if res is a network error, then reestablish the
                // connection" (§9.2.2, the EventSource constructor).
                Err(_) if Instant::now() < end => true,
                _ => return exchange,
            };
            let rendered = self.session.as_ref().and_then(|s| s.rendered());
            let original = rendered.unwrap_or_else(|| ctx.request_of(self.current).0);
            let Some(watch) = self.reader.parser.stream_mut() else {
                return exchange;
            };
            // A clean end goes on when that answer was an event stream; a
            // cut one when the stream ever was (not a request that never
            // reached one).
            let goes_on = match cut {
                false => watch.is_event_stream(),
                true => watch.was_event_stream(),
            };
            if !goes_on {
                return exchange;
            }
            with_last_event_id(original, watch.last_event_id(), &mut request);
            let delay = reconnection_delay(watch.retry_ms());
            if Instant::now() + delay >= end {
                // `--sse-for` is over before the browser would ask again.
                tokio::time::sleep_until(end.into()).await;
                return exchange;
            }
            if cut {
                // The connection is broken: the stream goes on on a new one.
                self.drop_stream(ctx, false);
            }
            tokio::time::sleep(delay).await;
            if let Some(watch) = self.reader.parser.stream_mut() {
                match cut {
                    false => watch.reconnected(),
                    true => watch.broken(),
                }
            }
            self.resume = Some(std::mem::take(&mut request));
            self.stream_end = Some(end);
            let next = self.exchange(ctx, intended).await;
            request = self.resume.take().unwrap_or_default();
            self.stream_end = None;
            let mut body_bytes = exchange.body_bytes + next.body_bytes;
            let mut result = next.result;
            if result == Err(Stage::Exchange.timeout_kind()) && Instant::now() >= end {
                // `--sse-for` ran out in this answer: the stream ended as
                // the user asked, with the status the answer came with (or
                // the last one's, when it had none yet).
                let (status, in_body) = self.reader.parser.in_body().unwrap_or((200, 0));
                body_bytes += in_body;
                result = Ok(status);
                // Its connection is mid-answer: it carries nothing more.
                self.drop_stream(ctx, false);
            }
            exchange = Exchange {
                result,
                body_bytes,
                clocks: Clocks {
                    bytes_received: exchange.clocks.bytes_received + next.clocks.bytes_received,
                    ..clocks
                },
            };
        }
    }
}
