//! HTTP/2 connections (ALPN `h2` over TLS, or h2c with prior knowledge), served with
//! the `h2` crate's server. Every stream is a local task of the connection; its
//! request is turned into the same `Head`/`Request` the HTTP/1.1 path builds, answered
//! by the same `routes::handle` (so every route, the counters and the access log behave
//! the same), and the HTTP/1.1-shaped response it produces is converted to HEADERS and
//! DATA frames (no chunked coding, no connection headers: `Exchange::version` 2).
//!
//! Why the `h2` crate and not hyper's server: the project already chose `h2` for the
//! client (DESIGN.md), it is the maintained HTTP/2 implementation under hyper itself,
//! and using it directly keeps hyper, hyper-util and http-body out of the server while
//! giving the per-stream control the counters need (flow control, resets, GOAWAY).
//! This module does not do TLS (see `tls`) nor decide responses (see `routes`).

use std::future::poll_fn;
use std::io::{self, Read};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::Bytes;
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use http::header::{CONTENT_LENGTH, IF_MODIFIED_SINCE};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use crate::accesslog::Entry;
use crate::context::Worker;
use crate::reply::{Outcome, Reply, Tail};
use crate::request::{Framing, Head, Method};
use crate::response::{self, Exchange};
use crate::routes::{self, Request, INLINE_BODY, PATTERN};
use crate::transport::{OpenGuard, Peer};

/// Concurrent streams a client may open (h2load `-m`, stampede `--streams`).
const MAX_STREAMS: u32 = 1024;
/// Receive windows: large enough that request bodies up to `max_body` flow without
/// waiting for WINDOW_UPDATEs on a loopback round trip.
const STREAM_WINDOW: u32 = 1 << 20;
const CONN_WINDOW: u32 = 16 << 20;
/// Largest header block accepted (HTTP/1.1 allows 16 KiB of head; HPACK-decoded
/// sizes count each field plus 32 bytes).
const MAX_HEADER_LIST: u32 = 64 * 1024;
/// Header lines read from a response head produced by `routes`.
const MAX_RESPONSE_HEADERS: usize = 32;

/// Serves one HTTP/2 connection until it closes. `io` starts with the client preface.
pub(crate) async fn serve<S>(io: S, peer: Peer, w: Rc<Worker>, guard: OpenGuard)
where
    S: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let _guard = guard;
    let cfg = w.cfg.clone();
    let io = Counted {
        inner: io,
        w: w.clone(),
    };
    let handshake = h2::server::Builder::new()
        .max_concurrent_streams(MAX_STREAMS)
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONN_WINDOW)
        .max_header_list_size(MAX_HEADER_LIST)
        .handshake::<_, Bytes>(io);
    let mut conn = match tokio::time::timeout(cfg.header_timeout, handshake).await {
        Ok(Ok(c)) => c,
        _ => return,
    };
    w.stats().h2_connection();
    let mut streams = tokio::task::JoinSet::new();
    let stop = w.stop_notify.notified();
    tokio::pin!(stop);
    // One timer: the idle timeout while no stream is open, then (once closing) the
    // bound on a graceful close whose client never answers.
    let timer = tokio::time::sleep(cfg.idle_timeout);
    tokio::pin!(timer);
    let mut closing = false;
    if w.stopping.get() {
        closing = true;
        conn.graceful_shutdown();
        timer.as_mut().reset(Instant::now() + cfg.shutdown_grace);
    }
    loop {
        tokio::select! {
            biased;
            r = conn.accept() => match r {
                Some(Ok((req, respond))) => {
                    w.stats().h2_stream();
                    streams.spawn_local(stream(req, respond, peer, w.clone()));
                }
                // The client went away, or a protocol error (h2 has sent GOAWAY).
                Some(Err(_)) | None => break,
            },
            Some(_) = streams.join_next(), if !streams.is_empty() => {
                if streams.is_empty() && !closing {
                    timer.as_mut().reset(Instant::now() + cfg.idle_timeout);
                }
            }
            _ = &mut stop, if !closing => {
                // GOAWAY: streams in flight finish, no new ones start.
                closing = true;
                conn.graceful_shutdown();
                timer.as_mut().reset(Instant::now() + cfg.shutdown_grace);
            }
            _ = &mut timer, if closing || streams.is_empty() => {
                if closing {
                    break;
                }
                closing = true;
                conn.graceful_shutdown();
                timer.as_mut().reset(Instant::now() + cfg.shutdown_grace);
            }
        }
    }
}

