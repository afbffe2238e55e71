//! `/sse/{n}/{ms}` and `/stream/{n}/{ms}`: a body that arrives
//! in pieces over time. `/sse` sends `n` server-sent events
//! (`text/event-stream`, each `id: i\ndata: i\n\n`), `/stream` sends `n`
//! chunks of a chunked body (`chunk i\n` each). One piece every `ms`, the
//! first at once. Query options:
//!
//! - `stall_at=K&stall_ms=D`: the gap before piece `K` is `D` ms instead
//!   of `ms` (one stall, for a test of the gap maximum);
//! - `drop_every=K` (`/sse` only): the response ends after `K` events, as
//!   a server that closes streams now and then. A client that reconnects
//!   with `Last-Event-ID: i` gets the events after `i`; once none is left
//!   it gets a 204, which ends a browser's reconnects (WHATWG HTML,
//!   "Server-sent events", §9.2.3: a 204 fails the connection);
//! - `retry=MS` (`/sse` only): the first event of each response carries
//!   `retry: MS`, the reconnection time a client waits before it asks for
//!   the rest.
//!
//! Over HTTP/1.1 the body is chunked and the connection stays open; over
//! HTTP/1.0 its length is computed up front. HTTP/2 and HTTP/3 send each
//! piece as its own DATA.

use std::time::{Duration, Instant};

use crate::pieces::{push, Pieces};
use crate::reply::{Outcome, Reply, Tail};
use crate::response::{self, Exchange, Len};

/// Most pieces of one response.
pub(crate) const MAX_PIECES: u64 = 1_000_000;
/// Longest gap (`ms`, `stall_ms`).
pub(crate) const MAX_GAP_MS: u64 = 60_000;

/// A strict decimal number up to `max` (as routes.rs reads a path's).
fn number(s: &str, max: u64) -> Option<u64> {
    if s.is_empty() || s.len() > 19 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|&n| n <= max)
}

/// The options of the query of `target`.
#[derive(Debug, Default, PartialEq)]
struct Options {
    stall_at: Option<u64>,
    stall_ms: Option<u64>,
    drop_every: Option<u64>,
    retry: Option<u64>,
}

fn options(target: &str) -> Result<Options, &'static str> {
    let query = target.split_once('?').map_or("", |(_, q)| q);
    let mut o = Options::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = number(value, MAX_PIECES.max(MAX_GAP_MS));
        let slot = match name {
            "stall_at" => &mut o.stall_at,
            "stall_ms" => &mut o.stall_ms,
            "drop_every" => &mut o.drop_every,
            "retry" => &mut o.retry,
            _ => {
                return Err("unknown option: stall_at, stall_ms, drop_every and retry are known\n")
            }
        };
        *slot = Some(value.ok_or("an option takes a number\n")?);
    }
    if o.stall_ms.is_some_and(|ms| ms > MAX_GAP_MS) {
        return Err("stall_ms must be 0..=60000\n");
    }
    if o.retry.is_some_and(|ms| ms > MAX_GAP_MS) {
        return Err("retry must be 0..=60000\n");
    }
    if o.drop_every == Some(0) {
        return Err("drop_every must be at least 1\n");
    }
    Ok(o)
}

/// The `Last-Event-ID` of a request head, when it is a number.
fn last_event_id(raw_head: &[u8]) -> Option<u64> {
    let name = b"last-event-id:";
    raw_head.split(|&b| b == b'\n').find_map(|line| {
        let head = line.get(..name.len())?;
        if !head.eq_ignore_ascii_case(name) {
            return None;
        }
        std::str::from_utf8(&line[name.len()..])
            .ok()?
            .trim()
            .parse()
            .ok()
    })
}

/// The response to `/sse/{arg}` (`sse`) or `/stream/{arg}`.
pub(crate) fn route(
    sse: bool,
    arg: &str,
    target: &str,
    raw_head: &[u8],
    x: &Exchange,
    out: &mut Vec<u8>,
) -> Outcome {
    let parsed = arg
        .split_once('/')
        .and_then(|(n, ms)| Some((number(n, MAX_PIECES)?, number(ms, MAX_GAP_MS)?)));
    let Some((n, ms)) = parsed else {
        let why = "takes /{n}/{ms}: n 0..=1000000 pieces, one every ms 0..=60000\n";
        return Outcome::done(
            400,
            response::whole(out, x, 400, "text/plain", why.as_bytes()),
        );
    };
    let o = match options(target) {
        Ok(o) => o,
        Err(why) => {
            return Outcome::done(
                400,
                response::whole(out, x, 400, "text/plain", why.as_bytes()),
            )
        }
    };
    let start = match last_event_id(raw_head) {
        Some(id) if sse => id.saturating_add(1),
        _ => 0,
    };
    if sse && start > 0 && start >= n {
        // Nothing left: a browser's EventSource stops reconnecting.
        return Outcome::done(204, response::whole(out, x, 204, "text/plain", b""));
    }
    let end = match o.drop_every {
        Some(k) if sse => n.min(start.saturating_add(k)),
        _ => n,
    };
    let chunked = x.version == 1;
    let retry_line = match o.retry {
        Some(ms) if sse => format!("retry: {ms}\n").into_bytes(),
        _ => Vec::new(),
    };
    let mut pieces = Pieces {
        sse,
        next: start,
        end,
        sent: 0,
        every: Duration::from_millis(ms),
        stall: o
            .stall_at
            .map(|at| (at, Duration::from_millis(o.stall_ms.unwrap_or(1000)))),
        last_due: None,
        chunked,
    };
    let len = if chunked {
        Len::Chunked
    } else {
        let mut probe = pieces.clone();
        let mut total = if start < end { retry_line.len() } else { 0 };
        while let Some((_, p)) = probe.next_piece() {
            total += p.len();
        }
        Len::Known(total)
    };
    let (ctype, extra): (&str, &[u8]) = if sse {
        ("text/event-stream", b"Cache-Control: no-cache\r\n")
    } else {
        ("text/plain", b"")
    };
    response::head(out, x, 200, Some(ctype), len, extra);
    if x.head_only {
        return Outcome::done(200, 0);
    }
    // The first piece leaves with the head.
    let mut body_bytes = 0;
    if let Some((_, mut first)) = pieces.next_due(Instant::now()) {
        if !retry_line.is_empty() {
            first.splice(0..0, retry_line);
        }
        body_bytes = first.len();
        push(out, &first, chunked);
    }
    let mut o = Outcome::done(200, body_bytes);
    o.reply = Reply::Stream(Tail::Pieces(pieces));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_last_event_id() {
        assert_eq!(options("/sse/3/10").unwrap(), Options::default());
        let o = options("/sse/3/10?stall_at=2&stall_ms=1000&drop_every=5").unwrap();
        assert_eq!(
            o,
            Options {
                stall_at: Some(2),
                stall_ms: Some(1000),
                drop_every: Some(5),
                retry: None,
            }
        );
        assert!(options("/sse/3/10?stall_ms=600000").is_err());
        assert!(options("/sse/3/10?drop_every=0").is_err());
        assert_eq!(options("/sse/3/10?retry=20").unwrap().retry, Some(20));
        assert!(options("/sse/3/10?retry=600000").is_err());
        assert!(options("/sse/3/10?nope=1").is_err());
        assert!(options("/sse/3/10?stall_at=x").is_err());
        let head = b"GET /sse/3/1 HTTP/1.1\r\nLast-Event-ID: 41\r\n\r\n";
        assert_eq!(last_event_id(head), Some(41));
        assert_eq!(last_event_id(b"GET / HTTP/1.1\r\n\r\n"), None);
    }
}
