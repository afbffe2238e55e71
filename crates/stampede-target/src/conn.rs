//! One HTTP/1.1 connection: the read → parse → respond → write loop, over any
//! `Transport` (TCP, Unix, TLS). Reads into a reused buffer, answers every complete
//! request in it (pipelining), writes all responses of one read with one write, and
//! enforces the header, body and idle timeouts with one lazily re-armed timer. Until
//! the first bytes rule it out it also sniffs the h2c prior-knowledge preface and hands
//! such a connection to `http2`, and after a 101 hands the connection to
//! `ws_session`. Which response a request gets is decided in `routes`.

use std::io::{self, Read};
use std::rc::Rc;

use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use crate::accesslog::Entry;
use crate::body::decode_chunked;
use crate::context::Worker;
use crate::reply::{Reply, Tail};
use crate::request::{self, Framing, Head, Method, Parsed};
use crate::response::{self, Exchange};
use crate::route_label::Route;
use crate::routes::{self, push_chunk, Request, CHUNK, INLINE_BODY, PATTERN};
use crate::transport::{linger, OpenGuard, Peer, Rewind, Transport};

/// What an HTTP/2 client with prior knowledge sends first (RFC 9113 §3.4).
pub(crate) const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Read buffer start size; it grows only for large heads or bodies.
const READ_BUF: usize = 8 * 1024;
/// A write buffer that grew past this (large bodies) is given back after use.
const WRITE_BUF_KEEP: usize = 1 << 20;

/// What the connection is waiting for, and since when.
#[derive(Clone, Copy)]
enum Waiting {
    /// Between requests: the idle timeout applies.
    Nothing,
    /// Part of a head is in: the header timeout applies (slowloris).
    Head(Instant),
    /// The head is in, part of the body is not: the body timeout applies.
    Body(Instant),
}

/// How the connection ends.
enum End {
    Close,
    /// Unread input may remain: half-close and drain before closing.
    Linger,
    /// The input so far is the h2c preface: serve HTTP/2 (with those bytes replayed).
    H2,
    /// A 101 went out: the rest of the input is WebSocket frames.
    WebSocket(crate::ws_route::WsRoute),
}

/// Result of handling the next request in the buffer.
enum Step {
    NeedMore,
    Next {
        close: bool,
        reply: Reply,
        /// Write-buffer length before this response (the delay holds bytes after it).
        mark: usize,
    },
}

struct Conn<S> {
    stream: S,
    w: Rc<Worker>,
    peer: Peer,
    /// Still looking for the h2c preface (no byte has ruled it out yet).
    sniff: bool,
    rbuf: Vec<u8>,
    pos: usize,
    wbuf: Vec<u8>,
    chunked: Vec<u8>,
    waiting: Waiting,
    continue_sent: bool,
}

/// Serves one accepted connection until it closes. `sniff`: look for the h2c preface.
pub(crate) async fn serve<S: Transport>(
    stream: S,
    peer: Peer,
    w: Rc<Worker>,
    guard: OpenGuard,
    sniff: bool,
) {
    let mut c = Conn {
        stream,
        w,
        peer,
        sniff,
        rbuf: Vec::with_capacity(READ_BUF),
        pos: 0,
        wbuf: Vec::with_capacity(READ_BUF),
        chunked: Vec::new(),
        waiting: Waiting::Nothing,
        continue_sent: false,
    };
    let end = c.run().await;
    if let End::H2 = end {
        let io = Rewind::new(std::mem::take(&mut c.rbuf), c.stream);
        // Boxed: the HTTP/2 state does not weigh on every plain connection's task.
        return Box::pin(crate::http2::serve(io, c.peer, c.w, guard)).await;
    }
    if let End::WebSocket(ws) = end {
        let rest = c.rbuf.split_off(c.pos);
        // Boxed, as HTTP/2 is: a plain connection's task does not carry it.
        // The guard stays: a shutdown closes the session with 1001 first.
        Box::pin(crate::ws_session::serve(&mut c.stream, rest, &c.w, ws)).await;
        drop(guard);
        return;
    }
    // Served: the lingering close below no longer holds up a graceful shutdown.
    drop(guard);
    if let End::Linger = end {
        linger(&mut c.stream).await;
    }
}

