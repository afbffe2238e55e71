//! Choosing and producing the response for one parsed request: the built-in pages,
//! the test routes (`/bytes/{n}`, `/chunked/{n}`, `/delay/{ms}`, `/cpu/{iterations}`,
//! `/block/{ms}`, `/status/{code}`, `/sse/{n}/{ms}` and `/stream/{n}/{ms}` (event_stream.rs), `/ws/echo` and `/ws/push/{n}/{ms}` (websocket.rs), `/echo`, `/stats`, `/redirect/{n}`, `/redirect-to?url=`
//! (redirect_to.rs), the session routes `/login`, `/me`, `/json` of
//! session_routes.rs, and `/gzip`, `/deflate`, `/br`, `/zstd` of
//! compress.rs) and, with a root, static files. Responses are
//! appended to the connection's write buffer; anything that must wait (a delay) or is
//! too large to buffer (a big body) is returned as a `Reply` for the connection to do.

use std::time::Duration;

use crate::context::Worker;
use crate::reply::{Outcome, Reply, Tail};
use crate::request::{Head, Method};
use crate::response::{self, bodiless, push_hex, Exchange, Len};
use crate::route_label::Route;

/// Largest `/bytes/{n}` and `/chunked/{n}`.
pub(crate) const MAX_BYTES: u64 = 1 << 30;
/// Longest `/delay/{ms}`.
pub(crate) const MAX_DELAY_MS: u64 = 60_000;
/// Longest `/block/{ms}`: it holds a worker, so kept short.
pub(crate) const MAX_BLOCK_MS: u64 = 10_000;
/// Most `/cpu/{iterations}`.
pub(crate) const MAX_CPU_ITERATIONS: u64 = 1_000_000_000;
/// Bodies up to this size are produced into the write buffer; larger are streamed.
pub(crate) const INLINE_BODY: usize = 64 * 1024;
/// Chunk size of `/chunked/{n}`.
pub(crate) const CHUNK: usize = 16 * 1024;

/// Body bytes of `/bytes` and `/chunked`: a printable repeating pattern.
pub(crate) static PATTERN: [u8; INLINE_BODY] = pattern();

const fn pattern() -> [u8; INLINE_BODY] {
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-\n";
    let mut p = [0u8; INLINE_BODY];
    let mut i = 0;
    while i < INLINE_BODY {
        p[i] = alphabet[i % alphabet.len()];
        i += 1;
    }
    p
}

/// One request as the routes see it.
pub(crate) struct Request<'a> {
    pub head: &'a Head<'a>,
    /// The request line and headers exactly as received.
    pub raw_head: &'a [u8],
    /// The (de-chunked) body.
    pub body: &'a [u8],
}

/// Produces the response for `req` into `out`; the outcome names the route
/// that produced it.
pub(crate) fn handle(w: &Worker, req: &Request, x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    let path = req.head.path();
    let method = req.head.method;
    let get_or_head = matches!(method, Method::Get | Method::Head);
    if w.files.is_none() {
        // The hot path of the seeds' experiments: one copy of pre-built bytes.
        let page = match path {
            "/" | "/index.html" => Some(false),
            "/1k.html" => Some(true),
            _ => None,
        };
        if let Some(one_k) = page {
            if !get_or_head {
                return not_allowed(out, x, b"Allow: GET, HEAD\r\n").of(Route::Page);
            }
            return page_response(w, one_k, x, out).of(Route::Page);
        }
    }
    let prefix = w.cfg.route_prefix.as_str();
    let routed = if prefix.is_empty() {
        Some(path)
    } else {
        path.strip_prefix(prefix).filter(|r| r.starts_with('/'))
    };
    if let Some(route) = routed {
        if let Some(o) = test_route(w, route, req, x, out) {
            return o;
        }
    }
    match &w.files {
        Some(cache) => {
            if !get_or_head {
                return not_allowed(out, x, b"Allow: GET, HEAD\r\n").of(Route::Files);
            }
            cache
                .borrow_mut()
                .serve(path, req.head, x, out)
                .of(Route::Files)
        }
        None => Outcome::done(404, response::plain(out, x, 404)),
    }
}