/// One stream: read the body, answer through `routes`, send the frames.
async fn stream(
    req: http::Request<RecvStream>,
    respond: SendResponse<Bytes>,
    peer: Peer,
    w: Rc<Worker>,
) {
    let (parts, body) = req.into_parts();
    let body = read_body(&parts, body, &w).await;
    if let Err(None) = body {
        return; // The client reset the stream: nobody to answer.
    }
    let mut out = Vec::new();
    let o = produce(
        &w,
        &peer,
        &parts,
        body.map_err(|e| e.unwrap_or(400)),
        &mut out,
        2,
    );
    let _ = send(respond, out, o.reply).await;
}

/// The request body, whole. `Err(Some(status))`: answer with that status;
/// `Err(None)`: the stream is gone.
async fn read_body(
    parts: &http::request::Parts,
    mut body: RecvStream,
    w: &Worker,
) -> Result<Vec<u8>, Option<u16>> {
    let max = w.cfg.max_body;
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(Some(413));
    }
    if body.is_end_stream() {
        return Ok(Vec::new());
    }
    let mut buf = Vec::with_capacity(declared.unwrap_or(0) as usize);
    let read = async {
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(|_| None)?;
            let _ = body.flow_control().release_capacity(chunk.len());
            if buf.len() + chunk.len() > max {
                return Err(Some(413));
            }
            buf.extend_from_slice(&chunk);
        }
        Ok(())
    };
    match tokio::time::timeout(w.cfg.body_timeout, read).await {
        Ok(Ok(())) => Ok(buf),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Some(408)),
    }
}

/// Produces the HTTP/1.1-shaped response into `out`, and counts and logs it;
/// `version` is 2, or 3 for HTTP/3 (http3.rs), which frames it the same way.
pub(crate) fn produce(
    w: &Worker,
    peer: &Peer,
    parts: &http::request::Parts,
    body: Result<Vec<u8>, u16>,
    out: &mut Vec<u8>,
    version: u8,
) -> Outcome {
    let wall = w.wall.borrow();
    let x = Exchange {
        version,
        keep_alive: true,
        head_only: parts.method == http::Method::HEAD,
        date: &wall.http,
        // HTTP/2 runs over TLS on TCP, where HTTP/3 is worth advertising.
        alt_svc: if version == 2 { &w.alt_svc } else { b"" },
    };
    let method_str = parts.method.as_str();
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let o = match (Method::parse(method_str), body) {
        (_, Err(status)) => Outcome::done(status, response::plain(out, &x, status)),
        (None, _) => Outcome::done(501, response::plain(out, &x, 501)),
        (Some(method), Ok(body)) => {
            let raw_head = raw_head(parts, target, version);
            let head = Head {
                method,
                method_str,
                target,
                version,
                head_len: raw_head.len(),
                framing: if body.is_empty() {
                    Framing::None
                } else {
                    Framing::Length(body.len())
                },
                keep_alive: true,
                expect_continue: false,
                if_modified_since: parts
                    .headers
                    .get(IF_MODIFIED_SINCE)
                    .and_then(|v| v.to_str().ok()),
            };
            let req = Request {
                head: &head,
                raw_head: &raw_head,
                body: &body,
            };
            let mark = out.len();
            let mut o = routes::handle(w, &req, &x, out);
            if w.cfg.compress {
                crate::compress::compress_response(&raw_head, &x, out, mark, &mut o);
            }
            o
        }
    };
    w.record(
        &Entry {
            peer: peer.as_bytes(),
            clf_date: &wall.clf,
            method: method_str,
            target,
            version: Some(version),
            status: o.status,
            bytes: o.body_bytes,
        },
        o.route,
    );
    o
}

