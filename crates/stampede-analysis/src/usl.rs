//! Gunther's Universal Scalability Law fitted to closed-model sweep points:
//! X(N) = λN / (1 + σ(N−1) + κN(N−1)), where λ is the throughput of one
//! client without interference, σ the contention (serialised share: Amdahl)
//! and κ the coherency cost (crosstalk between every pair of clients, which
//! makes throughput fall again past N* = sqrt((1−σ)/κ)).
//!
//! Owns the fit (a small Levenberg–Marquardt with σ, κ ≥ 0) and its quality
//! report. Does not decide which steps to fit: `sweep` does.

use serde::{Deserialize, Serialize};

/// The fitted law and what follows from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Throughput per client at N = 1 without contention (req/s per client).
    pub lambda: f64,
    /// Contention (serialisation), ≥ 0.
    pub sigma: f64,
    /// Coherency (crosstalk), ≥ 0.
    pub kappa: f64,
    /// Coefficient of determination of the fit on the given points.
    pub r2: f64,
    /// Concurrency at which throughput peaks; `None` when κ ≈ 0 (no retrograde
    /// region) or σ ≥ 1 (throughput never grows with concurrency).
    pub n_star: Option<f64>,
    /// Predicted peak throughput X(N*).
    pub x_max: Option<f64>,
    /// Reasons to distrust the fit (few points, poor R², extrapolation).
    pub warnings: Vec<String>,
}

impl UslFit {
    /// Predicted throughput at concurrency `n`.
    pub fn predict(&self, n: f64) -> f64 {
        model(self.lambda, self.sigma, self.kappa, n)
    }
}

/// Why no fit could be made at all (a poor fit is a warning, not an error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UslError {
    /// Fewer than three distinct concurrency levels.
    #[error("USL fit needs at least 3 distinct concurrency levels, got {got}")]
    TooFewPoints {
        /// How many distinct levels there were.
        got: usize,
    },
    /// A point with a concurrency or throughput that is not positive and finite.
    #[error("USL fit needs positive, finite concurrency and throughput, got N={n}, X={x}")]
    InvalidPoint {
        /// The point's concurrency (N).
        n: f64,
        /// The point's throughput (X), req/s.
        x: f64,
    },
}

/// Below this κ the coherency term changes X by less than 1e-9 per pair of
/// clients: treat as zero (no peak).
const KAPPA_ZERO: f64 = 1e-12;
const MAX_ITERATIONS: usize = 500;

fn model(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Sum of squared residuals.
fn sse(points: &[(f64, f64)], p: [f64; 3]) -> f64 {
    points
        .iter()
        .map(|&(n, x)| (x - model(p[0], p[1], p[2], n)).powi(2))
        .sum()
}

/// Fits the USL to (N, X) points by non-linear least squares.
pub(crate) fn fit_usl(points: &[(f64, f64)]) -> Result<UslFit, UslError> {
    for &(n, x) in points {
        if !(n.is_finite() && x.is_finite() && n > 0.0 && x > 0.0) {
            return Err(UslError::InvalidPoint { n, x });
        }
    }
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 3 {
        return Err(UslError::TooFewPoints {
            got: distinct.len(),
        });
    }

    // λ is poorly identified when the smallest N is far from 1 (λ and σ trade
    // off), so start from several λ guesses and keep the best local optimum.
    let base = initial_lambda(points);
    let best = [1.0, 1.25, 1.5, 2.0, 4.0, 10.0]
        .iter()
        .map(|m| levenberg_marquardt(points, initial_guess(points, base * m)))
        .min_by(|a, b| sse(points, *a).total_cmp(&sse(points, *b)))
        .expect("the list of starting points is not empty");
    Ok(report(points, best, distinct.len()))
}

/// λ from the smallest-N point: X/N there is the least contended per-client rate.
fn initial_lambda(points: &[(f64, f64)]) -> f64 {
    points
        .iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|&(n, x)| x / n)
        .expect("checked non-empty")
}

/// With λ fixed the law is linear in σ, κ: λN/X − 1 = σ(N−1) + κN(N−1).
/// Solve that by least squares (clamped to ≥ 0) for a starting point.
fn initial_guess(points: &[(f64, f64)], lambda: f64) -> [f64; 3] {
    let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, x) in points {
        let y = lambda * n / x - 1.0;
        let (u, v) = (n - 1.0, n * (n - 1.0));
        a11 += u * u;
        a12 += u * v;
        a22 += v * v;
        b1 += u * y;
        b2 += v * y;
    }
    let det = a11 * a22 - a12 * a12;
    let (sigma, kappa) = if det.abs() > f64::EPSILON * a11 * a22 {
        ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det)
    } else {
        (0.0, 0.0)
    };
    [lambda, sigma.max(0.0), kappa.max(0.0)]
}