fn page_response(w: &Worker, one_k: bool, x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    let pages = w.pages.borrow();
    let (pre, body) = if one_k {
        (&pages.one_k, &pages.one_k_body)
    } else {
        (&pages.index, &pages.index_body)
    };
    if x.keep_alive && x.version == 1 {
        out.extend_from_slice(pre.response(x.head_only));
        return Outcome::done(200, if x.head_only { 0 } else { pre.body_len });
    }
    Outcome::done(200, response::whole(out, x, 200, "text/html", body))
}

fn not_allowed(out: &mut Vec<u8>, x: &Exchange, allow: &[u8]) -> Outcome {
    let body = b"405 Method Not Allowed\n";
    response::head(
        out,
        x,
        405,
        Some("text/plain"),
        Len::Known(body.len()),
        allow,
    );
    if x.head_only {
        return Outcome::done(405, 0);
    }
    out.extend_from_slice(body);
    Outcome::done(405, body.len())
}

fn bad_request(out: &mut Vec<u8>, x: &Exchange, why: &str) -> Outcome {
    Outcome::done(
        400,
        response::whole(out, x, 400, "text/plain", why.as_bytes()),
    )
}

/// Strict decimal path parameter with an upper bound.
fn param(s: &str, max: u64) -> Option<u64> {
    if s.is_empty() || s.len() > 19 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|&n| n <= max)
}

fn test_route(
    w: &Worker,
    route: &str,
    req: &Request,
    x: &Exchange,
    out: &mut Vec<u8>,
) -> Option<Outcome> {
    let (segment, arg) = match route[1..].split_once('/') {
        Some((n, a)) => (n, Some(a)),
        None => (&route[1..], None),
    };
    let route = Route::of_segment(segment)?;
    let method = req.head.method;
    let get_or_head = matches!(method, Method::Get | Method::Head);
    let o = match (route, arg) {
        (Route::Echo, None) => echo(req, x, out),
        (Route::Login, None) => crate::session_routes::login(req.body, x, out),
        (Route::Me, None) => crate::session_routes::me(req.raw_head, x, out),
        (Route::Json, None) => crate::session_routes::json(req.body, x, out),
        (Route::RedirectTo, None) => crate::redirect_to::redirect_to(req.head.target, x, out),
        (Route::Redirect, Some(a)) => match param(a, 1000) {
            Some(0) => Outcome::done(
                200,
                response::whole(out, x, 200, "text/plain", b"arrived\n"),
            ),
            Some(n) => {
                let location = format!("Location: /redirect/{}\r\n", n - 1);
                response::head(
                    out,
                    x,
                    302,
                    Some("text/plain"),
                    Len::Known(0),
                    location.as_bytes(),
                );
                Outcome::done(302, 0)
            }
            None => bad_request(out, x, "redirect takes 0..=1000 hops\n"),
        },
        (Route::Gzip | Route::Deflate | Route::Br | Route::Zstd, _) if !get_or_head => {
            not_allowed(out, x, b"Allow: GET, HEAD\r\n")
        }
        (Route::Gzip | Route::Deflate | Route::Br | Route::Zstd, arg) => {
            match crate::compress::Coding::of_route(route) {
                Some(coding) => crate::compress::route(coding, arg, &PATTERN, x, out),
                None => return None,
            }
        }
        (Route::Stats, None) if get_or_head => {
            let json = serde_json::to_vec_pretty(&w.registry.snapshot()).unwrap_or_default();
            Outcome::done(200, response::whole(out, x, 200, "application/json", &json))
        }
        (Route::Status, Some(a)) => match param(a, 599).filter(|&c| c >= 200) {
            Some(code) => Outcome::done(code as u16, response::plain(out, x, code as u16)),
            None => bad_request(out, x, "status must be 200..=599\n"),
        },
        (
            Route::Bytes
            | Route::Chunked
            | Route::Delay
            | Route::Cpu
            | Route::Block
            | Route::Stats
            | Route::Sse
            | Route::Stream,
            _,
        ) if !get_or_head => not_allowed(out, x, b"Allow: GET, HEAD\r\n"),
        (Route::Ws, Some(a)) => crate::websocket::route(a, method, req.raw_head, x, out),
        (Route::Sse | Route::Stream, Some(a)) => crate::event_stream::route(
            route == Route::Sse,
            a,
            req.head.target,
            req.raw_head,
            x,
            out,
        ),
        (Route::Bytes, Some(a)) => match param(a, MAX_BYTES) {
            Some(n) => bytes(n, false, x, out),
            None => bad_request(out, x, "bytes must be 0..=1073741824\n"),
        },
        (Route::Chunked, Some(a)) => match param(a, MAX_BYTES) {
            Some(n) => bytes(n, true, x, out),
            None => bad_request(out, x, "chunked must be 0..=1073741824\n"),
        },
        (Route::Delay, Some(a)) => match param(a, MAX_DELAY_MS) {
            Some(ms) => {
                let mut o = Outcome::done(200, response::plain(out, x, 200));
                o.reply = Reply::Delay(Duration::from_millis(ms));
                o
            }
            None => bad_request(out, x, "delay must be 0..=60000 ms\n"),
        },
        // A blocking call in the handler (a synchronous database or disk
        // read): the worker's thread sleeps and serves nothing else, so
        // what the server carries is its threads over the time, whatever
        // CPU the host has free. Unlike `/delay`, which waits on a timer.
        (Route::Block, Some(a)) => match param(a, MAX_BLOCK_MS) {
            Some(ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                Outcome::done(200, response::plain(out, x, 200))
            }
            None => bad_request(out, x, "block must be 0..=10000 ms\n"),
        },
        (Route::Cpu, Some(a)) => match param(a, MAX_CPU_ITERATIONS) {
            Some(n) => {
                let mut body = [0u8; 17];
                let v = cpu_work(n);
                for (i, b) in body[..16].iter_mut().enumerate() {
                    *b = b"0123456789abcdef"[((v >> (60 - 4 * i)) & 15) as usize];
                }
                body[16] = b'\n';
                Outcome::done(200, response::whole(out, x, 200, "text/plain", &body))
            }
            None => bad_request(out, x, "cpu iterations must be 0..=1000000000\n"),
        },
        _ => return None,
    };
    Some(o.of(route))
}

