//! The byte streams a connection runs on (TCP, Unix, TLS over either, and a replayed
//! prefix for h2c), the guard that counts a connection open, and the lingering close.
//! Which loop serves an accepted connection is chosen in `worker` (`spawn`).
//!
//! The plain TCP path stays what it was: `Transport` is static dispatch, TCP and Unix
//! streams keep the one-`try_write` flush, and a plain connection's task never holds
//! the (larger) TLS or HTTP/2 state: those are spawned as other task types or boxed.
//! It does not parse HTTP (see `conn`, `http2`) nor configure TLS (see `tls`).

use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use crate::context::Worker;

/// A stream a connection can be served on.
pub(crate) trait Transport: AsyncRead + AsyncWrite + Unpin + 'static {
    /// Writes all of `buf`, waiting at most `limit` for a slow peer. Returns the
    /// bytes written (also on failure, for the counters) and the outcome.
    #[allow(async_fn_in_trait)] // crate-private; always used with static dispatch
    async fn write_out(&mut self, buf: &[u8], limit: Duration) -> (usize, io::Result<()>) {
        let mut done = 0;
        let r = tokio::time::timeout(limit, async {
            while done < buf.len() {
                match self.write(&buf[done..]).await? {
                    0 => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                    n => done += n,
                }
            }
            // TLS: push the records out of rustls' buffer now, not at the next write.
            self.flush().await
        })
        .await;
        (
            done,
            r.unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into())),
        )
    }
}

/// The kernel-socket flush: usually one `write` syscall, no waker registration unless
/// the socket buffer is full (the hot path of plain HTTP/1.1).
macro_rules! socket_transport {
    ($t:ty) => {
        impl Transport for $t {
            async fn write_out(&mut self, buf: &[u8], limit: Duration) -> (usize, io::Result<()>) {
                let total = buf.len();
                let mut done = match self.try_write(buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
                    Err(e) => return (0, Err(e)),
                };
                if done == total {
                    return (done, Ok(()));
                }
                let r = tokio::time::timeout(limit, async {
                    while done < total {
                        self.writable().await?;
                        match self.try_write(&buf[done..]) {
                            Ok(n) => done += n,
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                            Err(e) => return Err(e),
                        }
                    }
                    Ok(())
                })
                .await;
                (
                    done,
                    r.unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into())),
                )
            }
        }
    };
}

socket_transport!(TcpStream);
socket_transport!(UnixStream);

impl<S: Transport> Transport for tokio_rustls::server::TlsStream<S> {}

impl<S: Transport> Transport for Rewind<S> {}

/// The peer as the access log shows it: an IP address, or `unix` for a Unix socket.
#[derive(Clone, Copy)]
pub(crate) struct Peer {
    buf: [u8; 48],
    len: usize,
}

impl Peer {
    pub(crate) fn ip(ip: IpAddr) -> Self {
        let mut buf = [0u8; 48];
        let mut cur = io::Cursor::new(&mut buf[..]);
        let _ = io::Write::write_fmt(&mut cur, format_args!("{ip}"));
        let len = cur.position() as usize;
        Peer { buf, len }
    }

    pub(crate) fn unix() -> Self {
        let mut buf = [0u8; 48];
        buf[..4].copy_from_slice(b"unix");
        Peer { buf, len: 4 }
    }

    #[inline]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Counts the connection as closed however its task ends (also when dropped at shutdown).
pub(crate) struct OpenGuard(Rc<Worker>);

impl OpenGuard {
    pub(crate) fn new(w: Rc<Worker>) -> Self {
        OpenGuard(w)
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        let w = &self.0;
        w.stats().closed();
        w.registry
            .open
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        w.open.set(w.open.get().saturating_sub(1));
        if w.stopping.get() && w.open.get() == 0 {
            w.drained.notify_one();
        }
    }
}

/// Half-closes, then reads and discards briefly, so that unread request bytes do not
/// turn the close into a reset that destroys the response in flight.
pub(crate) async fn linger<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S) {
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let mut total = 0usize;
        while let Ok(n) = stream.read(&mut sink).await {
            total += n;
            if n == 0 || total > 1 << 20 {
                break;
            }
        }
    })
    .await;
}

/// A stream whose first bytes were already read (the h2c preface sniffed by `conn`):
/// replays them, then reads from the stream.
pub(crate) struct Rewind<S> {
    prefix: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S> Rewind<S> {
    pub(crate) fn new(prefix: Vec<u8>, inner: S) -> Self {
        Rewind {
            prefix,
            pos: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.pos < me.prefix.len() {
            let n = (me.prefix.len() - me.pos).min(buf.remaining());
            buf.put_slice(&me.prefix[me.pos..me.pos + n]);
            me.pos += n;
            if me.pos == me.prefix.len() {
                me.prefix = Vec::new();
                me.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut me.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
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

    #[tokio::test]
    async fn rewind_replays_then_reads_on() {
        let (a, mut b) = tokio::io::duplex(64);
        b.write_all(b" world").await.unwrap();
        drop(b);
        let mut r = Rewind::new(b"hello".to_vec(), a);
        let mut s = String::new();
        r.read_to_string(&mut s).await.unwrap();
        assert_eq!(s, "hello world");
        assert_eq!(Peer::unix().as_bytes(), b"unix");
        assert_eq!(Peer::ip("::1".parse().unwrap()).as_bytes(), b"::1");
    }
}
