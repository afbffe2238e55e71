//! One connection's byte stream, whatever carries it: TCP, a Unix socket, or
//! TLS over either. An enum rather than a boxed trait object: one predictable
//! branch per read or write, no allocation per connection beyond TLS's own.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::client::TlsStream;

pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream<Stream>>),
}

impl Stream {
    /// True for streams read by readiness (`readable` + `try_read`) into the
    /// worker's shared scratch buffer; TLS keeps its own buffering.
    pub(crate) fn is_plain(&self) -> bool {
        !matches!(self, Stream::Tls(_))
    }

    /// Waits until a plain stream has something to read (or is closed).
    pub(crate) async fn readable(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.readable().await,
            Stream::Unix(s) => s.readable().await,
            Stream::Tls(_) => Ok(()),
        }
    }

    /// Reads what a plain stream has without waiting (`WouldBlock` if nothing).
    pub(crate) fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.try_read(buf),
            Stream::Unix(s) => s.try_read(buf),
            Stream::Tls(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, data),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, data),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
