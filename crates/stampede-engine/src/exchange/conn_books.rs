//! The books of one HTTP/1.1 connection's life, I/O-free and kept by both
//! paths that speak it (the tokio slot, connection.rs, and the reactors'
//! `Ledger`, exchange/ledger.rs), so that the rules are written once: how
//! many responses the connection served and when it opened (its lifetime,
//! conn_lifetime.rs), what its successor counts as (a reconnect after the
//! server closed it, a planned reconnect after the client retired it, else
//! neither), whether it stays open after an answer, and the idle close: a
//! reused connection the server closed before a byte of the response came
//! is retried on a new one, not an error (once per exchange: the retry's
//! flag is request_books.rs's).

use crate::plan::conn_lifetime::Lifetime;
use crate::worker::worker_state::WorkerState;
use stampede_metrics::ErrorKind;
use std::time::{Duration, Instant};

/// What becomes of a connection after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// It carries the slot's next request.
    Keep,
    /// It is closed; `by_server`: its successor counts as a reconnect.
    Close { by_server: bool },
}

/// One slot's connection, as far as the books go.
#[derive(Debug)]
pub(crate) struct ConnectionLife {
    /// Responses completed on the current connection (redirect hops too).
    served: u64,
    /// When the current connection opened (its age, `--conn-max-age`).
    opened_at: Instant,
    /// The server closed the last connection: the next one is a reconnect.
    server_closed: bool,
    /// The client retired the last connection at the end of its lifetime:
    /// the next one is a planned reconnect.
    retiring: bool,
}

impl ConnectionLife {
    pub(crate) fn new(now: Instant) -> Self {
        ConnectionLife {
            served: 0,
            opened_at: now,
            server_closed: false,
            retiring: false,
        }
    }

    /// A connection opened at `now` after `took`: counted, as a reconnect
    /// when the server had closed the last one, and as a planned reconnect
    /// when the client had retired it.
    pub(crate) fn opened(&mut self, state: &WorkerState, took: Duration, now: Instant) {
        state.connection_opened(self.server_closed, took);
        if std::mem::take(&mut self.retiring) {
            state.planned_reconnect();
        }
        self.opened_at = now;
        self.server_closed = false;
    }

    /// A response completed on the connection.
    pub(crate) fn answered(&mut self) {
        self.served += 1;
    }

    /// The connection has carried a response before (it is reused).
    pub(crate) fn is_reused(&self) -> bool {
        self.served > 0
    }

    /// True (and the connection marked retired: its successor is a planned
    /// reconnect) when `lifetime` is over; `now` is read only under a limit.
    pub(crate) fn outlived(&mut self, lifetime: &Lifetime, now: impl FnOnce() -> Instant) -> bool {
        if lifetime.is_over(self.served, self.opened_at, now) {
            self.retiring = true;
            return true;
        }
        false
    }

    /// After an answer on the connection (counted with
    /// [`ConnectionLife::answered`]): it stays open when the server
    /// (`server_keeps`) and the plan (`planned`: `--no-keepalive`, a step's
    /// `keep_alive`) both allow it and its `lifetime` is not over. Only a
    /// close we did not plan for makes its successor a reconnect; a retired
    /// one's successor is a planned reconnect.
    pub(crate) fn after_answer(
        &mut self,
        lifetime: &Lifetime,
        server_keeps: bool,
        planned: bool,
        now: impl FnOnce() -> Instant,
    ) -> Reuse {
        if !server_keeps || !planned {
            return Reuse::Close { by_server: planned };
        }
        if self.outlived(lifetime, now) {
            return Reuse::Close { by_server: false };
        }
        Reuse::Keep
    }

    /// Before a request goes out on the open connection: true when it may
    /// carry it. False (close it, not as by the server) when bytes arrived
    /// that no request asked for (a second response to one request:
    /// HTTP/1.1 cannot tell which request they belong to, so the connection
    /// is not trusted for another exchange), or when its `lifetime` ran out
    /// while it was idle (retired: its successor is a planned reconnect).
    pub(crate) fn fit_to_send(
        &mut self,
        unsolicited: bool,
        lifetime: &Lifetime,
        now: impl FnOnce() -> Instant,
    ) -> bool {
        !unsolicited && !self.outlived(lifetime, now)
    }

    /// The connection is gone; `by_server`: the next one is a reconnect
    /// (unless the client retired it: then a planned one).
    pub(crate) fn gone(&mut self, by_server: bool) {
        self.served = 0;
        self.server_closed = by_server && !self.retiring;
    }

