//! Sub-millisecond sleeps for the open-model pacer. tokio's timer wheel has
//! 1 ms granularity and rounds up, which would add ~0.5 ms of client-side
//! delay to every paced request's latency; a timerfd (hrtimer-backed, Linux)
//! registered with the worker's event loop wakes within microseconds.
//! Falls back to tokio's timer when a timerfd cannot be created.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A timer owned by one task of one worker.
pub(crate) struct PreciseTimer {
    fd: Option<AsyncFd<OwnedFd>>,
}

impl PreciseTimer {
    /// Must be called inside the worker's runtime (the fd joins its event loop).
    pub(crate) fn new() -> PreciseTimer {
        // SAFETY: timerfd_create has no memory preconditions; the fd it returns
        // (if any) is owned by the OwnedFd from here on.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        let fd = (raw >= 0)
            // SAFETY: `raw` is a fresh fd nobody else owns.
            .then(|| unsafe { OwnedFd::from_raw_fd(raw) })
            // SAFETY: an OwnedFd keeps its fd open and unchanged until dropped,
            // and the AsyncFd owns it for its whole life.
            .and_then(|owned| {
                unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }.ok()
            });
        PreciseTimer { fd }
    }

    /// Waits until `at` (returns at once when it has passed).
    pub(crate) async fn sleep_until(&mut self, at: Instant) {
        let now = Instant::now();
        if at <= now {
            return;
        }
        let Some(fd) = &self.fd else {
            tokio::time::sleep_until(at.into()).await;
            return;
        };
        let wait = at - now;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: wait.as_secs() as libc::time_t,
                tv_nsec: wait.subsec_nanos().max(1) as libc::c_long,
            },
        };
        // SAFETY: the fd is a valid timerfd we own; spec outlives the call.
        let armed =
            unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if armed != 0 {
            tokio::time::sleep_until(at.into()).await;
            return;
        }
        loop {
            let Ok(mut guard) = fd.readable().await else {
                tokio::time::sleep_until(at.into()).await;
                return;
            };
            let mut expirations = [0u8; 8];
            // SAFETY: reading 8 bytes into our own buffer from our timerfd.
            let n = unsafe {
                libc::read(
                    fd.as_raw_fd(),
                    expirations.as_mut_ptr().cast(),
                    expirations.len(),
                )
            };
            if n == 8 {
                return;
            }
            guard.clear_ready();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn wakes_close_to_the_instant() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut timer = PreciseTimer::new();
            let mut worst = Duration::ZERO;
            for _ in 0..20 {
                let at = Instant::now() + Duration::from_micros(300);
                timer.sleep_until(at).await;
                let woke = Instant::now();
                assert!(woke >= at, "never early");
                worst = worst.max(woke - at);
            }
            // Generous bound for a loaded CI machine; tokio's timer alone
            // would be late by up to a millisecond every time.
            assert!(
                worst < Duration::from_millis(20),
                "worst lateness {worst:?}"
            );
        });
    }
}
