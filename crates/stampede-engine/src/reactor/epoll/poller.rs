//! A thin safe wrapper over one epoll instance. Every socket is registered
//! once, edge-triggered, for reading and writing: after that the hot path
//! makes no epoll_ctl call at all (wrk pays two per request).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// What a socket is registered for: both directions, peer half-close, edge-triggered.
const INTEREST: u32 = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;

/// Readiness that means "try to read" (data, end of stream, or an error to collect).
pub const READABLE: u32 =
    (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
/// Readiness that says the peer is gone or going: read to the end of stream.
pub const PEER_CLOSED: u32 = (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
/// Readiness that means "try to write" (or collect an error).
pub const WRITABLE: u32 = (libc::EPOLLOUT | libc::EPOLLHUP | libc::EPOLLERR) as u32;

#[derive(Debug)]
pub struct Poller {
    epoll: OwnedFd,
}

impl Poller {
    pub fn new() -> io::Result<Poller> {
        // SAFETY: epoll_create1 takes no pointers; the fd is checked and then owned.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor nobody else owns.
        Ok(Poller {
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Registers `fd` with `token`. Closing the fd unregisters it.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: INTEREST,
            u64: token,
        };
        // SAFETY: the event struct outlives the call; both fds are open.
        let rc =
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout_ms` for events; returns how many of `events` are
    /// filled (0 on timeout or on a signal).
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        let capacity = events.len().min(i32::MAX as usize) as i32;
        // SAFETY: the kernel writes at most `capacity` events into the slice.
        let n = unsafe {
            libc::epoll_wait(
                self.epoll.as_raw_fd(),
                events.as_mut_ptr(),
                capacity,
                timeout_ms,
            )
        };
        if n < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(error);
        }
        Ok(n as usize)
    }
}

/// An empty event array for [`Poller::wait`].
pub fn event_buffer(capacity: usize) -> Vec<libc::epoll_event> {
    vec![libc::epoll_event { events: 0, u64: 0 }; capacity]
}