/// Levenberg–Marquardt with Marquardt's diagonal scaling (λ, σ, κ differ by
/// orders of magnitude) and projection onto σ, κ ≥ 0, λ > 0.
fn levenberg_marquardt(points: &[(f64, f64)], start: [f64; 3]) -> [f64; 3] {
    let mut p = start;
    let mut cost = sse(points, p);
    let mut damping = 1e-3;
    for _ in 0..MAX_ITERATIONS {
        let (jtj, jtr) = normal_equations(points, p);
        let mut improved = false;
        while damping < 1e12 {
            let mut a = jtj;
            for i in 0..3 {
                a[i][i] += damping * jtj[i][i].max(1e-300);
            }
            let Some(delta) = solve3(a, jtr) else {
                damping *= 10.0;
                continue;
            };
            let candidate = [
                (p[0] + delta[0]).max(p[0] * 1e-3),
                (p[1] + delta[1]).max(0.0),
                (p[2] + delta[2]).max(0.0),
            ];
            let candidate_cost = sse(points, candidate);
            if candidate_cost.is_finite() && candidate_cost < cost {
                let gain = (cost - candidate_cost) / cost.max(f64::MIN_POSITIVE);
                p = candidate;
                cost = candidate_cost;
                damping = (damping / 10.0).max(1e-12);
                improved = gain > 1e-15;
                break;
            }
            damping *= 10.0;
        }
        if !improved || cost == 0.0 {
            break;
        }
    }
    p
}

/// JᵀJ and Jᵀr of the residuals r = X − model, with analytic derivatives.
fn normal_equations(points: &[(f64, f64)], p: [f64; 3]) -> ([[f64; 3]; 3], [f64; 3]) {
    let [lambda, sigma, kappa] = p;
    let mut jtj = [[0.0; 3]; 3];
    let mut jtr = [0.0; 3];
    for &(n, x) in points {
        let d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
        let j = [
            n / d,
            -lambda * n * (n - 1.0) / (d * d),
            -lambda * n * n * (n - 1.0) / (d * d),
        ];
        let r = x - lambda * n / d;
        for a in 0..3 {
            jtr[a] += j[a] * r;
            for b in 0..3 {
                jtj[a][b] += j[a] * j[b];
            }
        }
    }
    (jtj, jtr)
}

