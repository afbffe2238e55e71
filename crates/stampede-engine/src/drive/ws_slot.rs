//! One WebSocket connection on tokio, only I/O and waiting: it connects
//! (TCP or Unix, TLS for `wss://`, through net/transport/), writes what
//! the I/O-free session (exchange/ws_session.rs) puts in its outbox, and
//! hands every read to ws_conn.rs, which books what the session says
//! happened (the epoll reactor's slot, reactor/epoll/ws.rs, does the
//! same). One message is in flight at a time: the closed model sends the
//! next when the last is answered, the open model hands the slot its next
//! intended instant (drive/open.rs's dispatch, as for HTTP/1.1). Each
//! message is booked as one request, its latency from the intended send.

use crate::drive::ws_conn::{answer_timeout, Sent, WsConn};
use crate::exchange::ws_session::{WsFailure, WsSession};
use crate::net::transport::Stream;
use crate::worker::context::ConnectionContext;
use std::convert::Infallible;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The longest wait for the server's close after the client's, at the end.
pub(crate) const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// One connection slot: its stream and session while connected.
pub(crate) struct WsSlot {
    stream: Option<Stream>,
    pub(crate) conn: WsConn,
    buf: Box<[u8]>,
    /// Bytes of the session's outbox written so far: a write cut off at
    /// the run's end goes on from here, so no frame is sent twice.
    out_at: usize,
    /// The last read filled the buffer: more may wait behind it.
    read_full: bool,
}

impl WsSlot {
    /// Slot `index` of its worker; `seed` draws its keys and masks.
    pub(crate) fn new(index: usize, seed: u64) -> WsSlot {
        WsSlot {
            stream: None,
            conn: WsConn::new(index, seed),
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            out_at: 0,
            read_full: false,
        }
    }

    /// Sends one message meant to leave at `intended` and waits for its
    /// reply, connecting and upgrading first when the slot has no open
    /// connection; books how it ended. Then a scenario's `close = true`
    /// closes the connection and its `think` pauses the user (its idle
    /// connection read meanwhile: pings, a close, an end). False when the
    /// user is done (its feeder ran out, its iterations are walked).
    pub(crate) async fn round_trip(&mut self, ctx: &ConnectionContext, intended: Instant) -> bool {
        self.exchange(ctx, intended).await;
        if self.conn.take_close_after() {
            self.close(ctx).await;
        }
        if let Some(think) = self.conn.take_think() {
            tokio::select! {
                () = tokio::time::sleep(think) => {}
                never = self.keep_reading(ctx) => match never {},
            }
        }
        !self.conn.user_done()
    }

    /// [`WsSlot::round_trip`]'s message and its reply.
    async fn exchange(&mut self, ctx: &ConnectionContext, intended: Instant) {
        // What came while the connection was idle is read first: a close
        // or an end already there means the message goes on a new
        // connection, not into one the server has left.
        self.read_ready(ctx).await;
        while !self.conn.is_open() {
            self.drop_connection(ctx);
            let Err(failure) = self.open(ctx).await else {
                self.conn.backoff.succeeded();
                break;
            };
            if self.conn.carry_unsent() {
                // Ended after its upgrade before the message left: the
                // message goes on the next connection (ws_conn.rs's rule).
                continue;
            }
            self.conn.note(ctx, &failure);
            self.conn.fail_unsent(ctx, intended, failure.kind);
            self.drop_connection(ctx);
            let delay = ctx.state.connect_backoff(&mut self.conn.backoff);
            ctx.state.wait_out_backoff(delay).await;
            return;
        }
        let sent = Instant::now();
        match self.conn.send_next(ctx, intended) {
            Sent::Framed => {}
            // Booked failed at once: the loop yields before the next.
            Sent::Failed => return tokio::task::yield_now().await,
            Sent::Nothing => return,
        }
        let deadline = tokio::time::Instant::from_std(sent + ctx.timeout);
        let answered = tokio::time::timeout_at(deadline, self.until_answered(ctx, sent)).await;
        let failure = match answered {
            Ok(Ok(())) => return,
            Ok(Err(failure)) => failure,
            Err(_) => answer_timeout(false),
        };
        self.give_up(ctx, sent, failure).await;
    }

    /// The connection failed: its unanswered messages are booked failed,
    /// the close the session wrote (an answer to the server's, a bad
    /// frame's code, or ws_conn.rs's 1008 on a timeout) goes out if the
    /// connection takes it, and the connection is dropped: it cannot be
    /// trusted to answer in order any more.
    async fn give_up(&mut self, ctx: &ConnectionContext, sent: Instant, failure: WsFailure) {
        self.conn.note(ctx, &failure);
        self.conn.fail_unanswered(ctx, sent, failure.kind);
        self.flush_quietly(ctx).await;
        self.drop_connection(ctx);
    }

    /// Reads an idle open connection for as long as it lasts (never
    /// resolves): pings are answered, and a close, an end or an error is
    /// booked at once and drops the connection, so that the next message
    /// goes on a new one. The open model runs it while the slot waits for
    /// its next message.
    pub(crate) async fn keep_reading(&mut self, ctx: &ConnectionContext) -> Infallible {
        if self.stream.is_some() && self.conn.is_open() {
            let failure = self.idle(ctx).await;
            self.give_up(ctx, Instant::now(), failure).await;
        }
        std::future::pending().await
    }

