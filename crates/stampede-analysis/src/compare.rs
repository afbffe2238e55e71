//! A/B (and A/B/C…) comparison of runs: a row per figure, a column per run,
//! the change against the first run in percent and a verdict that knows
//! lower latency and fewer errors are better. With repeated runs per side,
//! the mean difference and its 95% confidence interval by Welch's t-test
//! (unequal variances, Welch–Satterthwaite degrees of freedom).
//!
//! Owns figures, noise bands, verdicts and plan-difference warnings. Does not
//! read files or print tables.

use serde::Serialize;
use serde_json::Value;
use stampede_metrics::{PlanSummary, RunResult};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::fmt;

/// A compared figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    Goodput,
    Rps,
    ErrorRate,
    P50,
    P90,
    P99,
    P99_9,
    Max,
    /// Server CPU-seconds per 1000 requests (when the server was monitored).
    ServerCpuPer1k,
}

impl Figure {
    pub const ALL: [Figure; 9] = [
        Figure::Goodput,
        Figure::Rps,
        Figure::ErrorRate,
        Figure::P50,
        Figure::P90,
        Figure::P99,
        Figure::P99_9,
        Figure::Max,
        Figure::ServerCpuPer1k,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Figure::Goodput => "goodput",
            Figure::Rps => "rps",
            Figure::ErrorRate => "errors",
            Figure::P50 => "p50",
            Figure::P90 => "p90",
            Figure::P99 => "p99",
            Figure::P99_9 => "p99.9",
            Figure::Max => "max",
            Figure::ServerCpuPer1k => "server CPU per 1k req",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Figure::Goodput | Figure::Rps => "req/s",
            Figure::ErrorRate => "%",
            Figure::ServerCpuPer1k => "CPU-ms",
            _ => "ms",
        }
    }

    /// Throughput: more is better. Latency, errors, CPU cost: less is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Figure::Goodput | Figure::Rps)
    }

    /// Extreme tails rest on few samples and swing more between runs.
    fn is_tail(self) -> bool {
        matches!(self, Figure::P99_9 | Figure::Max)
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The figures of one run, named for the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFigures {
    /// How the run is called in the table (usually its file name).
    pub label: String,
    pub plan: PlanSummary,
    pub goodput: f64,
    pub rps: f64,
    pub error_rate_pct: f64,
    /// Latencies in ms; `None` when the run completed no request.
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p99_9_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Server CPU-seconds per 1000 requests, when the server was monitored.
    pub server_cpu_s_per_1k: Option<f64>,
}

impl RunFigures {
    /// The figures of a result. Set `server_cpu_s_per_1k` afterwards when the
    /// server was monitored.
    pub fn of(label: impl Into<String>, r: &RunResult) -> RunFigures {
        let has_latency = r.requests.completed > 0;
        let ms = |us: u64| has_latency.then_some(us as f64 / 1000.0);
        RunFigures {
            label: label.into(),
            plan: r.plan.clone(),
            goodput: r.goodput,
            rps: r.rps,
            error_rate_pct: r.error_rate_pct,
            p50_ms: ms(r.latency_us.p50),
            p90_ms: ms(r.latency_us.p90),
            p99_ms: ms(r.latency_us.p99),
            p99_9_ms: ms(r.latency_us.p99_9),
            max_ms: ms(r.latency_us.max),
            server_cpu_s_per_1k: None,
        }
    }

    pub fn get(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Goodput => Some(self.goodput),
            Figure::Rps => Some(self.rps),
            Figure::ErrorRate => Some(self.error_rate_pct),
            Figure::P50 => self.p50_ms,
            Figure::P90 => self.p90_ms,
            Figure::P99 => self.p99_ms,
            Figure::P99_9 => self.p99_9_ms,
            Figure::Max => self.max_ms,
            // Milliseconds: CPU-seconds per 1000 requests are small numbers
            // (0.012) whose differences vanish at two decimals.
            Figure::ServerCpuPer1k => self.server_cpu_s_per_1k.map(|s| s * 1000.0),
        }
        .filter(|v| v.is_finite())
    }
}

/// How a figure moved against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The first run: what the others are compared with.
    Baseline,
    Better,
    Worse,
    /// Within the noise band.
    Same,
    /// Repeated runs: the confidence interval of the difference contains zero.
    NoSignificantDifference,
    /// A side lacks the figure.
    Unknown,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Baseline => "baseline",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::Unknown => "unknown",
        })
    }
}

