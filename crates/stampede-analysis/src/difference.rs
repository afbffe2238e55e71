//! The confidence interval of a difference of means, for compare's
//! verdicts: Welch's t between two samples of rounds (unequal variances,
//! Welch–Satterthwaite degrees of freedom), and a prediction interval between
//! a sample of rounds and a single run. Owns the statistics only; which
//! figure is better is compare's.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::fmt;

/// How the confidence interval of a difference was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Rounds on both sides: Welch's t (unequal variances,
    /// Welch–Satterthwaite degrees of freedom).
    Welch,
    /// Rounds on one side, one run on the other: the single run is taken as
    /// one more draw with the rounds' spread, so the difference has variance
    /// s²·(1 + 1/n) on n − 1 degrees of freedom (a prediction interval).
    Prediction,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Welch => "Welch's t",
            Method::Prediction => "prediction interval",
        })
    }
}

/// The confidence interval of a file's difference from the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DiffInterval {
    /// mean − baseline mean, in the figure's unit.
    pub diff: f64,
    /// Lower bound of the interval, in the figure's unit.
    pub low: f64,
    /// Upper bound of the interval, in the figure's unit.
    pub high: f64,
    /// Degrees of freedom of the t quantile.
    pub df: f64,
    /// How the interval was found.
    pub method: Method,
}

/// Mean and unbiased (n − 1) sample variance; the mean is summed in the
/// same order as `mean_interval`'s, so both report the same figure.
fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// The interval of mean(b) − mean(a): Welch's when both sides have two or
/// more values, the prediction interval when one side has a single value;
/// `None` between two single values or when a side has none.
pub(crate) fn diff_interval(a: &[f64], b: &[f64], confidence: f64) -> Option<DiffInterval> {
    match (a.len(), b.len()) {
        (na, nb) if na >= 2 && nb >= 2 => welch(a, b, confidence),
        (1, nb) if nb >= 2 => prediction(a[0], b, confidence, false),
        (na, 1) if na >= 2 => prediction(b[0], a, confidence, true),
        _ => None,
    }
}

/// Welch's interval: diff ± t(1−α/2, ν)·sqrt(s²ₐ/nₐ + s²ᵦ/nᵦ), with ν from
/// Welch–Satterthwaite.
fn welch(a: &[f64], b: &[f64], confidence: f64) -> Option<DiffInterval> {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (qa, qb) = (va / na, vb / nb);
    let se = (qa + qb).sqrt();
    let df = if se > 0.0 {
        (qa + qb).powi(2) / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0))
    } else {
        na + nb - 2.0
    };
    interval(mb - ma, se, df, confidence, Method::Welch)
}

/// One value against a sample of rounds: the value is one more draw from the
/// rounds' distribution, so the difference of the two has standard error
/// s·sqrt(1 + 1/n) on n − 1 degrees of freedom. `single_is_candidate` says
/// which side the single value is on (the difference is candidate − baseline).
fn prediction(
    single: f64,
    rounds: &[f64],
    confidence: f64,
    single_is_candidate: bool,
) -> Option<DiffInterval> {
    let n = rounds.len() as f64;
    let (mean, var) = mean_var(rounds);
    let se = (var * (1.0 + 1.0 / n)).sqrt();
    let diff = if single_is_candidate {
        single - mean
    } else {
        mean - single
    };
    interval(diff, se, n - 1.0, confidence, Method::Prediction)
}

