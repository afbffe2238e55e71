//! The rules of one HTTP/1.1 request that both paths keep (the tokio slot,
//! connection.rs, and the reactors' `Ledger`, exchange/ledger.rs), I/O-free
//! so that each is written once: a request's clocks and the outcome they
//! make ([`Clocks`]), the retry of an idle close (once per exchange on the
//! wire: the request, and each hop of its redirects), and what a failure
//! costs the slot (its connect backoff, backoff.rs). What a
//! request whose time ran out is counted as is outcome_class.rs's
//! `Stage`, which the connector (transport/) reads too; the connection's
//! own books (responses served, age, what its successor counts as, whether
//! it stays open after an answer) are conn_books.rs's.

use crate::exchange::conn_books::ConnectionLife;
use crate::worker::backoff::Backoff;
use crate::worker::worker_state::WorkerState;
use stampede_metrics::{ErrorKind, Judged, Outcome};
use std::time::{Duration, Instant};

/// A request's clocks and counts as it goes: what its [`Outcome`] is made
/// of. Latency counts from `intended` (the open model's instant, or the
/// send in the closed model).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clocks {
    pub intended: Instant,
    /// When it went out on an open connection; its intended start until
    /// then, so that a request that never got a connection counts from it.
    pub sent: Instant,
    pub first_byte: Option<Instant>,
    /// Bytes of its response read (of a batch, of this response only).
    pub bytes_received: u64,
    /// How long opening a connection for it took, if it needed one.
    pub connect: Option<Duration>,
}

impl Clocks {
    /// The clocks of a request intended at `intended`, nothing sent yet.
    pub(crate) fn new(intended: Instant) -> Clocks {
        Clocks {
            intended,
            sent: intended,
            first_byte: None,
            bytes_received: 0,
            connect: None,
        }
    }

    /// How request `target` (of the mix, or the user's step) ended at
    /// `done`: what the recorder and the request log take.
    pub(crate) fn outcome(
        &self,
        done: Instant,
        result: Result<u16, ErrorKind>,
        body_bytes: u64,
        target: usize,
        judged: Option<Judged>,
    ) -> Outcome {
        Outcome {
            intended: self.intended,
            sent: self.sent,
            first_byte: self.first_byte,
            done,
            result,
            bytes_received: self.bytes_received,
            body_bytes,
            target: target as u16,
            judged,
        }
    }
}

/// How a request failed, as far as its slot's books go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Failure {
    pub kind: ErrorKind,
    /// The request got an open connection (else it failed to connect, and
    /// its latency counts from its intended start).
    pub had_connection: bool,
    /// That connection had carried a response before.
    pub reused: bool,
    /// The request was a redirect's hop to another origin: a failed
    /// request as a direct one is, but the slot's own connection is not
    /// backed off for it.
    pub abroad: bool,
}

/// The books of a slot's request in flight that outlive a connection.
#[derive(Debug, Default)]
pub(crate) struct RequestBooks {
    /// The exchange on the wire may still be retried after an idle close.
    may_retry: bool,
    /// Consecutive connect failures of the slot.
    backoff: Backoff,
}

impl RequestBooks {
    /// An exchange goes on the wire (a request, or a hop of its
    /// redirects): it may be retried once after an idle close.
    pub(crate) fn arm(&mut self) {
        self.may_retry = true;
    }

    /// True (once per exchange) when a failure of `kind` is a reused
    /// connection the server closed while it was idle: nothing of the
    /// response had arrived (`bytes_received`; of a pipelined batch, no
    /// response was `answered`). Not an error: the exchange goes again on a
    /// new connection; a second idle close is the request's error.
    pub(crate) fn retry_after_idle_close(
        &mut self,
        life: &ConnectionLife,
        kind: ErrorKind,
        answered: usize,
        bytes_received: u64,
    ) -> bool {
        answered == 0
            && life.closed_while_idle(kind, bytes_received)
            && std::mem::take(&mut self.may_retry)
    }

    /// A connection opened: the connect backoff starts over.
    pub(crate) fn connected(&mut self) {
        self.backoff.succeeded();
    }