/// A deterministic CPU-bound loop (xorshift64 folded with the counter), for
/// CPU-bound experiments: same input, same output, no memory traffic.
pub(crate) fn cpu_work(iterations: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_add(i);
    }
    std::hint::black_box(x)
}

fn echo(req: &Request, x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    let len = req.raw_head.len() + req.body.len();
    response::head(out, x, 200, Some("text/plain"), Len::Known(len), b"");
    if x.head_only {
        return Outcome::done(200, 0);
    }
    out.extend_from_slice(req.raw_head);
    out.extend_from_slice(req.body);
    Outcome::done(200, len)
}

fn bytes(n: u64, chunked: bool, x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    // HTTP/1.0 has no chunked coding: such a client gets the same bytes, length-delimited.
    let chunked = chunked && x.version == 1;
    let len = if chunked {
        Len::Chunked
    } else {
        Len::Known(n as usize)
    };
    response::head(out, x, 200, Some("application/octet-stream"), len, b"");
    let body_bytes = n as usize;
    if x.head_only || bodiless(200) {
        return Outcome::done(200, 0);
    }
    if n as usize > INLINE_BODY {
        let mut o = Outcome::done(200, body_bytes);
        o.reply = Reply::Stream(Tail::Pattern {
            remaining: n,
            chunked,
        });
        return o;
    }
    let n = n as usize;
    if chunked {
        let mut done = 0;
        while done < n {
            let k = (n - done).min(CHUNK);
            push_chunk(out, &PATTERN[done..done + k]);
            done += k;
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(&PATTERN[..n]);
    }
    Outcome::done(200, body_bytes)
}

/// Appends one chunk of a chunked body.
pub(crate) fn push_chunk(out: &mut Vec<u8>, data: &[u8]) {
    push_hex(out, data.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_and_cpu() {
        assert_eq!(param("10", 10), Some(10));
        assert_eq!(param("11", 10), None);
        assert_eq!(param("+1", 10), None);
        assert_eq!(param("", 10), None);
        assert_eq!(cpu_work(1000), cpu_work(1000));
        assert_ne!(cpu_work(1000), cpu_work(1001));
        assert_eq!(PATTERN[64], PATTERN[0]);
    }
}