/// Noise bands and confidence level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareOptions {
    /// Relative changes within ±5% are "same": run-to-run noise on one machine.
    pub noise_pct: f64,
    /// p99.9 and max: ±10%, as they rest on a handful of samples.
    pub tail_noise_pct: f64,
    /// Error rates within ±0.1 percentage points (or noise_pct relative) are
    /// "same": a relative change from 0% is meaningless.
    pub error_noise_pp: f64,
    /// Confidence of the repeated-runs interval: 0.95.
    pub confidence: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            noise_pct: 5.0,
            tail_noise_pct: 10.0,
            error_noise_pp: 0.1,
            confidence: 0.95,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("compare needs at least 2 runs, got {got}")]
    TooFewRuns { got: usize },
    #[error(
        "a repeated comparison needs at least 2 runs per side, got {baseline} and {candidate}"
    )]
    TooFewRepeats { baseline: usize, candidate: usize },
    #[error("confidence must lie strictly between 0 and 1, got {0}")]
    BadConfidence(f64),
}

/// One figure across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub figure: Figure,
    pub name: &'static str,
    pub unit: &'static str,
    /// One per run, in the order given.
    pub values: Vec<Option<f64>>,
    /// Change against the first run, percent; `None` for the first run and
    /// where the baseline is zero or missing.
    pub change_pct: Vec<Option<f64>>,
    /// Per run; the first is [`Verdict::Baseline`].
    pub verdicts: Vec<Verdict>,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub labels: Vec<String>,
    pub rows: Vec<Row>,
    /// Plan differences: comparing unlike runs is allowed but flagged.
    pub warnings: Vec<String>,
}

/// Compares runs against the first one.
pub fn compare(runs: &[RunFigures], opts: &CompareOptions) -> Result<Comparison, CompareError> {
    let Some(base) = runs.first().filter(|_| runs.len() >= 2) else {
        return Err(CompareError::TooFewRuns { got: runs.len() });
    };
    let rows = figures_present(runs.iter())
        .map(|figure| {
            let values: Vec<Option<f64>> = runs.iter().map(|r| r.get(figure)).collect();
            let b = values[0];
            let change_pct = values
                .iter()
                .enumerate()
                .map(|(i, v)| (i > 0).then(|| relative(*v, b)).flatten())
                .collect();
            let verdicts = values
                .iter()
                .enumerate()
                .map(|(i, v)| match (i, b, v) {
                    (0, _, _) => Verdict::Baseline,
                    (_, Some(b), Some(v)) => judge(figure, b, *v, opts),
                    _ => Verdict::Unknown,
                })
                .collect();
            Row {
                figure,
                name: figure.name(),
                unit: figure.unit(),
                values,
                change_pct,
                verdicts,
            }
        })
        .collect();
    Ok(Comparison {
        labels: runs.iter().map(|r| r.label.clone()).collect(),
        rows,
        warnings: plan_warnings(base, runs.iter().skip(1)),
    })
}

/// Every figure, except server CPU when no run has it.
fn figures_present<'a>(
    runs: impl Iterator<Item = &'a RunFigures> + Clone,
) -> impl Iterator<Item = Figure> {
    let has_cpu = runs.clone().any(|r| r.server_cpu_s_per_1k.is_some());
    Figure::ALL
        .into_iter()
        .filter(move |f| *f != Figure::ServerCpuPer1k || has_cpu)
}

fn relative(value: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (value, base) {
        (Some(v), Some(b)) if b != 0.0 => Some(100.0 * (v - b) / b.abs()),
        _ => None,
    }
}

/// Better, worse or the same within the figure's noise band.
fn judge(figure: Figure, base: f64, value: f64, opts: &CompareOptions) -> Verdict {
    let diff = value - base;
    let band = match figure {
        Figure::ErrorRate => opts.error_noise_pp.max(base.abs() * opts.noise_pct / 100.0),
        f if f.is_tail() => base.abs() * opts.tail_noise_pct / 100.0,
        _ => base.abs() * opts.noise_pct / 100.0,
    };
    if diff.abs() <= band {
        Verdict::Same
    } else {
        direction(figure, diff)
    }
}

