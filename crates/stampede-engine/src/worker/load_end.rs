//! When a worker's load is over: the one rule every driver asks. The
//! reactors ask it each turn (drive/reactor/mod.rs); on tokio the pacer
//! asks it when its instants run out (drive/open.rs) and the worker then
//! waits for the last request in flight (`WorkerState::drained`). Each
//! driver only gathers the facts; the verdict is here, tested once.

/// What is left of a worker's load, as its driver sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadLeft {
    /// The closed model: connections (users) loop until the budget is
    /// spent; `users_done`: every virtual user walked its iterations.
    Closed { users_done: bool },
    /// The open model: `pacer_exhausted`: the pacer has no instant before
    /// the end; `has_deadline`: the run ends at a deadline (`-d`);
    /// `counted_out`: a counted load (`total_iterations`) took all its
    /// instants and no user waits out a think time.
    Open {
        pacer_exhausted: bool,
        has_deadline: bool,
        counted_out: bool,
    },
}

/// True when the worker starts no more requests: its budget (`-n`) is
/// spent; or every closed-model user is done; or the pacer has no more
/// instants and either no deadline is waited for or the count is taken
/// (a counted load ends before its deadline; an open one with a deadline
/// waits for it, as more instants cannot come but the run's time is
/// the user's).
pub(crate) fn starts_no_more(budget_left: bool, left: LoadLeft) -> bool {
    if !budget_left {
        return true;
    }
    match left {
        LoadLeft::Closed { users_done } => users_done,
        LoadLeft::Open {
            pacer_exhausted,
            has_deadline,
            counted_out,
        } => pacer_exhausted && (!has_deadline || counted_out),
    }
}

/// True when the load is done: nothing more starts, nothing is in flight,
/// and no queued arrival waits for a connection (`queued`; out of feeder
/// rows, `feed_dry`, the queue can never be sent and does not count).
pub(crate) fn load_done(
    starts_no_more: bool,
    in_flight: u64,
    queued: bool,
    feed_dry: bool,
) -> bool {
    starts_no_more && in_flight == 0 && (!queued || feed_dry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(pacer_exhausted: bool, has_deadline: bool, counted_out: bool) -> LoadLeft {
        LoadLeft::Open {
            pacer_exhausted,
            has_deadline,
            counted_out,
        }
    }

    #[test]
    fn a_spent_budget_ends_every_load() {
        assert!(starts_no_more(
            false,
            LoadLeft::Closed { users_done: false }
        ));
        assert!(starts_no_more(false, open(false, true, false)));
    }

    #[test]
    fn a_closed_load_ends_when_every_user_is_done() {
        assert!(!starts_no_more(
            true,
            LoadLeft::Closed { users_done: false }
        ));
        assert!(starts_no_more(true, LoadLeft::Closed { users_done: true }));
    }

    #[test]
    fn an_open_load_ends_with_its_instants_unless_it_waits_for_a_deadline() {
        // (pacer exhausted, has deadline, counted out) → starts no more
        let table = [
            ((false, false, false), false),
            ((false, false, true), false),
            ((false, true, false), false),
            ((false, true, true), false),
            ((true, false, false), true),
            ((true, false, true), true),
            ((true, true, false), false),
            ((true, true, true), true),
        ];
        for ((exhausted, deadline, counted), expected) in table {
            let left = open(exhausted, deadline, counted);
            assert_eq!(starts_no_more(true, left), expected, "{left:?}");
        }
    }

    #[test]
    fn the_load_is_done_when_nothing_is_in_flight_or_waits_to_be_sent() {
        assert!(load_done(true, 0, false, false));
        assert!(!load_done(false, 0, false, false), "more will start");
        assert!(!load_done(true, 1, false, false), "one is in flight");
        assert!(
            !load_done(true, 0, true, false),
            "one waits for a connection"
        );
        assert!(
            load_done(true, 0, true, true),
            "a queue with no rows to send"
        );
    }
}