/// Whether `buf` is, or may still become, the h2c preface.
enum Preface {
    Full,
    Maybe,
    No,
}

fn preface(buf: &[u8]) -> Preface {
    let n = buf.len().min(H2_PREFACE.len());
    if buf[..n] != H2_PREFACE[..n] {
        Preface::No
    } else if n == H2_PREFACE.len() {
        Preface::Full
    } else {
        Preface::Maybe
    }
}

impl<S: Transport> Conn<S> {
    async fn run(&mut self) -> End {
        let w = self.w.clone();
        let cfg = w.cfg.clone();
        let mut sleep = Box::pin(tokio::time::sleep(cfg.idle_timeout));
        let mut sleep_at = sleep.deadline();
        let stop = w.stop_notify.notified();
        tokio::pin!(stop);
        let mut stop_seen = false;
        let mut idle_since = Instant::now();
        // Whether the last wake brought bytes: idleness is measured from the
        // last input, so a wake of the lazily re-armed timer must not move it
        // (it did, and a busy connection's idle close slid forever).
        let mut fresh_input = false;
        loop {
            // 0. Until the first bytes rule it out, this may be an h2c client.
            if self.sniff {
                match preface(&self.rbuf) {
                    Preface::Full => return End::H2,
                    Preface::Maybe => {}
                    Preface::No => self.sniff = false,
                }
            }
            // 1. Every complete request in the buffer (pipelining), responses in order.
            let mut close = false;
            while !self.sniff && self.pos < self.rbuf.len() {
                match self.step() {
                    Step::NeedMore => break,
                    Step::Next {
                        reply: Reply::Upgrade(ws),
                        ..
                    } => {
                        // The 101 (and any response before it) leaves; the
                        // bytes after the request are the first frames.
                        if self.flush().await.is_err() {
                            return End::Close;
                        }
                        return End::WebSocket(ws);
                    }
                    Step::Next {
                        close: c,
                        reply,
                        mark,
                    } => {
                        if self.finish(reply, mark).await.is_err() {
                            return End::Close;
                        }
                        if c {
                            close = true;
                            break;
                        }
                    }
                }
            }
            // 2. One write for all of them.
            if !self.wbuf.is_empty() && self.flush().await.is_err() {
                return End::Close;
            }
            if close {
                return End::Linger;
            }
            if self.pos == self.rbuf.len() {
                self.rbuf.clear();
                self.pos = 0;
                if w.stopping.get() {
                    return End::Close;
                }
                if fresh_input {
                    idle_since = Instant::now();
                }
            } else if self.pos > 0 && self.rbuf.capacity() - self.rbuf.len() < 1024 {
                self.rbuf.drain(..self.pos);
                self.pos = 0;
            }
            // 3. Wait for more input, at most until the deadline of the current phase.
            let deadline = match self.waiting {
                Waiting::Nothing => idle_since + cfg.idle_timeout,
                Waiting::Head(t) => t + cfg.header_timeout,
                Waiting::Body(t) => t + cfg.body_timeout,
            };
            if deadline < sleep_at {
                sleep.as_mut().reset(deadline);
                sleep_at = deadline;
            }
            if self.rbuf.capacity() - self.rbuf.len() < 1024 {
                self.rbuf.reserve(READ_BUF.max(self.rbuf.len()));
            }
            fresh_input = false;
            tokio::select! {
                biased;
                r = self.stream.read_buf(&mut self.rbuf) => match r {
                    Ok(0) | Err(_) => return End::Close,
                    Ok(_) => fresh_input = true,
                },
                _ = &mut sleep => {
                    // The timer is re-armed lazily: it may fire before the real deadline.
                    if Instant::now() >= deadline {
                        return self.timed_out().await;
                    }
                    sleep.as_mut().reset(deadline);
                    sleep_at = deadline;
                }
                _ = &mut stop, if !stop_seen => stop_seen = true,
            }
        }
    }