    /// A failure of `kind` with `bytes_received` of the response is an idle
    /// close: the server closed a reused connection while it was idle.
    pub(crate) fn closed_while_idle(&self, kind: ErrorKind, bytes_received: u64) -> bool {
        matches!(kind, ErrorKind::ClosedEarly | ErrorKind::Reset)
            && bytes_received == 0
            && self.is_reused()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_plan::ConnLifetime;

    /// A lifetime of at most `requests` responses (`None`: no limit).
    fn at_most(requests: Option<u64>) -> Lifetime {
        Lifetime::new(&ConnLifetime {
            max_requests: requests,
            max_age: None,
        })
    }

    fn counts(state: &WorkerState) -> (u64, u64, u64) {
        let c = state.final_snapshot().counters;
        (c.connections_opened, c.reconnects, c.planned_reconnects)
    }

    #[test]
    fn a_successor_counts_as_what_ended_its_predecessor() {
        let now = Instant::now();
        let state = WorkerState::new(None, 1);
        let mut life = ConnectionLife::new(now);
        life.opened(&state, Duration::ZERO, now);
        assert_eq!(counts(&state), (1, 0, 0), "the first is no reconnect");
        life.gone(true);
        life.opened(&state, Duration::ZERO, now);
        assert_eq!(counts(&state), (1, 1, 0), "after the server closed it");
        life.gone(false);
        life.opened(&state, Duration::ZERO, now);
        assert_eq!(counts(&state), (1, 0, 0), "the client's own close");
        let two = at_most(Some(2));
        life.answered();
        assert!(!life.outlived(&two, || now));
        life.answered();
        assert!(life.outlived(&two, || now));
        life.gone(true);
        life.opened(&state, Duration::ZERO, now);
        assert_eq!(
            counts(&state),
            (1, 0, 1),
            "retired: planned, not a reconnect"
        );
    }

    #[test]
    fn an_answer_keeps_the_connection_only_when_server_plan_and_lifetime_allow() {
        let now = Instant::now();
        let forever = at_most(None);
        let one = at_most(Some(1));
        let keep = Reuse::Keep;
        let reconnect = Reuse::Close { by_server: true };
        let planned = Reuse::Close { by_server: false };
        // (lifetime, the server keeps it, keep-alive planned, what follows)
        let table = [
            (&forever, true, true, keep),
            (&forever, false, true, reconnect),
            (&forever, true, false, planned),
            (&forever, false, false, planned),
            (&one, true, true, planned),
            (&one, false, true, reconnect),
        ];
        for (lifetime, server_keeps, plan, reuse) in table {
            let mut life = ConnectionLife::new(now);
            life.answered();
            let got = life.after_answer(lifetime, server_keeps, plan, || now);
            assert_eq!(got, reuse, "server {server_keeps} planned {plan}");
        }
        // A retired connection's successor is a planned reconnect.
        let state = WorkerState::new(None, 1);
        let mut life = ConnectionLife::new(now);
        life.opened(&state, Duration::ZERO, now);
        life.answered();
        let Reuse::Close { by_server } = life.after_answer(&one, true, true, || now) else {
            panic!("its one request served: retired");
        };
        life.gone(by_server);
        life.opened(&state, Duration::ZERO, now);
        assert_eq!(counts(&state), (2, 0, 1), "two opened, the second planned");
    }

    #[test]
    fn a_connection_carries_the_next_request_unless_unsolicited_bytes_or_its_lifetime_end_it() {
        let now = Instant::now();
        let forever = at_most(None);
        let one = at_most(Some(1));
        // (unsolicited bytes, lifetime, responses served, fit)
        let table = [
            (false, &forever, 5, true),
            (true, &forever, 5, false),
            (false, &one, 0, true),
            (false, &one, 1, false),
        ];
        for (unsolicited, lifetime, served, fit) in table {
            let mut life = ConnectionLife::new(now);
            for _ in 0..served {
                life.answered();
            }
            let got = life.fit_to_send(unsolicited, lifetime, || now);
            assert_eq!(got, fit, "unsolicited {unsolicited} served {served}");
        }
    }

    #[test]
    fn only_a_reused_connection_closed_before_any_byte_is_an_idle_close() {
        let mut life = ConnectionLife::new(Instant::now());
        assert!(!life.closed_while_idle(ErrorKind::ClosedEarly, 0), "fresh");
        life.answered();
        assert!(life.closed_while_idle(ErrorKind::ClosedEarly, 0));
        assert!(life.closed_while_idle(ErrorKind::Reset, 0));
        assert!(
            !life.closed_while_idle(ErrorKind::ClosedEarly, 1),
            "a byte came"
        );
        assert!(!life.closed_while_idle(ErrorKind::Timeout, 0));
        life.gone(true);
        assert!(
            !life.closed_while_idle(ErrorKind::Reset, 0),
            "a new connection"
        );
    }
}
