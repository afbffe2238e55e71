//! `/ws/echo` and `/ws/push/{n}/{ms}`: the opening handshake
//! (RFC 6455 §4.2). A GET over HTTP/1.1 with `Upgrade: websocket`,
//! `Connection: Upgrade`, `Sec-WebSocket-Version: 13` and a 16-byte
//! `Sec-WebSocket-Key` is answered `101 Switching Protocols` with its
//! `Sec-WebSocket-Accept`; the connection then belongs to `ws_session`.
//! Anything else gets one line: 426 without the upgrade or with another
//! version (with the `Upgrade` or `Sec-WebSocket-Version` header §4.4
//! asks for), 400 for a bad key or another HTTP version (RFC 8441's
//! WebSocket over HTTP/2 is not served), 405 for another method.
//! A client that offers subprotocols (`Sec-WebSocket-Protocol`) gets the
//! first it offered (an echo speaks any); extensions are not served, so
//! an offer of `permessage-deflate` is answered without one (the client
//! goes on uncompressed, RFC 7692 §5).

use std::time::Duration;

use crate::event_stream::{MAX_GAP_MS, MAX_PIECES};
use crate::reply::{Outcome, Reply};
use crate::request::Method;
use crate::response::{self, Exchange, Len};
use crate::ws_route::WsRoute;

/// The route `/ws/{arg}` names, or why none.
fn which(arg: &str) -> Result<WsRoute, &'static str> {
    if arg == "echo" {
        return Ok(WsRoute::Echo);
    }
    let Some(rest) = arg.strip_prefix("push/") else {
        return Err("ws has /ws/echo and /ws/push/{n}/{ms}\n");
    };
    let number = |s: &str, max: u64| {
        (!s.is_empty() && s.len() <= 19 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten()
            .filter(|&v| v <= max)
    };
    rest.split_once('/')
        .and_then(|(n, ms)| Some((number(n, MAX_PIECES)?, number(ms, MAX_GAP_MS)?)))
        .map(|(n, ms)| WsRoute::Push {
            n,
            every: Duration::from_millis(ms),
        })
        .ok_or("ws/push takes /{n}/{ms}: n 0..=1000000 messages, one every ms 0..=60000\n")
}

/// The first value of header `name` (lowercase, no colon) in a raw head.
fn header<'a>(raw_head: &'a [u8], name: &str) -> Option<&'a str> {
    raw_head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let (n, v) = std::str::from_utf8(line).ok()?.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Whether any header `name` lists `token` (comma-separated, any case).
fn has_token(raw_head: &[u8], name: &str, token: &str) -> bool {
    raw_head.split(|&b| b == b'\n').skip(1).any(|line| {
        let Some((n, v)) = std::str::from_utf8(line)
            .ok()
            .and_then(|l| l.split_once(':'))
        else {
            return false;
        };
        n.trim().eq_ignore_ascii_case(name)
            && v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token))
    })
}

/// The first subprotocol a request offers, when it is a token.
fn first_subprotocol(raw_head: &[u8]) -> Option<&str> {
    let first = header(raw_head, "sec-websocket-protocol")?
        .split(',')
        .next()?
        .trim();
    stampede_websocket::is_token(first).then_some(first)
}

fn refuse(out: &mut Vec<u8>, x: &Exchange, status: u16, extra: &[u8], why: &str) -> Outcome {
    response::head(
        out,
        x,
        status,
        Some("text/plain"),
        Len::Known(why.len()),
        extra,
    );
    if x.head_only {
        return Outcome::done(status, 0);
    }
    out.extend_from_slice(why.as_bytes());
    Outcome::done(status, why.len())
}

/// The response to `/ws/{arg}`: the 101 that hands the connection over, or a refusal.
pub(crate) fn route(
    arg: &str,
    method: Method,
    raw_head: &[u8],
    x: &Exchange,
    out: &mut Vec<u8>,
) -> Outcome {
    let ws = match which(arg) {
        Ok(ws) => ws,
        Err(why) => return refuse(out, x, 404, b"", why),
    };
    if method != Method::Get {
        let why = "a WebSocket handshake is a GET (RFC 6455 §4.1)\n";
        return refuse(out, x, 405, b"Allow: GET\r\n", why);
    }
    if x.version != 1 {
        let why = "WebSocket needs HTTP/1.1 here (RFC 6455 §4.1; RFC 8441 is not served)\n";
        return refuse(out, x, 400, b"", why);
    }
    let raw = raw_head;
    if !has_token(raw, "upgrade", "websocket") {
        let why = "this route needs Upgrade: websocket (RFC 6455 §4.1)\n";
        return refuse(out, x, 426, b"Upgrade: websocket\r\n", why);
    }
    if !has_token(raw, "connection", "upgrade") {
        return refuse(out, x, 400, b"", "Connection: Upgrade is missing\n");
    }
    if header(raw, "sec-websocket-version") != Some("13") {
        let why = "Sec-WebSocket-Version must be 13 (RFC 6455 §4.4)\n";
        return refuse(out, x, 426, b"Sec-WebSocket-Version: 13\r\n", why);
    }
    let Some(key) =
        header(raw, "sec-websocket-key").filter(|k| stampede_websocket::key_is_valid(k))
    else {
        let why = "Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 §4.1)\n";
        return refuse(out, x, 400, b"", why);
    };
    if !x.keep_alive {
        // Shutting down: no new session.
        return Outcome::done(503, response::plain(out, x, 503));
    }
    let mut extra = Vec::with_capacity(128);
    extra.extend_from_slice(b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ");
    extra.extend_from_slice(stampede_websocket::accept_key(key).as_bytes());
    extra.extend_from_slice(b"\r\n");
    if let Some(first) = first_subprotocol(raw) {
        extra.extend_from_slice(b"Sec-WebSocket-Protocol: ");
        extra.extend_from_slice(first.as_bytes());
        extra.extend_from_slice(b"\r\n");
    }
    response::head(out, x, 101, None, Len::Known(0), &extra);
    let mut o = Outcome::done(101, 0);
    o.reply = Reply::Upgrade(ws);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_headers() {
        assert_eq!(which("echo"), Ok(WsRoute::Echo));
        assert_eq!(
            which("push/5/20"),
            Ok(WsRoute::Push {
                n: 5,
                every: Duration::from_millis(20)
            })
        );
        assert!(which("push/5").is_err());
        assert!(which("push/5/600000").is_err());
        assert!(which("other").is_err());
        let head = b"GET /ws/echo HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nupgrade: WebSocket\r\nSec-WebSocket-Key:  abc \r\n\r\n";
        assert!(has_token(head, "connection", "upgrade"));
        assert!(has_token(head, "upgrade", "websocket"));
        assert!(!has_token(head, "upgrade", "h2c"));
        assert_eq!(header(head, "sec-websocket-key"), Some("abc"));
        assert_eq!(header(head, "sec-websocket-version"), None);
        let offered = b"GET / HTTP/1.1\r\nSec-WebSocket-Protocol: chat.v2, chat\r\n\r\n";
        assert_eq!(first_subprotocol(offered), Some("chat.v2"));
        assert_eq!(first_subprotocol(head), None);
    }
}
