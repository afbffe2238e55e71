//! Exact counts of a run: requests by fate, responses by status, errors by
//! class, bytes and connections. Plain integers, merged by addition.

use crate::ErrorKind;

/// Lowest and highest status code counted; the engine treats others as malformed.
const STATUS_MIN: u16 = 100;
const STATUS_SLOTS: usize = 500;

/// Responses by status code, 100 through 599.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCounts(Box<[u64; STATUS_SLOTS]>);

impl Default for StatusCounts {
    fn default() -> Self {
        StatusCounts(Box::new([0; STATUS_SLOTS]))
    }
}

impl StatusCounts {
    /// Counts one response; `status` must be 100..=599.
    pub fn add(&mut self, status: u16, n: u64) {
        if let Some(slot) = status
            .checked_sub(STATUS_MIN)
            .and_then(|i| self.0.get_mut(i as usize))
        {
            *slot += n;
        }
    }

    /// The non-zero counts in ascending status order.
    pub fn iter(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| (i as u16 + STATUS_MIN, *n))
    }

    fn merge(&mut self, other: &StatusCounts) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0.iter()) {
            *mine += theirs;
        }
    }
}

/// Every count a run keeps. Invariant once a run has ended:
/// `sent = success + failed_status + check_failed + errors + unfinished`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests whose bytes were handed to a connection (or that failed connecting).
    pub sent: u64,
    /// Complete responses with status < 400.
    pub success: u64,
    /// Complete responses with status >= 400.
    pub failed_status: u64,
    /// Complete responses with status < 400 that failed a check or an
    /// extractor (`--check`, `--extract`): neither success nor failed status.
    pub check_failed: u64,
    /// Requests that got no usable response, by [`ErrorKind::index`].
    pub errors: [u64; ErrorKind::COUNT],
    /// Requests still in flight when the run stopped.
    pub unfinished: u64,
    /// Responses by status code.
    pub status: StatusCounts,
    /// All bytes read from the target (status lines, headers, bodies).
    pub bytes_received: u64,
    /// Response body bytes only.
    pub bytes_body: u64,
    /// `--decode`: response body bytes once decoded (bodies that came
    /// without a coding count as they came).
    pub bytes_decoded: u64,
    /// `--decode`: responses whose body came encoded (`Content-Encoding`).
    pub encoded_responses: u64,
    /// TCP connections established.
    pub connections_opened: u64,
    /// Connections the client tried to open, established or not: with a dead
    /// target these are the failed ones, spaced by the connect backoff.
    pub connect_attempts: u64,
    /// Connections re-opened after the server closed an idle keep-alive connection
    /// or asked to close; not errors.
    pub reconnects: u64,
    /// Connections opened to replace one the client retired at the end of
    /// its lifetime (`--conn-max-requests`, `--conn-max-age`); not errors,
    /// and not in `reconnects`.
    pub planned_reconnects: u64,
    /// Redirects followed (`--redirects`): hops, not requests of their own.
    pub redirects: u64,
    /// Redirects to another origin, not followed (the 3xx is the response).
    pub redirects_offsite: u64,
    /// Open model: requests sent more than a millisecond after their intended
    /// instant because every allowed connection was busy.
    pub late_sends: u64,
}

impl Counters {
    /// Complete responses, whatever their status.
    pub fn completed(&self) -> u64 {
        self.success + self.failed_status + self.check_failed
    }

    /// Requests that ended in an error of any class.
    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Count of one error class.
    pub fn error(&self, kind: ErrorKind) -> u64 {
        self.errors[kind.index()]
    }

    /// Adds another worker's or interval's counts into these.
    pub(crate) fn merge(&mut self, other: &Counters) {
        self.sent += other.sent;
        self.success += other.success;
        self.failed_status += other.failed_status;
        self.check_failed += other.check_failed;
        for (mine, theirs) in self.errors.iter_mut().zip(other.errors) {
            *mine += theirs;
        }
        self.unfinished += other.unfinished;
        self.status.merge(&other.status);
        self.bytes_received += other.bytes_received;
        self.bytes_body += other.bytes_body;
        self.bytes_decoded += other.bytes_decoded;
        self.encoded_responses += other.encoded_responses;
        self.connections_opened += other.connections_opened;
        self.connect_attempts += other.connect_attempts;
        self.reconnects += other.reconnects;
        self.planned_reconnects += other.planned_reconnects;
        self.late_sends += other.late_sends;
        self.redirects += other.redirects;
        self.redirects_offsite += other.redirects_offsite;
    }

    /// True when every sent request is accounted for exactly once (the
    /// invariant the tests check).
    #[cfg(test)]
    pub(crate) fn is_balanced(&self) -> bool {
        self.sent == self.completed() + self.error_total() + self.unfinished
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_every_field() {
        let mut a = Counters {
            sent: 3,
            success: 2,
            ..Counters::default()
        };
        a.errors[ErrorKind::Reset.index()] = 1;
        a.status.add(200, 2);
        let mut b = a.clone();
        b.status.add(404, 1);
        b.failed_status = 1;
        b.sent = 4;
        b.connect_attempts = 5;
        a.merge(&b);
        assert_eq!(a.connect_attempts, 5);
        assert_eq!(a.sent, 7);
        assert_eq!(a.error(ErrorKind::Reset), 2);
        assert_eq!(
            a.status.iter().collect::<Vec<_>>(),
            vec![(200, 4), (404, 1)]
        );
        assert!(a.is_balanced());
    }

    #[test]
    fn status_outside_range_is_ignored() {
        let mut status = StatusCounts::default();
        status.add(99, 1);
        status.add(600, 1);
        status.add(599, 1);
        assert_eq!(status.iter().collect::<Vec<_>>(), vec![(599, 1)]);
    }
}