    /// Parses and answers the request at `pos`, if it is complete.
    fn step(&mut self) -> Step {
        let w = &*self.w;
        let max_body = w.cfg.max_body;
        let peer = self.peer.as_bytes();
        let head = match request::parse(&self.rbuf[self.pos..], max_body) {
            Parsed::Complete(h) => h,
            Parsed::Partial => {
                if !matches!(self.waiting, Waiting::Head(_)) {
                    self.waiting = Waiting::Head(Instant::now());
                }
                return Step::NeedMore;
            }
            Parsed::Bad(b) => return refuse(w, peer, &mut self.wbuf, b.status(), None),
        };
        let body_at = self.pos + head.head_len;
        let avail = self.rbuf.len() - body_at;
        let (body, consumed): (&[u8], usize) = match head.framing {
            Framing::None => (&[], 0),
            Framing::Length(n) if avail >= n => (&self.rbuf[body_at..body_at + n], n),
            Framing::Length(_) => {
                return need_body(
                    &mut self.waiting,
                    &mut self.continue_sent,
                    &mut self.wbuf,
                    &head,
                )
            }
            Framing::Chunked => {
                match decode_chunked(&self.rbuf[body_at..], max_body, &mut self.chunked) {
                    Ok(Some(n)) => (&self.chunked, n),
                    Ok(None) => {
                        return need_body(
                            &mut self.waiting,
                            &mut self.continue_sent,
                            &mut self.wbuf,
                            &head,
                        )
                    }
                    Err(b) => return refuse(w, peer, &mut self.wbuf, b.status(), Some(&head)),
                }
            }
        };
        let keep_alive = head.keep_alive && !w.stopping.get();
        let wall = w.wall.borrow();
        let x = Exchange {
            version: head.version,
            keep_alive,
            head_only: head.method == Method::Head,
            date: &wall.http,
            alt_svc: &w.alt_svc,
        };
        let mark = self.wbuf.len();
        let req = Request {
            head: &head,
            raw_head: &self.rbuf[self.pos..body_at],
            body,
        };
        let mut o = routes::handle(w, &req, &x, &mut self.wbuf);
        if w.cfg.compress {
            crate::compress::compress_response(req.raw_head, &x, &mut self.wbuf, mark, &mut o);
        }
        w.record(
            &Entry {
                peer,
                clf_date: &wall.clf,
                method: head.method_str,
                target: head.target,
                version: Some(head.version),
                status: o.status,
                bytes: o.body_bytes,
            },
            o.route,
        );
        self.pos = body_at + consumed;
        self.waiting = Waiting::Nothing;
        self.continue_sent = false;
        Step::Next {
            close: !keep_alive,
            reply: o.reply,
            mark,
        }
    }

    /// Does what a response left for later: a delay or a streamed body.
    async fn finish(&mut self, reply: Reply, mark: usize) -> io::Result<()> {
        match reply {
            Reply::Done => Ok(()),
            Reply::Delay(d) => {
                // Earlier pipelined responses leave now; this one after the delay.
                if mark > 0 {
                    let rest = self.wbuf.split_off(mark);
                    self.flush().await?;
                    self.wbuf.extend_from_slice(&rest);
                }
                tokio::time::sleep(d).await;
                Ok(())
            }
            Reply::Stream(tail) => self.stream_tail(tail).await,
            // run() hands an upgraded connection over before finishing it.
            Reply::Upgrade(_) => Ok(()),
        }
    }

