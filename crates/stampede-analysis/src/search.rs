//! The open-model rate search of `stampede sweep -r a:b:step --slo …`: walk
//! rates upward, stop once two steps in a row fail the SLO, and report the
//! highest rate that passed.
//!
//! Owns the stopping rule only; running the steps and evaluating the SLO on
//! each is the caller's (see [`crate::evaluate`]).

use serde::Serialize;

/// What to do after recording a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchNext {
    /// Run the next step.
    Continue,
    /// Enough consecutive failures: higher rates will not pass either.
    Stop,
}

/// Incremental search state: feed it each step's rate and SLO result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateSearch {
    /// Consecutive failures that end the search (2: one failure may be noise).
    pub stop_after_failures: usize,
    /// Every recorded (rate, passed), in order.
    pub steps: Vec<(f64, bool)>,
    failures_in_row: usize,
}

impl Default for RateSearch {
    fn default() -> RateSearch {
        RateSearch::new(2)
    }
}

impl RateSearch {
    /// A search that ends after `stop_after_failures` failures in a row (at least 1).
    pub(crate) fn new(stop_after_failures: usize) -> RateSearch {
        RateSearch {
            stop_after_failures: stop_after_failures.max(1),
            steps: Vec::new(),
            failures_in_row: 0,
        }
    }

    /// Records one step; says whether to run the next.
    pub fn record(&mut self, rate: f64, passed: bool) -> SearchNext {
        self.steps.push((rate, passed));
        self.failures_in_row = if passed { 0 } else { self.failures_in_row + 1 };
        if self.failures_in_row >= self.stop_after_failures {
            SearchNext::Stop
        } else {
            SearchNext::Continue
        }
    }

    /// Whether the search ended on consecutive failures (not by running out of rates).
    pub(crate) fn stopped_early(&self) -> bool {
        self.failures_in_row >= self.stop_after_failures
    }

    /// The highest rate that met the SLO.
    pub(crate) fn highest_passing(&self) -> Option<f64> {
        self.steps
            .iter()
            .filter(|s| s.1)
            .map(|s| s.0)
            .max_by(f64::total_cmp)
    }

    /// One sentence for the verdict.
    pub fn sentence(&self) -> String {
        let stop = if self.stopped_early() {
            format!(
                " (stopped after {} failing steps in a row)",
                self.stop_after_failures
            )
        } else {
            String::new()
        };
        match self.highest_passing() {
            Some(rate) => format!("Highest rate meeting the SLO: {rate} req/s{stop}."),
            None => format!("No tested rate met the SLO{stop}."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outcome of a completed search over already-run steps: processes
    /// them in order and ignores any after the stop.
    fn search_rate(outcomes: &[(f64, bool)]) -> RateSearch {
        let mut search = RateSearch::default();
        for &(rate, passed) in outcomes {
            if search.record(rate, passed) == SearchNext::Stop {
                break;
            }
        }
        search
    }

    #[test]
    fn stops_after_two_failures_in_a_row() {
        let mut s = RateSearch::default();
        assert_eq!(s.record(1000.0, true), SearchNext::Continue);
        assert_eq!(s.record(2000.0, true), SearchNext::Continue);
        assert_eq!(s.record(3000.0, false), SearchNext::Continue);
        assert_eq!(s.record(4000.0, false), SearchNext::Stop);
        assert_eq!(s.highest_passing(), Some(2000.0));
        assert!(s.stopped_early());
        assert_eq!(
            s.sentence(),
            "Highest rate meeting the SLO: 2000 req/s (stopped after 2 failing steps in a row)."
        );
    }

    #[test]
    fn a_single_failure_is_forgiven() {
        let s = search_rate(&[
            (1000.0, true),
            (2000.0, false),
            (3000.0, true),
            (4000.0, false),
            (5000.0, false),
            (6000.0, true), // never run: after the stop
        ]);
        assert_eq!(s.highest_passing(), Some(3000.0));
        assert_eq!(s.steps.len(), 5);
    }

    #[test]
    fn nothing_passes_or_everything_passes() {
        let s = search_rate(&[(1000.0, false), (2000.0, false)]);
        assert_eq!(s.highest_passing(), None);
        assert_eq!(
            s.sentence(),
            "No tested rate met the SLO (stopped after 2 failing steps in a row)."
        );
        let s = search_rate(&[(1000.0, true), (2000.0, true)]);
        assert!(!s.stopped_early());
        assert_eq!(s.sentence(), "Highest rate meeting the SLO: 2000 req/s.");
        assert_eq!(search_rate(&[]).highest_passing(), None);
        assert_eq!(RateSearch::new(0).stop_after_failures, 1);
    }
}