fn direction(figure: Figure, diff: f64) -> Verdict {
    if (diff > 0.0) == figure.higher_is_better() {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

/// Names the plan fields in which each run differs from the baseline.
fn plan_warnings<'a>(
    base: &RunFigures,
    others: impl Iterator<Item = &'a RunFigures>,
) -> Vec<String> {
    others
        .filter_map(|run| {
            let diffs = plan_differences(&base.plan, &run.plan);
            (!diffs.is_empty()).then(|| {
                format!(
                    "'{}' ran another plan than '{}': {}",
                    run.label,
                    base.label,
                    diffs.join(", ")
                )
            })
        })
        .collect()
}

/// Plan fields named first in warnings, in the order a reader checks them;
/// any other field follows alphabetically.
const PLAN_KEY_ORDER: [&str; 6] = ["url", "method", "model", "rate", "connections", "threads"];

/// Every plan field that differs, as `name a vs b`. Compared through the
/// serialized form so that fields added to the schema later are covered too.
fn plan_differences(a: &PlanSummary, b: &PlanSummary) -> Vec<String> {
    let as_map = |p: &PlanSummary| match serde_json::to_value(p) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let (a, b) = (as_map(a), as_map(b));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort_by_key(|k| {
        let rank = PLAN_KEY_ORDER.iter().position(|o| o == k);
        (rank.unwrap_or(PLAN_KEY_ORDER.len()), k.as_str())
    });
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k} {} vs {}", show(a.get(k)), show(b.get(k))))
        .collect()
}

fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// One figure's difference between two sides of repeated runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffRow {
    pub figure: Figure,
    pub name: &'static str,
    pub unit: &'static str,
    pub runs_baseline: usize,
    pub runs_candidate: usize,
    pub mean_baseline: f64,
    pub mean_candidate: f64,
    /// mean_candidate − mean_baseline.
    pub diff: f64,
    /// diff relative to the baseline mean, percent.
    pub diff_pct: Option<f64>,
    /// The confidence interval of `diff`.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    pub verdict: Verdict,
}

/// Repeated runs on each side, compared by Welch's t interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatedComparison {
    pub baseline: String,
    pub candidate: String,
    pub confidence: f64,
    pub rows: Vec<DiffRow>,
    pub warnings: Vec<String>,
}

/// Compares two sides of repeated runs (`--repeat`): mean difference per
/// figure with a Welch confidence interval; "no significant difference" when
/// it contains zero. Labels are taken from each side's first run.
pub fn compare_repeated(
    baseline: &[RunFigures],
    candidate: &[RunFigures],
    opts: &CompareOptions,
) -> Result<RepeatedComparison, CompareError> {
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        return Err(CompareError::BadConfidence(opts.confidence));
    }
    let (Some(base), Some(cand)) = (baseline.first(), candidate.first()) else {
        return Err(too_few(baseline, candidate));
    };
    if baseline.len() < 2 || candidate.len() < 2 {
        return Err(too_few(baseline, candidate));
    }
    let rows = figures_present(baseline.iter().chain(candidate))
        .filter_map(|figure| {
            let a: Vec<f64> = baseline.iter().filter_map(|r| r.get(figure)).collect();
            let b: Vec<f64> = candidate.iter().filter_map(|r| r.get(figure)).collect();
            welch(figure, &a, &b, opts.confidence)
        })
        .collect();
    Ok(RepeatedComparison {
        baseline: base.label.clone(),
        candidate: cand.label.clone(),
        confidence: opts.confidence,
        rows,
        warnings: plan_warnings(base, baseline.iter().skip(1).chain(candidate)),
    })
}

fn too_few(a: &[RunFigures], b: &[RunFigures]) -> CompareError {
    CompareError::TooFewRepeats {
        baseline: a.len(),
        candidate: b.len(),
    }
}