/// The request as `/echo` shows it: an HTTP/1.1-style head, with `:authority` as Host.
fn raw_head(parts: &http::request::Parts, target: &str, version: u8) -> Vec<u8> {
    let mut h = Vec::with_capacity(256);
    h.extend_from_slice(parts.method.as_str().as_bytes());
    h.push(b' ');
    h.extend_from_slice(target.as_bytes());
    h.extend_from_slice(if version == 3 {
        b" HTTP/3\r\n"
    } else {
        b" HTTP/2\r\n"
    });
    if let Some(a) = parts.uri.authority() {
        h.extend_from_slice(b"host: ");
        h.extend_from_slice(a.as_str().as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    for (name, value) in &parts.headers {
        h.extend_from_slice(name.as_str().as_bytes());
        h.extend_from_slice(b": ");
        h.extend_from_slice(value.as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    h
}

/// Splits the produced bytes into a response head for HEADERS and the body for DATA.
pub(crate) fn to_frames(out: Vec<u8>) -> Option<(http::Response<()>, Bytes)> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_RESPONSE_HEADERS];
    let mut r = httparse::Response::new(&mut headers);
    let head_len = match r.parse(&out) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => return None,
    };
    let mut resp = http::Response::builder().status(r.code?);
    for h in r.headers.iter() {
        // Connection-specific fields are forbidden in HTTP/2 (RFC 9113 §8.2.2).
        let hop = ["connection", "keep-alive", "transfer-encoding", "upgrade"]
            .iter()
            .any(|n| h.name.eq_ignore_ascii_case(n));
        if !hop {
            resp = resp.header(h.name, h.value);
        }
    }
    let resp = resp.body(()).ok()?;
    Some((resp, Bytes::from(out).slice(head_len..)))
}

async fn send(
    mut respond: SendResponse<Bytes>,
    out: Vec<u8>,
    reply: Reply,
) -> Result<(), h2::Error> {
    let Some((resp, body)) = to_frames(out) else {
        respond.send_reset(h2::Reason::INTERNAL_ERROR);
        return Ok(());
    };
    let tail = match reply {
        Reply::Done => None,
        Reply::Delay(d) => {
            // As over HTTP/1.1: the whole response leaves after the delay.
            tokio::time::sleep(d).await;
            None
        }
        Reply::Stream(t) => Some(t),
        // websocket.rs refuses the upgrade on every version but HTTP/1.1.
        Reply::Upgrade(_) => None,
    };
    let end = body.is_empty() && tail.is_none();
    let mut s = respond.send_response(resp, end)?;
    if end {
        return Ok(());
    }
    send_data(&mut s, body, tail.is_none()).await?;
    match tail {
        None => Ok(()),
        Some(Tail::Pattern { mut remaining, .. }) => {
            // Chunked or not over HTTP/1.1, the same bytes as plain DATA frames here.
            while remaining > 0 {
                let k = remaining.min(INLINE_BODY as u64) as usize;
                remaining -= k as u64;
                send_data(&mut s, Bytes::from_static(&PATTERN[..k]), remaining == 0).await?;
            }
            Ok(())
        }
        Some(Tail::File {
            mut file,
            mut remaining,
        }) => {
            while remaining > 0 {
                let mut buf = vec![0u8; remaining.min(INLINE_BODY as u64) as usize];
                // A blocking read, but of page-cache-hot data in the common case.
                let n = match file.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        s.send_reset(h2::Reason::INTERNAL_ERROR);
                        return Ok(());
                    }
                    Ok(n) => n,
                };
                buf.truncate(n);
                remaining -= n as u64;
                send_data(&mut s, Bytes::from(buf), remaining == 0).await?;
            }
            Ok(())
        }
        Some(Tail::Pieces(mut pieces)) => {
            while let Some((due, piece)) = pieces.next_due(std::time::Instant::now()) {
                tokio::time::sleep_until(due.into()).await;
                send_data(&mut s, Bytes::from(piece), false).await?;
            }
            send_data(&mut s, Bytes::new(), true).await
        }
    }
}

/// Sends `data` as flow control allows (never buffering more than the peer's window).
async fn send_data(s: &mut SendStream<Bytes>, mut data: Bytes, end: bool) -> Result<(), h2::Error> {
    if data.is_empty() {
        if end {
            s.send_data(data, true)?;
        }
        return Ok(());
    }
    while !data.is_empty() {
        s.reserve_capacity(data.len());
        let cap = match poll_fn(|cx| s.poll_capacity(cx)).await {
            Some(r) => r?,
            None => return Err(h2::Reason::CANCEL.into()),
        };
        if cap == 0 {
            continue;
        }
        let piece = data.split_to(cap.min(data.len()));
        s.send_data(piece, end && data.is_empty())?;
    }
    Ok(())
}

/// The connection's stream, counting every byte written into `bytes_out` (all frames:
/// HEADERS, DATA, SETTINGS, ...), as the HTTP/1.1 path counts every byte it writes.
struct Counted<S> {
    inner: S,
    w: Rc<Worker>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let r = Pin::new(&mut me.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            me.w.stats().bytes_out(n);
        }
        r
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let r = Pin::new(&mut me.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = r {
            me.w.stats().bytes_out(n);
        }
        r
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http1_shaped_responses_become_frames() {
        let out = b"HTTP/1.1 200 OK\r\nServer: stampede\r\nContent-Length: 3\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\nabc".to_vec();
        let (resp, body) = to_frames(out).unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers().get("server").unwrap(), "stampede");
        assert!(resp.headers().get("connection").is_none());
        assert!(resp.headers().get("transfer-encoding").is_none());
        assert_eq!(&body[..], b"abc");
        assert!(to_frames(b"garbage".to_vec()).is_none());
    }
}
