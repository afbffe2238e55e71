//! Connect backoff, one rule for every event loop (the tokio path, HTTP/2 and
//! both reactors): after consecutive failures to open a connection, a
//! connection waits before its next attempt, 10 ms doubling to 1 s, and a
//! connection that opens resets it. Without it a dead or refused target is
//! retried as fast as the loop spins (20 connections made 277,939 attempts in
//! 2 s), and the error counts and the error rate measure the client's speed
//! rather than the server. Every failed attempt still counts as one request
//! (an `errors.connect_*`, one of `-n`). A TLS handshake the server refuses
//! after the client's side of it completed (an `errors.tls` before the
//! connection's first response) is backed off the same way. The state is touched only on a
//! connect failure and when a connection opens, never per request. A leaf: the
//! tokio path waits with [`crate::worker::worker_state::WorkerState::wait_out_backoff`].

use std::time::Duration;

/// The wait after the first failure.
pub(crate) const FIRST: Duration = Duration::from_millis(10);
/// The longest wait between two attempts of one connection.
pub(crate) const MAX: Duration = Duration::from_secs(1);

/// Consecutive connect failures of one connection.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Backoff {
    failures: u32,
    /// `failures` when the connection last opened, for [`Backoff::refused`].
    failures_before_open: u32,
}

impl Backoff {
    /// A connect failed: how long to wait before the next attempt.
    pub(crate) fn failed(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let doublings = (self.failures - 1).min(16);
        (FIRST * 2u32.pow(doublings)).min(MAX)
    }

    /// A connection opened: the next failure waits the first delay again.
    pub(crate) fn succeeded(&mut self) {
        self.failures_before_open = self.failures;
        self.failures = 0;
    }

    /// The server refused the TLS handshake of the connection that just
    /// opened, before its first response (TLS 1.3 completes the client's
    /// side first; a server requiring a client certificate says no on the
    /// first read): the open does not count, so the
    /// [`Backoff::failed`] that follows goes on doubling.
    pub(crate) fn refused(&mut self) {
        self.failures = self.failures_before_open;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_10ms_to_1s_and_resets_on_success() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..10)
            .map(|_| backoff.failed().as_millis() as u64)
            .collect();
        assert_eq!(waits, vec![10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        for _ in 0..100 {
            assert_eq!(backoff.failed(), MAX);
        }
        backoff.succeeded();
        assert_eq!(backoff.failed(), FIRST);
    }

    #[test]
    fn refused_handshakes_double_as_failed_connects() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..4)
            .map(|_| {
                backoff.succeeded();
                backoff.refused();
                backoff.failed().as_millis() as u64
            })
            .collect();
        assert_eq!(waits, vec![10, 20, 40, 80]);
        backoff.succeeded();
        assert_eq!(backoff.failed(), FIRST, "an open that answered resets it");
    }
}