/// Gaussian elimination with partial pivoting; `None` when singular.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..3 {
            let f = a[row][col] / pivot_row[col];
            for (x, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let tail: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

fn report(points: &[(f64, f64)], p: [f64; 3], distinct: usize) -> UslFit {
    let [lambda, sigma, kappa] = p;
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let sst: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let residual = sse(points, p);
    let r2 = if sst > 0.0 {
        1.0 - residual / sst
    } else if residual <= 1e-12 * mean * mean {
        1.0
    } else {
        0.0
    };
    let n_star = (kappa > KAPPA_ZERO && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    let x_max = n_star.map(|n| model(lambda, sigma, kappa, n));

    let mut warnings = Vec::new();
    if distinct < 4 {
        warnings.push(format!(
            "only {distinct} concurrency levels: the 3-parameter USL fit is barely determined; use at least 4"
        ));
    }
    if r2 < 0.9 {
        warnings.push(format!(
            "poor USL fit (R² = {r2:.3} < 0.9): the data do not follow the law, so N* and X_max are unreliable"
        ));
    }
    if sigma >= 1.0 {
        warnings.push(format!(
            "σ = {sigma:.3} ≥ 1: throughput does not grow with concurrency in the tested range"
        ));
    }
    let max_n = points.iter().map(|p| p.0).fold(0.0, f64::max);
    if let Some(n) = n_star {
        if n > 2.0 * max_n {
            warnings.push(format!(
                "N* = {n:.0} lies far beyond the largest tested concurrency ({max_n:.0}): an extrapolation"
            ));
        }
    }
    UslFit {
        lambda,
        sigma,
        kappa,
        r2,
        n_star,
        x_max,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(lambda: f64, sigma: f64, kappa: f64, ns: &[f64], noise: f64) -> Vec<(f64, f64)> {
        // A fixed LCG: deterministic "noise" in ±noise (relative).
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        ns.iter()
            .map(|&n| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let u = (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
                (n, model(lambda, sigma, kappa, n) * (1.0 + noise * u))
            })
            .collect()
    }

    fn within(got: f64, want: f64, pct: f64) -> bool {
        ((got - want) / want).abs() <= pct / 100.0
    }

    const NS: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 64.0, 96.0, 128.0];

    #[test]
    fn recovers_known_parameters_exactly() {
        let points = synthetic(1000.0, 0.05, 0.0005, &NS, 0.0);
        let fit = fit_usl(&points).unwrap();
        assert!(within(fit.lambda, 1000.0, 0.1), "{fit:?}");
        assert!(within(fit.sigma, 0.05, 0.1), "{fit:?}");
        assert!(within(fit.kappa, 0.0005, 0.1), "{fit:?}");
        assert!(fit.r2 > 0.9999);
        let n_star = ((1.0 - 0.05) / 0.0005f64).sqrt();
        assert!(within(fit.n_star.unwrap(), n_star, 0.1));
        assert!(within(
            fit.x_max.unwrap(),
            model(1000.0, 0.05, 0.0005, n_star),
            0.1
        ));
        assert!(fit.warnings.is_empty(), "{:?}", fit.warnings);
    }

    #[test]
    fn recovers_known_parameters_with_noise() {
        // 1% noise; σ and κ within 5%.
        let ns: Vec<f64> = (1..=40).map(|i| (i * 4) as f64).collect();
        let points = synthetic(500.0, 0.1, 0.0002, &ns, 0.01);
        let fit = fit_usl(&points).unwrap();
        assert!(within(fit.lambda, 500.0, 5.0), "{fit:?}");
        assert!(within(fit.sigma, 0.1, 5.0), "{fit:?}");
        assert!(within(fit.kappa, 0.0002, 5.0), "{fit:?}");
        assert!(fit.r2 > 0.98);
    }

    #[test]
    fn recovers_without_an_n_equals_one_point() {
        let points = synthetic(
            200.0,
            0.02,
            0.0001,
            &[8.0, 16.0, 32.0, 64.0, 128.0, 256.0],
            0.0,
        );
        let fit = fit_usl(&points).unwrap();
        assert!(within(fit.sigma, 0.02, 5.0), "{fit:?}");
        assert!(within(fit.kappa, 0.0001, 5.0), "{fit:?}");
    }

    #[test]
    fn amdahl_only_has_no_peak() {
        let points = synthetic(100.0, 0.1, 0.0, &NS, 0.0);
        let fit = fit_usl(&points).unwrap();
        assert!(fit.kappa < 1e-9, "{fit:?}");
        assert!(within(fit.sigma, 0.1, 1.0));
        assert_eq!(fit.n_star, None);
        assert_eq!(fit.x_max, None);
    }

    #[test]
    fn linear_scaling_fits_with_zero_contention() {
        let points: Vec<_> = NS.iter().map(|&n| (n, 10.0 * n)).collect();
        let fit = fit_usl(&points).unwrap();
        assert!(within(fit.lambda, 10.0, 0.1));
        assert!(fit.sigma < 1e-6 && fit.kappa < 1e-9, "{fit:?}");
        assert!(fit.r2 > 0.9999);
    }

    #[test]
    fn warns_on_few_points_and_poor_fit() {
        let few = synthetic(100.0, 0.1, 0.001, &[1.0, 10.0, 30.0], 0.0);
        let fit = fit_usl(&few).unwrap();
        assert!(fit.warnings.iter().any(|w| w.contains("only 3")));

        // A zig-zag the law cannot follow.
        let zigzag: Vec<_> = (1..=8)
            .map(|i| (i as f64, if i % 2 == 0 { 100.0 } else { 10.0 }))
            .collect();
        let fit = fit_usl(&zigzag).unwrap();
        assert!(fit.r2 < 0.9);
        assert!(fit.warnings.iter().any(|w| w.contains("poor USL fit")));
    }

    #[test]
    fn flat_throughput_means_sigma_at_least_one() {
        let flat: Vec<_> = [1.0, 2.0, 4.0, 8.0].iter().map(|&n| (n, 50.0)).collect();
        let fit = fit_usl(&flat).unwrap();
        assert!(fit.sigma >= 0.99, "{fit:?}");
        assert!((fit.predict(8.0) - 50.0).abs() < 1.0);
    }

    #[test]
    fn rejects_degenerate_input() {
        assert_eq!(fit_usl(&[]), Err(UslError::TooFewPoints { got: 0 }));
        assert_eq!(
            fit_usl(&[(1.0, 10.0), (1.0, 11.0), (2.0, 19.0)]),
            Err(UslError::TooFewPoints { got: 2 })
        );
        assert!(matches!(
            fit_usl(&[(1.0, 10.0), (0.0, 11.0), (2.0, 19.0)]),
            Err(UslError::InvalidPoint { .. })
        ));
        assert!(matches!(
            fit_usl(&[(1.0, f64::NAN), (2.0, 11.0), (3.0, 19.0)]),
            Err(UslError::InvalidPoint { .. })
        ));
        assert!(matches!(
            fit_usl(&[(1.0, 10.0), (2.0, -1.0), (3.0, 19.0)]),
            Err(UslError::InvalidPoint { .. })
        ));
        // No throughput at all is no point either (λN/X would be infinite).
        assert!(matches!(
            fit_usl(&[(1.0, 10.0), (2.0, 0.0), (3.0, 19.0)]),
            Err(UslError::InvalidPoint { .. })
        ));
    }

    #[test]
    fn the_linear_start_recovers_sigma_and_kappa_given_lambda() {
        // With λ known, λN/X − 1 = σ(N−1) + κN(N−1) holds exactly on the law's
        // own points, so the least-squares start is the answer itself.
        let points = synthetic(1000.0, 0.05, 0.001, &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0], 0.0);
        let [lambda, sigma, kappa] = initial_guess(&points, 1000.0);
        assert_eq!(lambda, 1000.0);
        assert!((sigma - 0.05).abs() < 1e-9, "σ {sigma}");
        assert!((kappa - 0.001).abs() < 1e-12, "κ {kappa}");
    }

    #[test]
    fn solve3_detects_singular() {
        assert_eq!(solve3([[0.0; 3]; 3], [1.0, 2.0, 3.0]), None);
        let x = solve3(
            [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]],
            [3.0, 5.0, 5.0],
        )
        .unwrap();
        assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-12));
    }

    #[test]
    fn r_squared_of_a_flat_series_is_one_only_when_the_fit_is_exact_to_1e_12() {
        // Every X the same: no variance to explain (sst = 0), so R² is 1 when
        // the residual is within 1e-12 of the mean squared, else 0. The law
        // λ = 10, σ = 1, κ = 0 predicts 10 at every N.
        let flat = |x: f64| vec![(1.0, x), (2.0, x), (3.0, x)];
        assert_eq!(report(&flat(10.0), [10.0, 1.0, 0.0], 3).r2, 1.0);
        // Off by ε at each point: residual 3ε², the bound 1e-12 × mean².
        let within = 1.826e-6; // residual ≈ 1.0e-11
        assert_eq!(report(&flat(10.0 + within), [10.0, 1.0, 0.0], 3).r2, 1.0);
        let beyond = 8.165e-6; // residual ≈ 2.0e-10
        assert_eq!(report(&flat(10.0 + beyond), [10.0, 1.0, 0.0], 3).r2, 0.0);
    }

    #[test]
    fn the_warnings_begin_exactly_at_their_bounds() {
        // Residual 1 against a variance of 10: R² is exactly 0.9, not poor.
        let points = [(1.0, 1.0), (2.0, 2.0), (3.0, 4.0), (5.0, 5.0)];
        let fit = report(&points, [1.0, 0.0, 0.0], 4);
        assert_eq!(fit.r2, 0.9);
        assert!(fit.warnings.is_empty(), "{:?}", fit.warnings);
        // Three levels are too few; four are enough (above).
        let fit = report(&points, [1.0, 0.0, 0.0], 3);
        assert_eq!(fit.warnings.len(), 1, "{:?}", fit.warnings);
        assert!(fit.warnings[0].starts_with("only 3 concurrency levels"));
        // N* = √((1 − σ)/κ) = 10, exactly twice the largest N: no extrapolation yet.
        let fit = report(&points, [1.0, 0.0, 0.01], 4);
        assert_eq!(fit.n_star, Some(10.0));
        assert!(
            !fit.warnings.iter().any(|w| w.contains("extrapolation")),
            "{:?}",
            fit.warnings
        );
        let fit = report(&points, [1.0, 0.0, 0.009], 4);
        assert!(
            fit.warnings.iter().any(|w| w.contains("extrapolation")),
            "{:?}",
            fit.warnings
        );
    }

    #[test]
    fn no_peak_without_coherency_or_with_full_contention() {
        let points = [(1.0, 1.0), (2.0, 2.0), (3.0, 4.0), (5.0, 5.0)];
        assert_eq!(report(&points, [1.0, 0.0, KAPPA_ZERO], 4).n_star, None);
        assert_eq!(report(&points, [1.0, 1.0, 0.01], 4).n_star, None);
        assert!(report(&points, [1.0, 0.5, 0.01], 4).n_star.is_some());
    }
}