/// Mean and unbiased (n − 1) sample variance.
fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Welch's interval: diff ± t(1−α/2, ν)·sqrt(s²ₐ/nₐ + s²ᵦ/nᵦ), with ν from
/// Welch–Satterthwaite. `None` when a side has fewer than 2 values.
fn welch(figure: Figure, a: &[f64], b: &[f64], confidence: f64) -> Option<DiffRow> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let diff = mb - ma;
    let (qa, qb) = (va / na, vb / nb);
    let se = (qa + qb).sqrt();
    let (half, df) = if se > 0.0 {
        let df = (qa + qb).powi(2) / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
        let t = StudentsT::new(0.0, 1.0, df)
            .ok()?
            .inverse_cdf(0.5 + confidence / 2.0);
        (t * se, df)
    } else {
        // No spread on either side: the difference is exact.
        (0.0, na + nb - 2.0)
    };
    let (ci_low, ci_high) = (diff - half, diff + half);
    let verdict = if ci_low <= 0.0 && ci_high >= 0.0 {
        Verdict::NoSignificantDifference
    } else {
        direction(figure, diff)
    };
    Some(DiffRow {
        figure,
        name: figure.name(),
        unit: figure.unit(),
        runs_baseline: a.len(),
        runs_candidate: b.len(),
        mean_baseline: ma,
        mean_candidate: mb,
        diff,
        diff_pct: relative(Some(mb), Some(ma)),
        ci_low,
        ci_high,
        df,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::tests::result;

    fn run(label: &str, rps: f64, error_pct: f64, latency_ms: u64) -> RunFigures {
        let lat: Vec<u64> = (0..100).map(|i| latency_ms * 1000 + i).collect();
        RunFigures::of(label, &result(rps, error_pct, &lat))
    }

    fn row(c: &Comparison, f: Figure) -> &Row {
        c.rows.iter().find(|r| r.figure == f).unwrap()
    }

    #[test]
    fn logs_on_versus_off_from_the_seed() {
        // seeds/001: logging off, 1000 users: 3461 req/s (+26.3% over ~2740),
        // mean 241 ms (−20%); errors 0 → 0.79%.
        let on = run("logs-on.json", 2740.0, 0.0, 301);
        let off = run("logs-off.json", 3461.0, 0.79, 241);
        let c = compare(&[on, off], &CompareOptions::default()).unwrap();
        assert_eq!(c.labels, vec!["logs-on.json", "logs-off.json"]);
        let rps = row(&c, Figure::Rps);
        assert!((rps.change_pct[1].unwrap() - 26.3).abs() < 0.1);
        assert_eq!(rps.verdicts, vec![Verdict::Baseline, Verdict::Better]);
        let p50 = row(&c, Figure::P50);
        assert!((p50.change_pct[1].unwrap() + 20.0).abs() < 0.5);
        assert_eq!(p50.verdicts[1], Verdict::Better, "lower latency is better");
        let errors = row(&c, Figure::ErrorRate);
        assert_eq!(errors.change_pct[1], None, "no relative change from 0%");
        assert_eq!(errors.verdicts[1], Verdict::Worse);
        assert!(c.rows.iter().all(|r| r.figure != Figure::ServerCpuPer1k));
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn noise_band_and_three_runs() {
        let a = run("a", 1000.0, 0.0, 10);
        let b = run("b", 1030.0, 0.05, 12);
        let mut c3 = run("c", 900.0, 0.0, 10);
        c3.server_cpu_s_per_1k = Some(0.4);
        let c = compare(&[a, b, c3], &CompareOptions::default()).unwrap();
        let rps = row(&c, Figure::Rps);
        assert_eq!(
            rps.verdicts,
            vec![Verdict::Baseline, Verdict::Same, Verdict::Worse]
        );
        assert_eq!(row(&c, Figure::ErrorRate).verdicts[1], Verdict::Same);
        assert_eq!(row(&c, Figure::P50).verdicts[1], Verdict::Worse);
        // Max is a tail figure: +10% band. 12.099 vs 10.099 ms is +19.8%.
        assert_eq!(row(&c, Figure::Max).verdicts[1], Verdict::Worse);
        let cpu = row(&c, Figure::ServerCpuPer1k);
        assert_eq!(
            cpu.values,
            vec![None, None, Some(400.0)],
            "0.4 CPU-s = 400 CPU-ms"
        );
        assert_eq!(cpu.verdicts[2], Verdict::Unknown);
    }

    #[test]
    fn plan_differences_are_warnings() {
        let a = run("t1.json", 1000.0, 0.0, 10);
        let mut b = run("t2.json", 1000.0, 0.0, 10);
        b.plan.connections = 500;
        b.plan.url = "http://127.0.0.1:9090/".into();
        b.plan.keepalive = false;
        let c = compare(&[a, b], &CompareOptions::default()).unwrap();
        assert_eq!(c.warnings.len(), 1);
        let w = &c.warnings[0];
        assert!(
            w.contains("'t2.json' ran another plan than 't1.json'"),
            "{w}"
        );
        assert!(w.contains("connections 100 vs 500"), "{w}");
        assert!(w.contains("url http://127.0.0.1:8080/ vs http://127.0.0.1:9090/"));
        assert!(w.contains("keepalive true vs false"));
        assert!(w.find("url").unwrap() < w.find("connections").unwrap());
        assert!(!w.contains("threads"));
    }

    #[test]
    fn needs_two_runs() {
        let a = run("a", 1.0, 0.0, 1);
        assert_eq!(
            compare(std::slice::from_ref(&a), &CompareOptions::default()),
            Err(CompareError::TooFewRuns { got: 1 })
        );
        assert!(compare_repeated(
            std::slice::from_ref(&a),
            &[a.clone(), a.clone()],
            &CompareOptions::default()
        )
        .is_err());
    }

    fn side(label: &str, rps: &[f64]) -> Vec<RunFigures> {
        rps.iter().map(|&x| run(label, x, 0.0, 10)).collect()
    }

    #[test]
    fn welch_interval_matches_a_known_case() {
        // a: mean 20, var 10/4 = 2.5 (n=5); b: mean 22, var 2.5 (n=5).
        // se = sqrt(0.5+0.5) = 1, df = 8, t(0.975, 8) = 2.306004.
        let a = side("a", &[18.0, 19.0, 20.0, 21.0, 22.0]);
        let b = side("b", &[20.0, 21.0, 22.0, 23.0, 24.0]);
        let r = compare_repeated(&a, &b, &CompareOptions::default()).unwrap();
        let rps = r.rows.iter().find(|r| r.figure == Figure::Rps).unwrap();
        assert!((rps.diff - 2.0).abs() < 1e-12);
        assert!((rps.df - 8.0).abs() < 1e-9);
        assert!((rps.ci_low - (2.0 - 2.306004)).abs() < 1e-5, "{rps:?}");
        assert!((rps.ci_high - (2.0 + 2.306004)).abs() < 1e-5);
        assert_eq!(rps.verdict, Verdict::NoSignificantDifference);
        assert_eq!(r.baseline, "a");
        assert_eq!(r.candidate, "b");
    }

    #[test]
    fn welch_finds_a_real_difference_with_unequal_variances() {
        let a = side("a", &[1000.0, 1010.0, 990.0, 1005.0]);
        let b = side("b", &[1200.0, 1100.0, 1300.0, 1150.0, 1250.0]);
        let r = compare_repeated(&a, &b, &CompareOptions::default()).unwrap();
        let rps = r.rows.iter().find(|r| r.figure == Figure::Rps).unwrap();
        assert!(rps.ci_low > 0.0, "{rps:?}");
        assert_eq!(rps.verdict, Verdict::Better);
        // Welch–Satterthwaite df lies between min(n)-1 and na+nb-2.
        assert!(rps.df > 3.0 && rps.df < 7.0, "{}", rps.df);
        // Latency identical on both sides: exact, no difference.
        let p50 = r.rows.iter().find(|r| r.figure == Figure::P50).unwrap();
        assert_eq!(p50.verdict, Verdict::NoSignificantDifference);
        assert_eq!(p50.ci_low, 0.0);
    }

    #[test]
    fn repeated_rejects_bad_input() {
        let a = side("a", &[1.0, 2.0]);
        let opts = CompareOptions {
            confidence: 1.0,
            ..CompareOptions::default()
        };
        assert_eq!(
            compare_repeated(&a, &a, &opts),
            Err(CompareError::BadConfidence(1.0))
        );
        assert_eq!(
            compare_repeated(&[], &a, &CompareOptions::default()),
            Err(CompareError::TooFewRepeats {
                baseline: 0,
                candidate: 2
            })
        );
    }

    #[test]
    fn serializes_rows() {
        let c = compare(
            &[run("a", 1.0, 0.0, 1), run("b", 2.0, 0.0, 1)],
            &CompareOptions::default(),
        )
        .unwrap();
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["rows"][0]["figure"], "goodput");
        assert_eq!(json["rows"][0]["verdicts"][1], "better");
        assert_eq!(json["rows"][6]["name"], "p99.9");
    }
}