    /// [`WsSlot::keep_reading`] for what is there already, without
    /// waiting, when the last read filled the buffer (a short one took all
    /// there was: no syscall more per message).
    async fn read_ready(&mut self, ctx: &ConnectionContext) {
        if self.stream.is_none() || !self.conn.is_open() || !self.read_full {
            return;
        }
        let failure = tokio::select! {
            biased;
            failure = self.idle(ctx) => failure,
            () = std::future::ready(()) => return,
        };
        self.give_up(ctx, Instant::now(), failure).await;
    }

    /// Reads (and writes the pongs) until the connection fails.
    async fn idle(&mut self, ctx: &ConnectionContext) -> WsFailure {
        loop {
            let step = match self.flush(ctx).await {
                Ok(()) => self.read_once(ctx, Instant::now()).await,
                Err(failure) => Err(failure),
            };
            if let Err(failure) = step {
                return failure;
            }
        }
    }

    /// Ends the slot's connection with a close (1000; ws_conn.rs's
    /// `close`: a message in flight is left unfinished), waiting a moment
    /// for the server's: the client is done. It may follow a round trip
    /// cut off at any await (the run's end): the outbox is written on from
    /// where the cut left it.
    pub(crate) async fn close(&mut self, ctx: &ConnectionContext) {
        if self.stream.is_some() && self.conn.close() {
            let deadline = tokio::time::Instant::now() + CLOSE_WAIT.min(ctx.timeout);
            let _ = tokio::time::timeout_at(deadline, self.until_closed(ctx)).await;
        }
        self.drop_connection(ctx);
    }

    async fn until_closed(&mut self, ctx: &ConnectionContext) -> Result<(), WsFailure> {
        loop {
            self.flush(ctx).await?;
            if self.conn.session.as_ref().is_none_or(WsSession::is_closed) {
                return Ok(());
            }
            self.read_once(ctx, Instant::now()).await?;
        }
    }

    /// Connects and upgrades.
    async fn open(&mut self, ctx: &ConnectionContext) -> Result<(), WsFailure> {
        let started = Instant::now();
        let (stream, times) = ctx
            .connect_counted(&ctx.connector, ctx.connect_timeout_of(0))
            .await
            .map_err(|failure| WsFailure {
                kind: failure.kind,
                reason: failure.reason.unwrap_or_default(),
            })?;
        ctx.state.connection_opened(false, times.connect);
        self.stream = Some(stream);
        self.conn.connected(ctx, started);
        let deadline = tokio::time::Instant::from_std(Instant::now() + ctx.timeout);
        let upgrade = async {
            while !self.conn.is_open() {
                self.flush(ctx).await?;
                self.read_once(ctx, started).await?;
            }
            Ok(())
        };
        match tokio::time::timeout_at(deadline, upgrade).await {
            Ok(result) => result,
            Err(_) => Err(answer_timeout(true)),
        }
    }

    /// Reads until no message is unanswered.
    async fn until_answered(
        &mut self,
        ctx: &ConnectionContext,
        sent: Instant,
    ) -> Result<(), WsFailure> {
        loop {
            self.flush(ctx).await?;
            if (self.conn.session.as_ref()).is_none_or(|s| s.unanswered() == 0) {
                return Ok(());
            }
            self.read_once(ctx, sent).await?;
        }
    }

    /// Writes the session's outbox; books the frame bytes it held.
    async fn flush(&mut self, ctx: &ConnectionContext) -> Result<(), WsFailure> {
        let (Some(stream), Some(session)) = (self.stream.as_mut(), self.conn.session.as_ref())
        else {
            return Ok(());
        };
        let outbox = session.outbox();
        if outbox.is_empty() {
            return Ok(());
        }
        while self.out_at < outbox.len() {
            let written = match stream.write(&outbox[self.out_at..]).await {
                Ok(0) => Err(std::io::ErrorKind::WriteZero.into()),
                other => other,
            };
            match written {
                Ok(n) => self.out_at += n,
                Err(e) => return Err(self.conn.io_failed(ctx, "writing", &e)),
            }
        }
        self.out_at = 0;
        self.conn.written(ctx);
        Ok(())
    }

    /// Writes what is left to write, if the connection takes it (a close
    /// after an error), ignoring errors: the connection is going anyway.
    async fn flush_quietly(&mut self, ctx: &ConnectionContext) {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(100);
        let _ = tokio::time::timeout_at(deadline, self.flush(ctx)).await;
    }

    /// One read handed to the session, and its events booked.
    async fn read_once(&mut self, ctx: &ConnectionContext, sent: Instant) -> Result<(), WsFailure> {
        let stream = self.stream.as_mut().expect("connected");
        let n = match stream.read(&mut self.buf).await {
            Ok(n) => {
                self.read_full = n == self.buf.len();
                n
            }
            Err(e) => return Err(self.conn.io_failed(ctx, "reading", &e)),
        };
        if n == 0 {
            return Err(self.conn.end_of_stream(ctx));
        }
        let result = self
            .conn
            .received(ctx, &self.buf[..n], sent, Instant::now());
        if result.is_err() {
            // A close's answer, or the close a bad frame earned, goes out.
            self.flush_quietly(ctx).await;
        }
        result
    }

    fn drop_connection(&mut self, ctx: &ConnectionContext) {
        if self.stream.take().is_some() {
            ctx.state.connection_closed();
        }
        self.out_at = 0;
        self.conn.gone();
    }
}
