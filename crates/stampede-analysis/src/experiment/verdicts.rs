//! Pairwise verdicts: each variant's figures against the first variant's,
//! over the rounds each ran, with the confidence interval of the difference
//! (compare's Welch interval, difference.rs) in the figure's unit and in
//! percent of the first's mean. "Same" when the interval includes zero.

use super::metric::Metric;
use super::VariantResult;
use crate::difference::diff_interval;
use serde::{Deserialize, Serialize};

/// One figure of variant `b` against variant `a`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentVerdict {
    /// The baseline variant's name (the first).
    pub a: String,
    /// The compared variant's name.
    pub b: String,
    /// The figure.
    pub metric: Metric,
    /// mean(b) − mean(a), in the figure's unit.
    pub change: f64,
    /// Lower bound of the change's confidence interval; `None` without one.
    pub ci_low: Option<f64>,
    /// Upper bound of the change's confidence interval; `None` without one.
    pub ci_high: Option<f64>,
    /// The change in percent of a's mean; `None` when a's mean is zero.
    pub change_pct: Option<f64>,
    /// `ci_low` in percent of a's mean.
    pub ci_low_pct: Option<f64>,
    /// `ci_high` in percent of a's mean.
    pub ci_high_pct: Option<f64>,
    /// True when the interval includes zero (no difference at the chosen
    /// confidence); `None` without an interval (one round on both sides).
    pub same: Option<bool>,
}

/// The verdicts of every variant after the first against the first, for
/// each figure both have values of.
pub fn pairwise_verdicts(variants: &[VariantResult], confidence: f64) -> Vec<ExperimentVerdict> {
    let Some((first, rest)) = variants.split_first() else {
        return Vec::new();
    };
    let mut verdicts = Vec::new();
    for other in rest {
        for metric in Metric::ALL {
            if let Some(verdict) = verdict(first, other, metric, confidence) {
                verdicts.push(verdict);
            }
        }
    }
    verdicts
}

fn verdict(
    a: &VariantResult,
    b: &VariantResult,
    metric: Metric,
    confidence: f64,
) -> Option<ExperimentVerdict> {
    let (xa, xb) = (a.values_of(metric), b.values_of(metric));
    if xa.is_empty() || xb.is_empty() {
        return None;
    }
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let (ma, mb) = (mean(&xa), mean(&xb));
    let interval = diff_interval(&xa, &xb, confidence);
    let pct = |v: f64| (ma != 0.0).then(|| 100.0 * v / ma.abs());
    let (low, high) = (interval.map(|i| i.low), interval.map(|i| i.high));
    Some(ExperimentVerdict {
        a: a.name.clone(),
        b: b.name.clone(),
        metric,
        change: mb - ma,
        ci_low: low,
        ci_high: high,
        change_pct: pct(mb - ma),
        ci_low_pct: low.and_then(pct),
        ci_high_pct: high.and_then(pct),
        same: interval.map(|i| i.low <= 0.0 && 0.0 <= i.high),
    })
}
