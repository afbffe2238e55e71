//! One upgraded WebSocket connection (`/ws/echo`, `/ws/push/{n}/{ms}`):
//! frames read through stampede-websocket's sans-I/O decoder, answered on
//! the worker's own event loop. Echo sends each text and binary message
//! back as it came; push sends its messages on a timer. Both answer pings
//! with pongs and take part in the close handshake (RFC 6455 §7): a close
//! from the client is answered with its code and the TCP connection
//! closed (§7.1.1: the server closes first); after its own close the
//! server waits at most `CLOSE_WAIT` for the client's. A bad frame ends
//! the connection with the close code its error names (§7.1.7). Idle past
//! `Config::idle_timeout`, or at shutdown, the server closes with 1001.

use std::io;

use stampede_websocket::{
    encode_close, encode_control, encode_message, Decoder, Event, MessageKind, Opcode, Role,
};
use tokio::io::AsyncReadExt;
use tokio::time::{sleep_until, Duration, Instant};

use crate::context::Worker;
use crate::transport::{linger, Transport};
use crate::ws_route::WsRoute;

/// How long the server waits for the client's close after sending its own.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// 1001: going away (idle, or the server shutting down).
const GOING_AWAY: u16 = 1001;

/// How the session ended, for the connection's close.
enum End {
    /// The close handshake is done, or the peer went: close now.
    Close,
    /// A bad frame: the client may still be sending; drain before closing.
    Linger,
}

/// `/ws/push`'s next message.
struct Push {
    next: u64,
    n: u64,
    every: Duration,
    due: Instant,
}

struct Session<'a, S> {
    stream: &'a mut S,
    w: &'a Worker,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    /// Set once the server's close is queued: when it gives up waiting.
    closing_until: Option<Instant>,
}

/// Serves the connection after the 101. `rbuf` holds the bytes that came
/// after the handshake request (the client's first frames, maybe).
pub(crate) async fn serve<S: Transport>(stream: &mut S, rbuf: Vec<u8>, w: &Worker, ws: WsRoute) {
    w.stats().ws_session();
    let mut s = Session {
        stream,
        w,
        rbuf,
        wbuf: Vec::with_capacity(8 * 1024),
        closing_until: None,
    };
    let end = s.run(ws).await.unwrap_or(End::Close);
    if let End::Linger = end {
        linger(s.stream).await;
    }
}

impl<S: Transport> Session<'_, S> {
    async fn run(&mut self, ws: WsRoute) -> io::Result<End> {
        let cfg = self.w.cfg.clone();
        let echo = ws == WsRoute::Echo;
        let mut push = match ws {
            WsRoute::Echo => None,
            WsRoute::Push { n, every } => Some(Push {
                next: 0,
                n,
                every,
                due: Instant::now(),
            }),
        };
        let mut decoder = Decoder::new(Role::Server, cfg.max_body);
        let stop = self.w.stop_notify.notified();
        tokio::pin!(stop);
        let mut last_input = Instant::now();
        loop {
            // 1. Every event in what was read.
            let mut pos = 0;
            loop {
                let decoded = match decoder.decode(&mut self.rbuf[pos..]) {
                    Ok(d) => d,
                    Err(e) => {
                        // After the answers to the frames before it (a pong, an echo).
                        let reason = e.to_string();
                        if encode_close(&mut self.wbuf, Some(e.close_code()), &reason, None)
                            .is_err()
                        {
                            let _ = encode_close(&mut self.wbuf, Some(e.close_code()), "", None);
                        }
                        self.flush().await?;
                        return Ok(End::Linger);
                    }
                };
                pos += decoded.consumed;
                let closing = self.closing_until.is_some();
                match decoded.event {
                    None => break,
                    Some(Event::Text(_) | Event::Binary(_)) if !echo || closing => {
                        self.w.stats().ws_message_in();
                    }
                    Some(Event::Text(t)) => {
                        self.w.stats().ws_message_in();
                        encode_message(&mut self.wbuf, MessageKind::Text, t.as_bytes(), None);
                        self.w.stats().ws_message_out();
                    }
                    Some(Event::Binary(b)) => {
                        self.w.stats().ws_message_in();
                        encode_message(&mut self.wbuf, MessageKind::Binary, b, None);
                        self.w.stats().ws_message_out();
                    }
                    Some(Event::Ping(p)) if !closing => {
                        // A ping's payload is at most 125 bytes: the pong fits.
                        let _ = encode_control(&mut self.wbuf, Opcode::Pong, p, None);
                    }
                    Some(Event::Close(frame)) => {
                        if !closing {
                            // §5.5.1: answer with the code received.
                            let _ = encode_close(&mut self.wbuf, frame.map(|f| f.code), "", None);
                        }
                        self.flush().await?;
                        return Ok(End::Close);
                    }
                    Some(_) => {}
                }
            }
            self.rbuf.drain(..pos);
            if !self.wbuf.is_empty() {
                self.flush().await?;
            }
            if self.closing_until.is_none() && self.w.stopping.get() {
                self.close(GOING_AWAY, "shutting down").await?;
            }
            // 2. Wait for input, the next push, or a deadline.
            let deadline = match self.closing_until {
                Some(t) => t,
                None => last_input + cfg.idle_timeout,
            };
            let push_due = push
                .as_ref()
                .filter(|_| self.closing_until.is_none())
                .map(|p| p.due);
            if self.rbuf.capacity() - self.rbuf.len() < 1024 {
                self.rbuf.reserve(8 * 1024);
            }
            tokio::select! {
                biased;
                r = self.stream.read_buf(&mut self.rbuf) => match r {
                    Ok(0) | Err(_) => return Ok(End::Close),
                    Ok(_) => last_input = Instant::now(),
                },
                _ = sleep_until(push_due.unwrap_or(deadline)), if push_due.is_some() => {
                    if let Some(p) = push.as_mut() {
                        if p.next < p.n {
                            let text = p.next.to_string();
                            encode_message(&mut self.wbuf, MessageKind::Text, text.as_bytes(), None);
                            self.w.stats().ws_message_out();
                            p.next += 1;
                            // The schedule keeps its instants: a late timer does not shift the rest.
                            p.due += p.every;
                        }
                        if p.next == p.n {
                            self.close(stampede_websocket::CLOSE_NORMAL, "").await?;
                        } else {
                            self.flush().await?;
                        }
                    }
                }
                _ = sleep_until(deadline) => {
                    if self.closing_until.is_some() {
                        return Ok(End::Close);
                    }
                    self.close(GOING_AWAY, "idle").await?;
                }
                _ = &mut stop, if self.closing_until.is_none() => {
                    self.close(GOING_AWAY, "shutting down").await?;
                }
            }
        }
    }

    /// Sends the server's close (after anything queued) and starts the wait for the client's.
    async fn close(&mut self, code: u16, reason: &str) -> io::Result<()> {
        let _ = encode_close(&mut self.wbuf, Some(code), reason, None);
        self.closing_until = Some(Instant::now() + CLOSE_WAIT);
        self.flush().await
    }

    async fn flush(&mut self) -> io::Result<()> {
        let (done, r) = self
            .stream
            .write_out(&self.wbuf, self.w.cfg.idle_timeout)
            .await;
        self.w.stats().bytes_out(done);
        self.wbuf.clear();
        r
    }
}