    /// Books a failed request: the wait its slot owes before its next
    /// request, if any. A failed connect backs the slot off; so does a TLS
    /// error on a connection that never carried a response (a handshake the
    /// server refused, known only at the first read under TLS 1.3); a hop's
    /// failure abroad, and any other failure, cost no wait.
    pub(crate) fn failed(&mut self, state: &WorkerState, failure: Failure) -> Option<Duration> {
        if failure.abroad {
            return None;
        }
        if !failure.had_connection {
            return Some(state.connect_backoff(&mut self.backoff));
        }
        if failure.kind == ErrorKind::Tls && !failure.reused {
            self.backoff.refused();
            return Some(state.connect_backoff(&mut self.backoff));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reused_life() -> ConnectionLife {
        let mut life = ConnectionLife::new(Instant::now());
        life.answered();
        life
    }

    #[test]
    fn an_outcome_counts_from_the_intended_start() {
        let ms = Duration::from_millis;
        let intended = Instant::now();
        let mut clocks = Clocks::new(intended);
        let refused = Err(ErrorKind::ConnectRefused);
        let never = clocks.outcome(intended + ms(5), refused, 0, 2, None);
        assert_eq!(
            never.sent, intended,
            "no connection: sent at its intended start"
        );
        assert_eq!((never.first_byte, never.bytes_received), (None, 0));
        assert_eq!((never.target, never.result), (2, refused));
        clocks.sent = intended + ms(1);
        clocks.first_byte = Some(intended + ms(3));
        clocks.bytes_received = 100;
        let answered = clocks.outcome(intended + ms(4), Ok(200), 60, 0, None);
        assert_eq!(
            answered.intended, intended,
            "latency from the intended send"
        );
        assert_eq!(answered.sent, intended + ms(1));
        assert_eq!(answered.first_byte, Some(intended + ms(3)));
        assert_eq!((answered.bytes_received, answered.body_bytes), (100, 60));
        assert_eq!(answered.done, intended + ms(4));
    }

    #[test]
    fn an_idle_close_is_retried_once_per_exchange() {
        let life = reused_life();
        let mut books = RequestBooks::default();
        assert!(
            !books.retry_after_idle_close(&life, ErrorKind::ClosedEarly, 0, 0),
            "not armed: no exchange on the wire"
        );
        books.arm();
        assert!(books.retry_after_idle_close(&life, ErrorKind::ClosedEarly, 0, 0));
        assert!(
            !books.retry_after_idle_close(&life, ErrorKind::ClosedEarly, 0, 0),
            "a second idle close is the request's error"
        );
        books.arm();
        assert!(
            books.retry_after_idle_close(&life, ErrorKind::Reset, 0, 0),
            "a redirect's hop is an exchange of its own"
        );
    }

    #[test]
    fn only_a_failure_before_any_answer_on_a_reused_connection_is_retried() {
        // (kind, connection reused, responses of the batch answered,
        // bytes of the response received, retried)
        let table = [
            (ErrorKind::ClosedEarly, true, 0, 0, true),
            (ErrorKind::Reset, true, 0, 0, true),
            (ErrorKind::ClosedEarly, false, 0, 0, false),
            (ErrorKind::ClosedEarly, true, 0, 1, false),
            (ErrorKind::ClosedEarly, true, 1, 0, false),
            (ErrorKind::Timeout, true, 0, 0, false),
            (ErrorKind::MalformedResponse, true, 0, 0, false),
        ];
        for (kind, reused, answered, bytes, retried) in table {
            let life = if reused {
                reused_life()
            } else {
                ConnectionLife::new(Instant::now())
            };
            let mut books = RequestBooks::default();
            books.arm();
            let got = books.retry_after_idle_close(&life, kind, answered, bytes);
            assert_eq!(got, retried, "{kind:?} reused {reused} {answered} {bytes}");
            if !retried {
                // The flag is spent only by a retry.
                assert!(books.may_retry, "{kind:?}");
            }
        }
    }

    #[test]
    fn a_failure_backs_the_slot_off_only_when_it_was_a_connect() {
        let state = WorkerState::new(None, 1);
        let failure = |kind, had_connection, reused, abroad| Failure {
            kind,
            had_connection,
            reused,
            abroad,
        };
        // (failure, the slot waits before its next request)
        let table = [
            (
                failure(ErrorKind::ConnectRefused, false, false, false),
                true,
            ),
            (
                failure(ErrorKind::ConnectTimeout, false, false, false),
                true,
            ),
            (failure(ErrorKind::Tls, false, false, false), true),
            (failure(ErrorKind::Tls, true, false, false), true),
            (failure(ErrorKind::Tls, true, true, false), false),
            (failure(ErrorKind::Timeout, true, false, false), false),
            (failure(ErrorKind::Reset, true, true, false), false),
            (
                failure(ErrorKind::ConnectRefused, false, false, true),
                false,
            ),
            (failure(ErrorKind::Tls, true, false, true), false),
        ];
        for (failure, waits) in table {
            let mut books = RequestBooks::default();
            let wait = books.failed(&state, failure);
            assert_eq!(wait.is_some(), waits, "{failure:?}");
        }
    }

    #[test]
    fn consecutive_connect_failures_wait_longer_until_a_connect_succeeds() {
        let state = WorkerState::new(None, 1);
        let refused = Failure {
            kind: ErrorKind::ConnectRefused,
            had_connection: false,
            reused: false,
            abroad: false,
        };
        let mut books = RequestBooks::default();
        let waits: Vec<Duration> = (0..4)
            .map(|_| books.failed(&state, refused).expect("a connect failed"))
            .collect();
        assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
        assert!(waits[3] > waits[0], "{waits:?}");
        books.connected();
        let after = books.failed(&state, refused).expect("a connect failed");
        assert!(after < waits[3], "{after:?} after {waits:?}");
    }
}
