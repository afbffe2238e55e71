//! A thin safe wrapper over one epoll instance. Every socket is registered
//! once, edge-triggered, for reading and writing: after that the hot path
//! makes no epoll_ctl call at all (wrk pays two per request).

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// What a socket is registered for: both directions, peer half-close, edge-triggered.
const INTEREST: u32 = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;

/// Readiness that means "try to read" (data, end of stream, or an error to collect).
pub(super) const READABLE: u32 =
    (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
/// Readiness that says the peer is gone or going: read to the end of stream.
pub(super) const PEER_CLOSED: u32 = (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
/// Readiness that means "try to write" (or collect an error).
pub(super) const WRITABLE: u32 = (libc::EPOLLOUT | libc::EPOLLHUP | libc::EPOLLERR) as u32;

#[derive(Debug)]
pub(super) struct Poller {
    epoll: OwnedFd,
    /// The kernel has epoll_pwait2 (until it says ENOSYS).
    has_pwait2: Cell<bool>,
}

impl Poller {
    pub(super) fn new() -> io::Result<Poller> {
        // SAFETY: epoll_create1 takes no pointers; the fd is checked and then owned.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor nobody else owns.
        Ok(Poller {
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
            has_pwait2: Cell::new(true),
        })
    }

    /// Registers `fd` with `token`. Closing the fd unregisters it.
    pub(super) fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
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

    /// Waits up to `timeout` for events; returns how many of `events` are
    /// filled (0 on timeout or on a signal). The timeout is kept to the
    /// nanosecond with epoll_pwait2 (Linux 5.11); where the kernel lacks it,
    /// epoll_wait's milliseconds, rounded up.
    pub(super) fn wait(
        &self,
        events: &mut [libc::epoll_event],
        timeout: Duration,
    ) -> io::Result<usize> {
        let capacity = events.len().min(i32::MAX as usize) as i32;
        let n = if self.has_pwait2.get() {
            let timespec = libc::timespec {
                tv_sec: timeout.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
                tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
            };
            // SAFETY: the kernel writes at most `capacity` events into the
            // slice and reads the timespec, both alive for the call; no
            // signal mask is passed (null, size 0).
            let n = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.epoll.as_raw_fd(),
                    events.as_mut_ptr(),
                    capacity,
                    &timespec as *const libc::timespec,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            };
            if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                self.has_pwait2.set(false);
                return self.wait(events, timeout);
            }
            n as i32
        } else {
            // SAFETY: the kernel writes at most `capacity` events into the slice.
            unsafe {
                libc::epoll_wait(
                    self.epoll.as_raw_fd(),
                    events.as_mut_ptr(),
                    capacity,
                    millis_rounded_up(timeout),
                )
            }
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

/// `timeout` in whole milliseconds, rounded up (epoll_wait's unit: a wait
/// must not end before the instant it waits for).
fn millis_rounded_up(timeout: Duration) -> i32 {
    timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
}

/// An empty event array for [`Poller::wait`].
pub(super) fn event_buffer(capacity: usize) -> Vec<libc::epoll_event> {
    vec![libc::epoll_event { events: 0, u64: 0 }; capacity]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn waits_round_up_to_whole_milliseconds_without_pwait2() {
        assert_eq!(millis_rounded_up(Duration::ZERO), 0);
        assert_eq!(millis_rounded_up(Duration::from_micros(1)), 1);
        assert_eq!(millis_rounded_up(Duration::from_millis(7)), 7);
    }

    #[test]
    fn a_wait_with_no_events_lasts_its_timeout_either_way() {
        let poller = Poller::new().expect("epoll");
        let mut events = event_buffer(4);
        for pwait2 in [true, false] {
            poller.has_pwait2.set(pwait2);
            let started = Instant::now();
            let ready = poller
                .wait(&mut events, Duration::from_micros(1500))
                .expect("wait");
            assert_eq!(ready, 0);
            assert!(
                started.elapsed() >= Duration::from_micros(1500),
                "pwait2 {pwait2}"
            );
        }
    }
}
