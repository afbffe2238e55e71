//! Sockets for the reactors: open (TCP from the next source address, or
//! Unix), non-blocking for epoll or unconnected for io_uring; send, receive
//! and collect a connect error for epoll. Plain syscalls on the fd, so TCP
//! and Unix streams share one path.

use crate::net::source_addrs::{defer_port_choice, SourceAddrs};
use crate::net::transport::Endpoint;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Requests longer than this go out with TCP_NODELAY: a request that fits in
/// one segment is never held by Nagle (nothing of ours is unacknowledged when
/// it is written), so short requests save the setsockopt per connection.
const NAGLE_SAFE_REQUEST: usize = 1024;

/// Starts connecting to `endpoint`; the connection may still be in progress
/// when this returns (a TCP connect answers EINPROGRESS).
pub(super) fn open(
    endpoint: &Endpoint,
    sources: &SourceAddrs,
    longest_request: usize,
) -> io::Result<OwnedFd> {
    let socket = new_socket(
        endpoint,
        sources,
        longest_request,
        Type::STREAM.nonblocking(),
    )?;
    match socket.connect(&address_of(endpoint)?) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(with_path(endpoint, e)),
    }
    Ok(socket.into())
}

/// A blocking socket for `endpoint`, bound to the next source address but
/// not connected: io_uring connects it and never blocks on it.
pub(super) fn unconnected(
    endpoint: &Endpoint,
    sources: &SourceAddrs,
    longest_request: usize,
) -> io::Result<OwnedFd> {
    new_socket(endpoint, sources, longest_request, Type::STREAM).map(OwnedFd::from)
}

/// The address `endpoint` is connected to.
pub(super) fn address_of(endpoint: &Endpoint) -> io::Result<SockAddr> {
    match endpoint {
        Endpoint::Tcp(target) => Ok((*target).into()),
        Endpoint::Unix(path) => SockAddr::unix(path).map_err(|e| with_path(endpoint, e)),
    }
}

/// Names the socket file in a Unix socket's error.
pub(super) fn with_path(endpoint: &Endpoint, error: io::Error) -> io::Error {
    match endpoint {
        Endpoint::Unix(path) => {
            io::Error::new(error.kind(), format!("{}: {error}", path.display()))
        }
        Endpoint::Tcp(_) => error,
    }
}

fn new_socket(
    endpoint: &Endpoint,
    sources: &SourceAddrs,
    longest_request: usize,
    kind: Type,
) -> io::Result<Socket> {
    let target = match endpoint {
        Endpoint::Tcp(target) => *target,
        Endpoint::Unix(_) => return Socket::new(Domain::UNIX, kind.cloexec(), None),
    };
    let socket = Socket::new(
        Domain::for_address(target),
        kind.cloexec(),
        Some(Protocol::TCP),
    )?;
    if let Some(local) = sources.take() {
        if local.is_ipv4() {
            defer_port_choice(socket.as_raw_fd());
        }
        socket.bind(&SocketAddr::new(local, 0).into())?;
    }
    if longest_request > NAGLE_SAFE_REQUEST {
        let _ = socket.set_nodelay(true);
    }
    Ok(socket)
}

/// Sends what it can of `bytes`; `WouldBlock` when nothing fits right now
/// (or a TCP connect is still in progress).
/// [`send`] that never waits, whatever the socket's mode (a last close on
/// a connection about to be dropped).
pub(super) fn send_now(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: as in `send`.
    let n = unsafe {
        libc::send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

pub(super) fn send(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: the pointer and length describe a live slice; MSG_NOSIGNAL
        // turns a write to a closed peer into EPIPE instead of SIGPIPE.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Receives into `buffer`; Ok(0) is the end of the stream.
pub(super) fn recv(fd: RawFd, buffer: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: the kernel writes at most `buffer.len()` bytes into it.
        let n = unsafe { libc::recv(fd, buffer.as_mut_ptr().cast(), buffer.len(), 0) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// The error a non-blocking connect ended with, if it failed.
pub(super) fn connect_error(fd: RawFd) -> Option<io::Error> {
    let mut code: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes one c_int into `code` and its size into `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut code as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Some(io::Error::last_os_error());
    }
    (code != 0).then(|| io::Error::from_raw_os_error(code))
}
