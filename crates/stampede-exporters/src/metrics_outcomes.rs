//! How finished requests are counted in the live series: by outcome
//! (`success`, `failed_status`, `check_failed`, `error`) and code (the
//! status, or the error class), and for a mix per target, named by its
//! request and its scenario step. metrics_feed.rs makes a reading of them;
//! metrics_series.rs turns them into labelled samples.

use stampede_engine::WorkloadSpec;
use stampede_metrics::{Counters, ErrorKind};
use stampede_plan::Plan;

/// Finished requests as `(outcome, code, count)`.
pub type OutcomeCounts = Vec<(&'static str, String, u64)>;

/// What names one target of a mix in the series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MixLabel {
    /// `METHOD URL`.
    pub request: String,
    /// A scenario step's name (`group/step`).
    pub step: Option<String>,
}

/// Finished requests by outcome and code (status, or error class). The
/// status counts hold check-failed responses too, without saying which
/// code each had: they are taken from the most frequent code below 400
/// (exact when, as usual, the successes share one code).
pub fn outcome_counts(c: &Counters) -> OutcomeCounts {
    let mut requests: OutcomeCounts = Vec::new();
    let busiest_success = c
        .status
        .iter()
        .filter(|(code, _)| *code < 400)
        .max_by_key(|(_, n)| *n)
        .map(|(code, _)| code);
    for (code, n) in c.status.iter() {
        if code >= 400 {
            requests.push(("failed_status", code.to_string(), n));
        } else if Some(code) == busiest_success && c.check_failed > 0 {
            let failed = c.check_failed.min(n);
            if n > failed {
                requests.push(("success", code.to_string(), n - failed));
            }
            requests.push(("check_failed", code.to_string(), failed));
        } else {
            requests.push(("success", code.to_string(), n));
        }
    }
    requests.extend(
        ErrorKind::ALL
            .into_iter()
            .filter(|kind| c.error(*kind) > 0)
            .map(|kind| ("error", kind.as_str().to_string(), c.error(kind))),
    );
    requests
}

/// Each request of a plan's mix, named as the series name it: `METHOD
/// URL`, and the scenario step's name when `workload` has one.
pub fn mix_labels(plan: &Plan, workload: Option<&WorkloadSpec>) -> Vec<MixLabel> {
    plan.mix
        .iter()
        .enumerate()
        .map(|(index, entry)| MixLabel {
            request: format!("{} {}", entry.request.method, entry.target.url),
            step: workload
                .and_then(|w| w.steps.get(index))
                .and_then(|step| step.name.clone()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_failed_responses_are_their_own_outcome_and_the_counts_add_up() {
        let mut c = Counters::default();
        c.status.add(200, 10);
        c.status.add(204, 2);
        c.status.add(503, 1);
        c.success = 9;
        c.check_failed = 3;
        c.failed_status = 1;
        let counts = outcome_counts(&c);
        let of = |outcome: &str, code: &str| {
            counts
                .iter()
                .find(|(o, k, _)| *o == outcome && k == code)
                .map(|(_, _, n)| *n)
        };
        assert_eq!(of("check_failed", "200"), Some(3), "{counts:?}");
        assert_eq!(of("success", "200"), Some(7));
        assert_eq!(of("success", "204"), Some(2));
        assert_eq!(of("failed_status", "503"), Some(1));
        assert_eq!(counts.iter().map(|(_, _, n)| n).sum::<u64>(), 13);
        c.check_failed = 0;
        assert!(outcome_counts(&c)
            .iter()
            .all(|(o, _, _)| *o != "check_failed"));
    }
}
