//! A run that cannot open a single connection gives up instead of spending
//! its whole `-d` on failed connects (a target that is
//! not there is bad input, on every path): once the connect timeout has passed with
//! connect failures and not one connection opened, the run stops, not
//! marked interrupted, with `stop_reason: "no_connection"`, and the binary
//! exits 2 ("no connection could be opened"). A closed UDP port under
//! HTTP/3 is such a run: quinn ignores ICMP, so each handshake times out.
//! So is a `ws://` run whose every upgrade was refused: a server that
//! answers with a page is no WebSocket target, as a closed port is none.
//!
//! Not with a warm-up: measurement then starts with its connections already
//! open, so a server that dies after the warm-up is the faults' business.

use stampede_metrics::{Counters, ErrorKind};
use stampede_plan::Plan;
use std::time::Duration;

/// When a run with nothing connected is given up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GiveUp {
    after: Duration,
}

impl GiveUp {
    /// The rule for `plan`: one and a half connect timeouts (every slot's
    /// first attempt has timed out by then) and a snapshot's 250 ms.
    pub(crate) fn of(plan: &Plan) -> Option<GiveUp> {
        plan.warmup.is_none().then(|| GiveUp {
            after: plan.connect_timeout.mul_f64(1.5) + Duration::from_millis(250),
        })
    }

    /// True when the run should stop now.
    pub(crate) fn due(&self, elapsed: Duration, total: &Counters) -> bool {
        let errors = |kind: ErrorKind| total.errors[kind.index()];
        let connect_failures =
            errors(ErrorKind::ConnectRefused) + errors(ErrorKind::ConnectTimeout);
        let refused_upgrades = errors(ErrorKind::WsUpgradeRefused);
        let answered = total.success + total.failed_status + total.check_failed;
        // Nothing but failed connects and refused upgrades so far.
        let only_refusals = refused_upgrades > 0
            && total.errors.iter().sum::<u64>() == connect_failures + refused_upgrades;
        elapsed >= self.after
            && answered == 0
            && ((total.connections_opened == 0 && connect_failures > 0) || only_refusals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_connect_failures_with_nothing_opened_give_up() {
        let rule = GiveUp {
            after: Duration::from_secs(1),
        };
        let mut c = Counters::default();
        c.errors[ErrorKind::ConnectTimeout.index()] = 3;
        assert!(!rule.due(Duration::from_millis(900), &c), "too early");
        assert!(rule.due(Duration::from_secs(2), &c));
        c.connections_opened = 1;
        assert!(!rule.due(Duration::from_secs(2), &c), "one opened");
        let mut other = Counters::default();
        other.errors[ErrorKind::Timeout.index()] = 3;
        assert!(
            !rule.due(Duration::from_secs(2), &other),
            "not connect errors"
        );
        // Connections opened, every upgrade refused: no WebSocket target.
        let mut refused = Counters {
            connections_opened: 4,
            ..Counters::default()
        };
        refused.errors[ErrorKind::WsUpgradeRefused.index()] = 4;
        assert!(rule.due(Duration::from_secs(2), &refused));
        refused.success = 1;
        assert!(
            !rule.due(Duration::from_secs(2), &refused),
            "one message answered"
        );
        refused.success = 0;
        refused.errors[ErrorKind::Timeout.index()] = 1;
        assert!(!rule.due(Duration::from_secs(2), &refused), "another error");
    }
}