    async fn stream_tail(&mut self, tail: Tail) -> io::Result<()> {
        match tail {
            Tail::Pattern {
                mut remaining,
                chunked,
            } => {
                let piece = if chunked { CHUNK } else { INLINE_BODY };
                while remaining > 0 {
                    let k = remaining.min(piece as u64) as usize;
                    if chunked {
                        push_chunk(&mut self.wbuf, &PATTERN[..k]);
                    } else {
                        self.wbuf.extend_from_slice(&PATTERN[..k]);
                    }
                    remaining -= k as u64;
                    if self.wbuf.len() >= INLINE_BODY {
                        self.flush().await?;
                    }
                }
                if chunked {
                    self.wbuf.extend_from_slice(b"0\r\n\r\n");
                }
                self.flush().await
            }
            Tail::File {
                mut file,
                mut remaining,
            } => {
                while remaining > 0 {
                    let start = self.wbuf.len();
                    let k = remaining.min(INLINE_BODY as u64) as usize;
                    self.wbuf.resize(start + k, 0);
                    // A blocking read, but of page-cache-hot data in the common case.
                    let n = file.read(&mut self.wbuf[start..])?;
                    if n == 0 {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                    self.wbuf.truncate(start + n);
                    remaining -= n as u64;
                    self.flush().await?;
                }
                Ok(())
            }
            Tail::Pieces(mut pieces) => {
                // Each piece leaves on its own, after its wait.
                self.flush().await?;
                while let Some((due, piece)) = pieces.next_due(std::time::Instant::now()) {
                    tokio::time::sleep_until(due.into()).await;
                    crate::pieces::push(&mut self.wbuf, &piece, pieces.chunked);
                    self.flush().await?;
                }
                if pieces.chunked {
                    self.wbuf.extend_from_slice(b"0\r\n\r\n");
                }
                self.flush().await
            }
        }
    }

    /// Writes the whole write buffer: usually one syscall; waits (bounded) if the peer is slow.
    async fn flush(&mut self) -> io::Result<()> {
        let (done, r) = self
            .stream
            .write_out(&self.wbuf, self.w.cfg.idle_timeout)
            .await;
        self.w.stats().bytes_out(done);
        r?;
        self.wbuf.clear();
        if self.wbuf.capacity() > WRITE_BUF_KEEP {
            self.wbuf = Vec::with_capacity(READ_BUF);
        }
        Ok(())
    }

    /// A deadline passed: idle connections just close; a half-sent request gets a 408.
    async fn timed_out(&mut self) -> End {
        if let Waiting::Nothing = self.waiting {
            return End::Close;
        }
        let peer = self.peer.as_bytes();
        let _ = refuse(&self.w, peer, &mut self.wbuf, 408, None);
        let _ = self.flush().await;
        End::Linger
    }
}

fn need_body(
    waiting: &mut Waiting,
    continue_sent: &mut bool,
    wbuf: &mut Vec<u8>,
    head: &Head,
) -> Step {
    if !matches!(waiting, Waiting::Body(_)) {
        *waiting = Waiting::Body(Instant::now());
    }
    if head.expect_continue && !*continue_sent {
        wbuf.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        *continue_sent = true;
    }
    Step::NeedMore
}

/// Answers a request that cannot be served (bad head, timeout) and marks the connection to close.
fn refuse(w: &Worker, peer: &[u8], wbuf: &mut Vec<u8>, status: u16, head: Option<&Head>) -> Step {
    let wall = w.wall.borrow();
    let x = Exchange {
        version: 1,
        keep_alive: false,
        head_only: false,
        date: &wall.http,
        alt_svc: &w.alt_svc,
    };
    let mark = wbuf.len();
    let bytes = response::plain(wbuf, &x, status);
    w.record(
        &Entry {
            peer,
            clf_date: &wall.clf,
            method: head.map_or("-", |h| h.method_str),
            target: head.map_or("-", |h| h.target),
            version: head.map(|h| h.version),
            status,
            bytes,
        },
        Route::Other,
    );
    Step::Next {
        close: true,
        reply: Reply::Done,
        mark,
    }
}