fn interval(diff: f64, se: f64, df: f64, confidence: f64, method: Method) -> Option<DiffInterval> {
    let half = if se > 0.0 {
        let t = StudentsT::new(0.0, 1.0, df)
            .ok()?
            .inverse_cdf(0.5 + confidence / 2.0);
        t * se
    } else {
        // No spread on either side: the difference is exact.
        0.0
    };
    Some(DiffInterval {
        diff,
        low: diff - half,
        high: diff + half,
        df,
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_interval_between_two_single_values() {
        assert_eq!(diff_interval(&[1.0], &[2.0], 0.95), None);
        assert_eq!(diff_interval(&[], &[2.0, 3.0], 0.95), None);
        let exact = diff_interval(&[1.0, 1.0], &[3.0], 0.95).unwrap();
        assert_eq!((exact.low, exact.high, exact.diff), (2.0, 2.0, 2.0));
        assert_eq!(exact.method, Method::Prediction);
    }

    /// Two samples of unequal size and spread, so that each side's share of
    /// the Welch–Satterthwaite degrees of freedom matters.
    const A: [f64; 4] = [101.0, 98.5, 103.2, 99.1];
    const B: [f64; 6] = [110.4, 104.9, 121.3, 108.8, 115.0, 112.6];

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs().max(1.0)
    }

    #[test]
    fn welch_interval_and_degrees_of_freedom_match_scipy() {
        // Reference values from SciPy 1.17.1:
        //   from scipy import stats
        //   r = stats.ttest_ind(B, A, equal_var=False)
        //   r.df                             # 6.834581402216605
        //   r.confidence_interval(0.95)      # (5.695439515008402, 17.73789381832499)
        //   r.confidence_interval(0.90)      # (6.898469598987131, 16.53486373434626)
        //   np.mean(B) - np.mean(A)          # 11.716666666666697
        let i = diff_interval(&A, &B, 0.95).unwrap();
        assert_eq!(i.method, Method::Welch);
        assert!(close(i.diff, 11.716666666666697), "{i:?}");
        assert!(close(i.df, 6.834581402216605), "{i:?}");
        assert!(close(i.low, 5.695439515008402), "{i:?}");
        assert!(close(i.high, 17.73789381832499), "{i:?}");
        let i90 = diff_interval(&A, &B, 0.90).unwrap();
        assert!(close(i90.low, 6.898469598987131), "{i90:?}");
        assert!(close(i90.high, 16.53486373434626), "{i90:?}");
        // The other way round (stats.ttest_ind(A, B, equal_var=False)): the
        // same degrees of freedom, the interval mirrored.
        let back = diff_interval(&B, &A, 0.95).unwrap();
        assert!(close(back.df, 6.834581402216605), "{back:?}");
        assert!(close(back.low, -17.73789381832499), "{back:?}");
        assert!(close(back.high, -5.695439515008402), "{back:?}");
    }

    #[test]
    fn welch_without_spread_is_exact_on_the_pooled_degrees_of_freedom() {
        // No variance on either side: Welch–Satterthwaite is 0/0, so the
        // degrees of freedom fall back to na + nb − 2.
        let i = diff_interval(&[5.0, 5.0, 5.0], &[7.0, 7.0], 0.95).unwrap();
        assert_eq!((i.diff, i.low, i.high, i.df), (2.0, 2.0, 2.0, 3.0));
        assert_eq!(i.method, Method::Welch);
    }

    #[test]
    fn prediction_interval_matches_scipy_on_either_side() {
        // Reference values from SciPy 1.17.1 (x = np.array(A), single 95.0):
        //   n = len(x); se = x.std(ddof=1) * np.sqrt(1 + 1/n)
        //   h = stats.t.ppf(0.975, n - 1) * se      # 7.5450381299105045
        //   x.mean() - 95.0                         # 5.449999999999989
        let candidate_single = diff_interval(&A, &[95.0], 0.95).unwrap();
        assert_eq!(candidate_single.method, Method::Prediction);
        assert_eq!(candidate_single.df, 3.0);
        assert!(close(candidate_single.diff, -5.449999999999989));
        assert!(close(
            candidate_single.low,
            -5.449999999999989 - 7.5450381299105045
        ));
        assert!(close(
            candidate_single.high,
            -5.449999999999989 + 7.5450381299105045
        ));
        let baseline_single = diff_interval(&[95.0], &A, 0.95).unwrap();
        assert_eq!(baseline_single.df, 3.0);
        assert!(close(baseline_single.diff, 5.449999999999989));
        assert!(close(baseline_single.low, -2.095038129910516));
        assert!(close(baseline_single.high, 12.995038129910494));
    }

    #[test]
    fn methods_are_named_for_the_report() {
        assert_eq!(Method::Welch.to_string(), "Welch's t");
        assert_eq!(Method::Prediction.to_string(), "prediction interval");
    }
}
