//! When is a figure known well enough? The confidence interval of its mean
//! across rounds (Student's t, since rounds are few), and the `--until-stable`
//! target such as `p99:5%`: stop once the 95% interval is within ±5% of the mean.

use crate::Figure;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The mean of some rounds and, from two rounds on, its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The mean, in the figure's unit.
    pub mean: f64,
    /// Half the interval's width, in the figure's unit; `None` for one round
    /// (one value has no spread to estimate).
    pub half_width: Option<f64>,
    /// `half_width / |mean|`, in percent; `None` without an interval or for
    /// a zero mean (a relative width of a zero mean means nothing).
    pub relative_pct: Option<f64>,
    /// How many rounds the mean is over.
    pub rounds: usize,
}

impl Interval {
    /// Within ±`pct`% of its mean (false without an interval).
    pub fn within_pct(&self, pct: f64) -> bool {
        self.relative_pct.is_some_and(|r| r <= pct)
    }
}

/// The mean of `values` with its `confidence` interval (Student's t, n − 1
/// degrees of freedom); no interval for one value, `None` for none (or a
/// confidence outside (0, 1)).
pub(crate) fn mean_interval(values: &[f64], confidence: f64) -> Option<Interval> {
    let n = values.len();
    if n == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let half_width = (n >= 2)
        .then(|| {
            let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
                .ok()?
                .inverse_cdf(0.5 + confidence / 2.0);
            Some(t * (variance / n as f64).sqrt())
        })
        .flatten();
    let relative_pct = half_width
        .filter(|_| mean != 0.0)
        .map(|h| 100.0 * h / mean.abs());
    Some(Interval {
        mean,
        half_width,
        relative_pct,
        rounds: n,
    })
}

/// `--until-stable FIGURE:PCT%`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StableTarget {
    /// The figure watched.
    pub figure: Figure,
    /// Stop when the interval's half width is within this percent of the mean.
    pub within_pct: f64,
}

/// Parses `p99:5%`, `rps:2%`, `p50:5`, `goodput:3%`.
pub fn parse_stable_target(text: &str) -> Result<StableTarget, String> {
    let bad = || {
        format!("invalid --until-stable '{text}': expected FIGURE:PCT%, e.g. p99:5% (figures: rps, goodput, p50, p90, p99, p99.9, max)")
    };
    let (name, pct) = text.split_once(':').ok_or_else(bad)?;
    let figure = match name.trim().to_ascii_lowercase().as_str() {
        "rps" => Figure::Rps,
        "goodput" => Figure::Goodput,
        "p50" => Figure::P50,
        "p90" => Figure::P90,
        "p99" => Figure::P99,
        "p99.9" => Figure::P99_9,
        "max" => Figure::Max,
        _ => return Err(bad()),
    };
    let within_pct: f64 = pct
        .trim()
        .trim_end_matches('%')
        .parse()
        .ok()
        .filter(|p: &f64| *p > 0.0 && p.is_finite())
        .ok_or_else(bad)?;
    Ok(StableTarget { figure, within_pct })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_of_a_known_sample() {
        // mean 10, sample sd 1, n 4: t(0.975, 3) = 3.182, half width 1.591.
        let interval = mean_interval(&[9.0, 10.0, 11.0, 10.0], 0.95).unwrap();
        assert!((interval.mean - 10.0).abs() < 1e-12);
        let sd = (2.0f64 / 3.0).sqrt();
        assert!((interval.half_width.unwrap() - 3.182 * sd / 2.0).abs() < 1e-3);
        assert!(interval.within_pct(13.0) && !interval.within_pct(12.9));
        assert!(mean_interval(&[], 0.95).is_none());
    }

    #[test]
    fn one_value_has_a_mean_but_no_interval_and_zero_has_no_relative_width() {
        let one = mean_interval(&[7.0], 0.95).unwrap();
        assert_eq!(
            (one.mean, one.half_width, one.relative_pct),
            (7.0, None, None)
        );
        assert!(!one.within_pct(100.0));
        let zeros = mean_interval(&[0.0, 0.0, 0.0], 0.95).unwrap();
        assert_eq!(zeros.half_width, Some(0.0));
        assert_eq!(zeros.relative_pct, None, "no ±inf% for a zero mean");
    }

    #[test]
    fn interval_matches_scipy_for_a_negative_mean() {
        // Reference values from SciPy 1.17.1:
        //   x = np.array([-12.0, -10.5, -9.0, -11.5, -10.0])
        //   lo, hi = stats.t.interval(0.90, 4, loc=x.mean(), scale=stats.sem(x))
        //   hi - x.mean()                       # 1.1380947479475552
        //   100 * (hi - x.mean()) / abs(x.mean())   # 10.736742905165615
        let i = mean_interval(&[-12.0, -10.5, -9.0, -11.5, -10.0], 0.90).unwrap();
        assert_eq!(i.rounds, 5);
        assert!((i.mean + 10.6).abs() < 1e-12, "{i:?}");
        assert!(
            (i.half_width.unwrap() - 1.1380947479475552).abs() < 1e-9,
            "{i:?}"
        );
        assert!(
            (i.relative_pct.unwrap() - 10.736742905165615).abs() < 1e-9,
            "{i:?}"
        );
        // A bound is inclusive: the interval is within its own width.
        let pct = i.relative_pct.unwrap();
        assert!(i.within_pct(pct) && !i.within_pct(pct - 1e-9));
    }

    #[test]
    fn a_confidence_outside_zero_to_one_has_no_interval() {
        for confidence in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            assert_eq!(mean_interval(&[1.0, 2.0], confidence), None, "{confidence}");
        }
        assert!(mean_interval(&[1.0, 2.0], 0.5).is_some());
    }

    #[test]
    fn every_figure_is_a_target() {
        for (text, figure) in [
            ("rps:1%", Figure::Rps),
            ("goodput:1%", Figure::Goodput),
            ("p50:1%", Figure::P50),
            ("p90:1%", Figure::P90),
            ("p99:1%", Figure::P99),
            ("p99.9:1%", Figure::P99_9),
            ("max:1%", Figure::Max),
            (" P99.9 : 2.5% ", Figure::P99_9),
        ] {
            assert_eq!(
                parse_stable_target(text).map(|t| t.figure),
                Ok(figure),
                "{text}"
            );
        }
        assert_eq!(
            parse_stable_target(" P99.9 : 2.5% ").unwrap().within_pct,
            2.5
        );
        for bad in ["p99:-1%", "p99:inf", "p99:NaN%", ":5%"] {
            let err = parse_stable_target(bad).unwrap_err();
            assert!(
                err.starts_with(&format!("invalid --until-stable '{bad}'")),
                "{err}"
            );
        }
    }

    #[test]
    fn parses_targets() {
        let target = parse_stable_target("p99:5%").unwrap();
        assert_eq!((target.figure, target.within_pct), (Figure::P99, 5.0));
        assert_eq!(parse_stable_target("rps:2").unwrap().figure, Figure::Rps);
        for bad in ["p99", "p42:5%", "p99:0%", "p99:x"] {
            assert!(parse_stable_target(bad).is_err(), "{bad}");
        }
    }
}
