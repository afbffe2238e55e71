//! The one rule of a connection's planned end (`--conn-max-requests N`,
//! `--conn-max-age DUR`), asked by every path: the reactors' books
//! (exchange/ledger.rs), the tokio HTTP/1.1 slot (connection.rs) and the
//! HTTP/2 slot (h2_client.rs).
//!
//! A connection is retired by the client once its last response is in:
//! nothing is in flight, so no request can be lost or cut off, and the
//! next request opens a new connection (a planned reconnect, counted apart
//! from errors and from the reconnects after a close by the server). The
//! client closes rather than sending `Connection: close` on the last
//! request: the same rule then holds for fixed, templated, scripted,
//! pipelined and redirected requests and for HTTP/2 (which has no such
//! header), without a second copy of every request's bytes, and it is what
//! Envoy (Nighthawk's max-requests-per-connection) and autocannon's `-D` do.
//! The cost: the client side holds the TIME_WAIT of each retired connection.
//!
//! Without either flag the rule is one branch on a plain bool per response,
//! and no clock is read for it.

use stampede_plan::ConnLifetime;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// When a connection must carry no further request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lifetime {
    limited: bool,
    max_requests: u64,
    max_age: Duration,
}

impl Default for Lifetime {
    fn default() -> Self {
        Lifetime::new(&ConnLifetime::default())
    }
}

impl Lifetime {
    pub(crate) fn new(spec: &ConnLifetime) -> Lifetime {
        Lifetime {
            limited: spec.is_limited(),
            max_requests: spec.max_requests.unwrap_or(u64::MAX),
            max_age: spec.max_age.unwrap_or(Duration::MAX),
        }
    }

    /// True when a connection opened at `opened` that has carried `served`
    /// requests must carry no more; `now` is read only when a limit is set.
    #[inline]
    pub(crate) fn is_over(
        &self,
        served: u64,
        opened: Instant,
        now: impl FnOnce() -> Instant,
    ) -> bool {
        if !self.limited {
            return false;
        }
        served >= self.max_requests || now().saturating_duration_since(opened) >= self.max_age
    }

    /// The books of a new multiplexed (HTTP/2) connection opened at `opened`.
    pub(crate) fn multiplexed(&self, opened: Instant) -> Multiplexed {
        Multiplexed {
            lifetime: *self,
            opened,
            begun: Cell::new(0),
            retired: Cell::new(false),
        }
    }
}

/// One HTTP/2 connection's lifetime: its streams ask before each request,
/// so that once the connection is spent no stream opens another while
/// those in flight finish; then the slot reconnects.
#[derive(Debug)]
pub(crate) struct Multiplexed {
    lifetime: Lifetime,
    opened: Instant,
    /// Requests begun on the connection.
    begun: Cell<u64>,
    /// The lifetime ran out (a planned reconnect follows).
    retired: Cell<bool>,
}

impl Multiplexed {
    /// True (and the request counted) when the connection may carry
    /// another request; false once it is spent.
    #[inline]
    pub(crate) fn begin(&self) -> bool {
        if !self.lifetime.limited {
            return true;
        }
        if self.retired.get()
            || self
                .lifetime
                .is_over(self.begun.get(), self.opened, Instant::now)
        {
            self.retired.set(true);
            return false;
        }
        self.begun.set(self.begun.get() + 1);
        true
    }

    /// A request counted by [`Multiplexed::begin`] was not sent after all
    /// (the budget was spent).
    pub(crate) fn take_back(&self) {
        self.begun.set(self.begun.get().saturating_sub(1));
    }

    /// True once the connection's lifetime ran out.
    pub(crate) fn is_retired(&self) -> bool {
        self.retired.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifetime(max_requests: Option<u64>, max_age_ms: Option<u64>) -> Lifetime {
        Lifetime::new(&ConnLifetime {
            max_requests,
            max_age: max_age_ms.map(Duration::from_millis),
        })
    }

    #[test]
    fn unlimited_never_ends_and_reads_no_clock() {
        let open = Instant::now();
        let never = lifetime(None, None);
        assert!(!never.is_over(u64::MAX, open, || panic!("no clock without a limit")));
    }

    #[test]
    fn the_first_bound_reached_ends_the_connection() {
        let open = Instant::now();
        let by_count = lifetime(Some(3), None);
        assert!(!by_count.is_over(2, open, || open));
        assert!(by_count.is_over(3, open, || open));
        let by_age = lifetime(None, Some(100));
        assert!(!by_age.is_over(1000, open, || open + Duration::from_millis(99)));
        assert!(by_age.is_over(0, open, || open + Duration::from_millis(100)));
        let both = lifetime(Some(10), Some(100));
        assert!(both.is_over(10, open, || open));
        assert!(both.is_over(1, open, || open + Duration::from_secs(1)));
    }

    #[test]
    fn a_multiplexed_connection_admits_exactly_n_requests() {
        let connection = lifetime(Some(3), None).multiplexed(Instant::now());
        assert!(connection.begin() && connection.begin());
        connection.take_back();
        assert!(connection.begin() && connection.begin());
        assert!(!connection.is_retired());
        assert!(!connection.begin());
        assert!(connection.is_retired());
        assert!(!connection.begin(), "once spent, it stays spent");
        let open = lifetime(None, None).multiplexed(Instant::now());
        assert!((0..10_000).all(|_| open.begin()) && !open.is_retired());
    }
}
