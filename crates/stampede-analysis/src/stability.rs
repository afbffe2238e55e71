//! When is a figure known well enough? The confidence interval of its mean
//! across rounds (Student's t, since rounds are few), and the `--until-stable`
//! target such as `p99:5%`: stop once the 95% interval is within ±5% of the mean.

use crate::Figure;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The mean of some rounds and its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub mean: f64,
    /// Half the interval's width, in the figure's unit.
    pub half_width: f64,
    /// `half_width / mean`, in percent (infinite for a zero mean).
    pub relative_pct: f64,
    pub rounds: usize,
}

/// The `confidence` interval of the mean of `values`; `None` for fewer than two.
pub fn mean_interval(values: &[f64], confidence: f64) -> Option<Interval> {
    let n = values.len();
    if n < 2 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(0.5 + confidence / 2.0);
    let half_width = t * (variance / n as f64).sqrt();
    let relative_pct = if mean != 0.0 {
        100.0 * half_width / mean.abs()
    } else {
        f64::INFINITY
    };
    Some(Interval {
        mean,
        half_width,
        relative_pct,
        rounds: n,
    })
}

/// `--until-stable FIGURE:PCT%`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StableTarget {
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
        assert!((interval.half_width - 3.182 * sd / 2.0).abs() < 1e-3);
        assert!(mean_interval(&[1.0], 0.95).is_none());
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
