//! Response checks' books: which checks a judged response ran
//! and failed ([`Judged`], carried by its [`Outcome`](crate::Outcome)), each
//! check's pass/fail counts with a few sampled failing values
//! ([`CheckTally`], kept for the whole run like the per-target tables), and
//! their form in the result file ([`CheckResult`]).
//!
//! A check is named by its expression; an extractor that found nothing is
//! booked as a check named `extract NAME`, so it fails the response the
//! same way.

use crate::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// Failing values kept per check.
pub(crate) const MAX_CHECK_SAMPLES: usize = 3;

/// What judging one response found: checks `first..first + count` of the
/// run's list were evaluated, and bit `i` of `failed` says check `first + i`
/// failed (checks past the 64th of one request count as passed when their
/// bit cannot be set — a request has at most 64 checks and extractors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Judged {
    /// Index in the run's list of the first check evaluated.
    pub first: u16,
    /// How many checks were evaluated.
    pub count: u8,
    /// Bit `i` set: check `first + i` failed.
    pub failed: u64,
}

impl Judged {
    /// True when any check failed: the response is `check_failed`.
    pub fn any_failed(&self) -> bool {
        self.failed != 0
    }
}

/// One check's counts over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckTally {
    /// Responses on which the check passed.
    pub passed: u64,
    /// Responses on which the check failed.
    pub failed: u64,
    /// Distinct failing values seen, at most `MAX_CHECK_SAMPLES` (3).
    pub samples: Vec<String>,
}

impl CheckTally {
    /// Keeps `value` unless enough are kept or it is one of them; `value`
    /// is made only when it would be kept.
    pub(crate) fn sample(&mut self, value: impl FnOnce() -> String) {
        if self.samples.len() < MAX_CHECK_SAMPLES {
            let value = value();
            if !self.samples.contains(&value) {
                self.samples.push(value);
            }
        }
    }

    pub(crate) fn merge(&mut self, other: &CheckTally) {
        self.passed += other.passed;
        self.failed += other.failed;
        for value in &other.samples {
            self.sample(|| value.clone());
        }
    }
}

/// Books a judged response into the run's tallies.
pub(crate) fn tally_judged(tallies: &mut [CheckTally], judged: &Judged) {
    let first = usize::from(judged.first);
    for i in 0..usize::from(judged.count) {
        if let Some(tally) = tallies.get_mut(first + i) {
            if i < 64 && judged.failed & (1 << i) != 0 {
                tally.failed += 1;
            } else {
                tally.passed += 1;
            }
        }
    }
}

/// Records `micros`, the latency of a judged response, for each check it
/// failed (of the run's `checks` checks): only failures cost anything.
pub(crate) fn record_failures(
    failures: &mut Vec<LatencyHistogram>,
    checks: usize,
    judged: &Judged,
    micros: u64,
) {
    let first = usize::from(judged.first);
    let mut failed = judged.failed;
    while failed != 0 {
        let i = failed.trailing_zeros() as usize;
        failed &= failed - 1;
        let index = first + i;
        if i >= usize::from(judged.count) || index >= checks {
            continue;
        }
        if failures.len() <= index {
            failures.resize_with(index + 1, crate::new_latency_histogram);
        }
        crate::record_latency(&mut failures[index], micros);
    }
}

/// Adds another snapshot's per-check failure latencies into `mine`.
pub(crate) fn merge_failures(mine: &mut Vec<LatencyHistogram>, theirs: &[LatencyHistogram]) {
    if mine.len() < theirs.len() {
        mine.resize_with(theirs.len(), crate::new_latency_histogram);
    }
    for (mine, theirs) in mine.iter_mut().zip(theirs) {
        if !theirs.is_empty() {
            // Both start as `new_latency_histogram`: 1 µs and 3 digits,
            // growing; adding only grows them.
            let _ = mine.add(theirs);
        }
    }
}

/// Merges another worker's (or agent's) tallies into `mine`, by position.
pub(crate) fn merge_tallies(mine: &mut Vec<CheckTally>, theirs: &[CheckTally]) {
    if mine.len() < theirs.len() {
        mine.resize(theirs.len(), CheckTally::default());
    }
    for (mine, theirs) in mine.iter_mut().zip(theirs) {
        mine.merge(theirs);
    }
}

/// One check in the result file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The expression as written (`status == 200`), or `extract NAME`.
    pub check: String,
    /// The scenario step it belongs to, when the run has steps.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub step: Option<String>,
    /// Responses on which the check passed.
    pub passed: u64,
    /// Responses on which the check failed.
    pub failed: u64,
    /// A few failing values, as seen.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub samples: Vec<String>,
}

impl CheckResult {
    pub(crate) fn of(check: &str, step: Option<&str>, tally: &CheckTally) -> CheckResult {
        CheckResult {
            check: check.to_string(),
            step: step.map(str::to_string),
            passed: tally.passed,
            failed: tally.failed,
            samples: tally.samples.clone(),
        }
    }

    /// Passed share of evaluations, in percent; `None` when no response
    /// reached the check (it never ran: no share to show).
    pub fn pass_pct(&self) -> Option<f64> {
        let total = self.passed + self.failed;
        (total > 0).then(|| 100.0 * self.passed as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judged_responses_are_tallied_by_position() {
        let mut tallies = vec![CheckTally::default(); 3];
        tally_judged(
            &mut tallies,
            &Judged {
                first: 1,
                count: 2,
                failed: 0b10,
            },
        );
        assert_eq!((tallies[0].passed, tallies[0].failed), (0, 0));
        assert_eq!((tallies[1].passed, tallies[1].failed), (1, 0));
        assert_eq!((tallies[2].passed, tallies[2].failed), (0, 1));
    }

    #[test]
    fn failed_checks_record_the_latency_and_passed_ones_nothing() {
        let mut failures = Vec::new();
        let judged = |failed| Judged {
            first: 1,
            count: 2,
            failed,
        };
        record_failures(&mut failures, 3, &judged(0), 100);
        assert!(failures.is_empty(), "nothing failed, nothing kept");
        record_failures(&mut failures, 3, &judged(0b10), 100);
        record_failures(&mut failures, 3, &judged(0b11), 2_000);
        assert_eq!(failures.len(), 3);
        let counts: Vec<u64> = failures.iter().map(|h| h.len()).collect();
        assert_eq!(counts, [0, 1, 2]);
        assert_eq!(failures[2].max(), failures[2].highest_equivalent(2_000));
        // A bit past the request's checks, or past the run's, is ignored.
        record_failures(&mut failures, 3, &judged(0b100), 5);
        record_failures(&mut failures, 2, &judged(0b10), 5);
        assert_eq!(failures.iter().map(|h| h.len()).sum::<u64>(), 3);
        let mut merged = vec![crate::new_latency_histogram()];
        merge_failures(&mut merged, &failures);
        merge_failures(&mut merged, &failures);
        let counts: Vec<u64> = merged.iter().map(|h| h.len()).collect();
        assert_eq!(counts, [0, 2, 4]);
    }

    #[test]
    fn samples_are_few_and_distinct_and_merge() {
        let mut a = CheckTally::default();
        for value in ["500", "500", "502", "503", "504"] {
            a.sample(|| value.to_string());
        }
        assert_eq!(a.samples, ["500", "502", "503"]);
        let mut mine = vec![CheckTally::default()];
        merge_tallies(&mut mine, &[a.clone(), a]);
        assert_eq!(mine.len(), 2);
        assert_eq!(mine[0].samples.len(), 3);
    }
}
