//! Sweep analysis: classifies each step of a concurrency (closed model) or
//! rate (open model) ladder as healthy, saturated, queueing or overloaded, and
//! finds the capacity, the knee, the stable range and the throughput ceiling —
//! the reasoning the seed authors did by hand over their tables.
//!
//! Owns the step figures, the thresholds, the per-step rules and how much
//! evidence a ceiling or a capacity rests on. The sentences live in
//! `verdict`, the rate search in `search`, the USL fit in `usl`, the server
//! saturation evidence and Little's law in `saturation` (the last two are
//! this module's children: they read its step types).

// The sentences and the saturation evidence are this module's children:
// they read its step types, and it calls them (no cycle between siblings).
pub(crate) mod saturation;
mod verdict;

use crate::ceiling::{plateau, GoodputRange};
use crate::slo::{all_passed, evaluate, Condition, ConditionOutcome, Measure, Metric};
use crate::usl::{fit_usl, UslFit};
use saturation::{little_check, server_saturation, LittleCheck, ServerCpu};
use serde::{Deserialize, Serialize};
use stampede_metrics::RunResult;
use std::fmt;

/// The schema tag of a sweep file, whose `steps`, `capacity`, `knee`, `usl`
/// and `verdict` come from [`SweepAnalysis`].
pub const SWEEP_SCHEMA: &str = "stampede.sweep/1";

/// The load a step applied: the sweep's independent variable.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    /// Closed model: this many concurrent connections (users).
    Connections(u64),
    /// Open model: this many requests per second offered.
    Rate(f64),
}

impl Load {
    /// The number of connections or the rate (req/s).
    pub fn value(self) -> f64 {
        match self {
            Load::Connections(n) => n as f64,
            Load::Rate(r) => r,
        }
    }

    pub(crate) fn is_closed(self) -> bool {
        matches!(self, Load::Connections(_))
    }
}

/// `1 connection`, `2 connections`: the count with its noun in agreement.
pub(crate) fn count_noun(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

impl fmt::Display for Load {
    /// `2000 connections`, `1 connection` or `5000 req/s offered`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Load::Connections(n) => f.write_str(&count_noun(*n, "connection")),
            Load::Rate(r) if r.fract() == 0.0 => write!(f, "{r:.0} req/s offered"),
            Load::Rate(r) => write!(f, "{r} req/s offered"),
        }
    }
}

/// What the analysis needs of one step; from a [`RunResult`] or from a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepInput {
    /// The load the step applied.
    #[serde(flatten)]
    pub load: Load,
    /// Successful responses per second.
    pub goodput: f64,
    /// Completed responses per second.
    pub rps: f64,
    /// Failed share of finished requests, in percent.
    pub error_rate_pct: f64,
    /// Mean latency, ms.
    pub mean_ms: f64,
    /// Mean service time (from the actual send), ms: the server's own time,
    /// without the client-side wait of the open model.
    pub service_mean_ms: Option<f64>,
    /// Median latency, ms.
    pub p50_ms: Option<f64>,
    /// 90th percentile latency, ms.
    pub p90_ms: Option<f64>,
    /// 99th percentile latency, ms.
    pub p99_ms: Option<f64>,
    /// 99.9th percentile latency, ms.
    pub p99_9_ms: Option<f64>,
    /// Highest latency, ms.
    pub max_ms: Option<f64>,
    /// Finished requests (completed + errors), the base of the timeout share.
    pub requests: u64,
    /// Requests that hit the connect or response timeout.
    pub timeouts: u64,
    /// Connections used (open model: checked against rate × latency).
    pub connections: Option<u64>,
    /// The monitored server's CPU (`--pid`, `--spawn`), when there was one.
    pub server_cpu: Option<ServerCpu>,
}

impl StepInput {
    /// The figures of one step's result. `load` is what the sweep set.
    pub fn from_result(load: Load, r: &RunResult) -> StepInput {
        let ms = |us: u64| Some(us as f64 / 1000.0);
        let error = |kind: &str| r.errors.get(kind).copied().unwrap_or(0);
        StepInput {
            load,
            goodput: r.goodput,
            rps: r.rps,
            error_rate_pct: r.error_rate_pct,
            mean_ms: r.latency_us.mean / 1000.0,
            service_mean_ms: (r.service_time_us.mean > 0.0)
                .then(|| r.service_time_us.mean / 1000.0),
            p50_ms: ms(r.latency_us.p50),
            p90_ms: ms(r.latency_us.p90),
            p99_ms: ms(r.latency_us.p99),
            p99_9_ms: ms(r.latency_us.p99_9),
            max_ms: ms(r.latency_us.max),
            requests: r.requests.completed + r.requests.errors,
            timeouts: error("timeout") + error("connect_timeout"),
            connections: Some(r.plan.connections as u64),
            server_cpu: r.monitor.as_ref().and_then(ServerCpu::from_monitor),
        }
    }

    /// A closed-model step at `connections`.
    pub fn closed(connections: u64, r: &RunResult) -> StepInput {
        StepInput::from_result(Load::Connections(connections), r)
    }

    /// An open-model step at `rate` requests per second.
    pub fn open(rate: f64, r: &RunResult) -> StepInput {
        StepInput::from_result(Load::Rate(rate), r)
    }

    /// Throughput that was real: rps × (1 − error rate).
    pub(crate) fn effective_rps(&self) -> f64 {
        self.rps * (1.0 - self.error_rate_pct / 100.0)
    }

    fn timeout_pct(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            100.0 * self.timeouts as f64 / self.requests as f64
        }
    }
}

impl Measure for StepInput {
    fn measure(&self, metric: Metric) -> Option<f64> {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        match metric {
            Metric::Percentile(p) if close(p, 50.0) => self.p50_ms,
            Metric::Percentile(p) if close(p, 90.0) => self.p90_ms,
            Metric::Percentile(p) if close(p, 99.0) => self.p99_ms,
            Metric::Percentile(p) if close(p, 99.9) => self.p99_9_ms,
            Metric::Percentile(p) if close(p, 100.0) => self.max_ms,
            Metric::Percentile(_) | Metric::Min => None,
            Metric::Max => self.max_ms,
            Metric::Mean => (self.requests > 0 || self.rps > 0.0).then_some(self.mean_ms),
            Metric::Errors => Some(self.error_rate_pct),
            Metric::Rps => Some(self.rps),
            Metric::Goodput => Some(self.goodput),
            Metric::Checks | Metric::Stream(..) => None,
        }
    }
}

/// Where a step stands. The rule that decided is in [`StepAnalysis::rule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Throughput still rises with load; latency flat.
    Healthy,
    /// Added load bought little throughput while latency rose: the knee.
    Saturated,
    /// Past the knee, throughput flat or falling and latency rising with load:
    /// requests only wait longer (Little's law, with the queue as the difference).
    Queueing,
    /// Errors over the limit (the SLO's, else `max_error_pct`) or timeouts.
    Overloaded,
}

impl Class {
    /// The class in words (`healthy`, `saturated`, `queueing`, `overloaded`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Healthy => "healthy",
            Class::Saturated => "saturated",
            Class::Queueing => "queueing",
            Class::Overloaded => "overloaded",
        }
    }
}

/// The classifier's knobs. Every default is printed in the rule text, so a
/// reader can see why a step got its class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    /// A step is healthy while the added load yields at least this share of
    /// linear scaling: (ΔX/X) / (ΔN/N) ≥ 0.5.
    pub healthy_efficiency: f64,
    /// A throughput change below +5% counts as flat (queueing past the knee).
    pub flat_pct: f64,
    /// A mean-latency rise above 10% counts as rising.
    pub latency_rise_pct: f64,
    /// Errors above 1% make a step overloaded, unless the SLO has an errors
    /// condition, which then rules.
    pub max_error_pct: f64,
    /// Timeouts above 0.1% of finished requests make a step overloaded.
    pub max_timeout_pct: f64,
    /// Little's law check: in-flight X·R within ±25% of the concurrency.
    pub little_tolerance_pct: f64,
    /// Open model: achieved goodput below 95% of the offered rate is not healthy.
    pub min_rate_achieved_pct: f64,
    /// Open model: a mean-latency rise over 50% is not healthy even when the
    /// rate was achieved — a queue is building. (A closed model needs no such
    /// rule: by Little's law its latency follows from the efficiency.)
    pub open_latency_rise_pct: f64,
    /// A monitored server using 90% of the CPU it could get (or with a
    /// thread at 90% of a core) is saturated: more connections only queue.
    pub server_cpu_pinned_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            healthy_efficiency: 0.5,
            flat_pct: 5.0,
            latency_rise_pct: 10.0,
            max_error_pct: 1.0,
            max_timeout_pct: 0.1,
            little_tolerance_pct: 25.0,
            min_rate_achieved_pct: 95.0,
            open_latency_rise_pct: 50.0,
            server_cpu_pinned_pct: 90.0,
        }
    }
}

/// One step's classification and figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepAnalysis {
    /// The load the step applied.
    #[serde(flatten)]
    pub load: Load,
    /// The step's class.
    pub class: Class,
    /// The rule that decided, with the numbers, e.g. "throughput +6.1% for
    /// +100% load (efficiency 0.06 < 0.5) while latency +101.7%: the knee".
    pub rule: String,
    /// Successful responses per second.
    pub goodput: f64,
    /// Completed responses per second.
    pub rps: f64,
    /// Failed share of finished requests, in percent.
    pub error_rate_pct: f64,
    /// Mean latency, ms.
    pub mean_ms: f64,
    /// rps × (1 − error rate).
    pub effective_rps: f64,
    /// Goodput change against the previous step, percent.
    pub throughput_change_pct: Option<f64>,
    /// Mean-latency change against the previous step, percent.
    pub latency_change_pct: Option<f64>,
    /// Load change against the previous step, percent.
    pub load_change_pct: Option<f64>,
    /// Little's law checked on the step.
    pub little: LittleCheck,
    /// Why the server was saturated at this step (its CPU pinned, or its
    /// response time rising with no throughput gain), when it was.
    pub server_saturation: Option<String>,
    /// The monitored server's CPU, when `--pid`/`--spawn` was given.
    pub server_cpu: Option<ServerCpu>,
    /// SLO outcomes on this step, when an SLO was given.
    pub slo: Option<Vec<ConditionOutcome>>,
    /// Whether every SLO condition passed, when an SLO was given.
    pub slo_passed: Option<bool>,
}

/// A step named by its load and goodput: the shape of `capacity` and `knee`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The step's goodput, req/s.
    pub goodput: f64,
    /// The step's load.
    #[serde(flatten)]
    pub load: Load,
}

/// The range of loads at which the target was stable.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadRange {
    /// The first load of the range.
    pub from: Load,
    /// The last load of the range.
    pub to: Load,
}

/// The whole answer of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepAnalysis {
    /// Every step, in order.
    pub steps: Vec<StepAnalysis>,
    /// Highest goodput that meets the SLO (or, without one, is not overloaded).
    pub capacity: Option<Point>,
    /// False when the capacity step is the last one tested: the capacity is
    /// then at least `capacity.goodput`, not found.
    pub capacity_reached: bool,
    /// The first saturated step.
    pub knee: Option<Point>,
    /// From the first step through the last consecutive healthy one (that
    /// meets the SLO): saturated steps are past the knee, not stable.
    pub stable_range: Option<LoadRange>,
    /// Mean goodput of the plateau: the steps from the knee on (overloaded
    /// ones left out) within `flat_pct` of the highest. Only when at least
    /// two steps show it; otherwise see `ceiling_at_least`.
    pub ceiling: Option<f64>,
    /// The plateau's lowest and highest goodput, with `ceiling`.
    pub ceiling_range: Option<GoodputRange>,
    /// Past a knee but with only one step on the plateau: the ceiling is not
    /// reached in the tested range, and is at least this goodput.
    pub ceiling_at_least: Option<f64>,
    /// Closed model only, fitted to the steps that were not overloaded.
    pub usl: Option<UslFit>,
    /// The answer in sentences, as printed.
    pub verdict: Vec<String>,
    /// Doubts about the answer: steps at odds with Little's law or above the offered rate, a USL fit that could not be made.
    pub warnings: Vec<String>,
}

/// Classifies every step and derives capacity, knee, stable range, ceiling,
/// USL fit and the verdict. Steps should be in ascending load.
pub fn analyze_sweep(
    steps: &[StepInput],
    slo: Option<&[Condition]>,
    thresholds: &Thresholds,
) -> SweepAnalysis {
    let analyzed = classify(steps, slo, thresholds);
    let meets = |s: &StepAnalysis| s.class != Class::Overloaded && s.slo_passed != Some(false);

    let capacity_index = analyzed
        .iter()
        .enumerate()
        .filter(|(_, s)| meets(s))
        .max_by(|(_, a), (_, b)| a.goodput.total_cmp(&b.goodput))
        .map(|(i, _)| i);
    let capacity = capacity_index.map(|i| point(&analyzed[i]));
    // The highest step is a lower bound on capacity, unless the sweep ends
    // queueing: its throughput is then flat while latency rises, and more
    // load would only queue, so sweeping higher would find nothing more.
    let capacity_reached = capacity_index
        .is_some_and(|i| i + 1 < analyzed.len() || queueing_from(&analyzed).is_some());
    let knee_index = analyzed.iter().position(|s| s.class == Class::Saturated);
    let knee = knee_index.map(|i| point(&analyzed[i]));
    let stable_len = analyzed
        .iter()
        .take_while(|s| s.class == Class::Healthy && meets(s))
        .count();
    let stable_range = (stable_len > 0).then(|| LoadRange {
        from: analyzed[0].load,
        to: analyzed[stable_len - 1].load,
    });
    let plateau = knee_index.map(|k| {
        let usable: Vec<f64> = analyzed[k..]
            .iter()
            .filter(|s| s.class != Class::Overloaded)
            .map(|s| s.goodput)
            .collect();
        plateau(&usable, thresholds.flat_pct)
    });

    let mut warnings: Vec<String> = analyzed
        .iter()
        .filter_map(|s| s.little.note.as_ref().map(|n| format!("{}: {n}", s.load)))
        .collect();
    warnings.extend(analyzed.iter().filter_map(above_offered));
    let usl = fit_closed_model(&analyzed, &mut warnings);

    let mut analysis = SweepAnalysis {
        steps: analyzed,
        capacity,
        capacity_reached,
        knee,
        stable_range,
        ceiling: plateau.and_then(|p| p.ceiling),
        ceiling_range: plateau.and_then(|p| p.range),
        ceiling_at_least: plateau.and_then(|p| p.at_least),
        usl,
        verdict: Vec::new(),
        warnings,
    };
    analysis.verdict = verdict::sentences(&analysis, slo.is_some(), thresholds);
    analysis
}

/// The first queueing step when every step from it on only queues (or is
/// overloaded): from there on, added load bought no throughput.
pub(crate) fn queueing_from(steps: &[StepAnalysis]) -> Option<usize> {
    let q = steps.iter().position(|s| s.class == Class::Queueing)?;
    steps[q..]
        .iter()
        .all(|s| matches!(s.class, Class::Queueing | Class::Overloaded))
        .then_some(q)
}

fn point(s: &StepAnalysis) -> Point {
    Point {
        goodput: s.goodput,
        load: s.load,
    }
}

/// A step's window counts the requests intended in it, so its goodput
/// cannot exceed the offered rate by more than the timing noise of the
/// window (2%); a file that says otherwise (an older stampede's, or a merge
/// of mismatched agents) gets a warning rather than a silent efficiency > 1.
fn above_offered(s: &StepAnalysis) -> Option<String> {
    const NOISE: f64 = 1.02;
    let Load::Rate(rate) = s.load else {
        return None;
    };
    (rate > 0.0 && s.goodput > rate * NOISE).then(|| {
        format!(
            "{}: goodput {:.1} req/s exceeds the offered rate by {:.1}%: the step counted requests from outside its window, so its figures are not to be trusted",
            s.load,
            s.goodput,
            100.0 * (s.goodput / rate - 1.0)
        )
    })
}

/// USL applies to a closed model only; overloaded steps are left out because
/// their throughput is inflated by fast failures or deflated by timeouts.
fn fit_closed_model(steps: &[StepAnalysis], warnings: &mut Vec<String>) -> Option<UslFit> {
    if steps.is_empty() || !steps.iter().all(|s| s.load.is_closed()) {
        return None;
    }
    let points: Vec<(f64, f64)> = steps
        .iter()
        .filter(|s| s.class != Class::Overloaded && s.goodput > 0.0)
        .map(|s| (s.load.value(), s.goodput))
        .collect();
    match fit_usl(&points) {
        Ok(fit) => {
            warnings.extend(fit.warnings.iter().map(|w| format!("USL: {w}")));
            Some(fit)
        }
        Err(e) => {
            warnings.push(format!("USL not fitted: {e}"));
            None
        }
    }
}

/// The error-rate test of "overloaded": the SLO's errors conditions when it
/// has any, otherwise the threshold.
fn error_verdict(step: &StepInput, slo: Option<&[Condition]>, t: &Thresholds) -> Option<String> {
    // A step in which nothing completed has no error rate to speak of (every
    // request was still waiting at the deadline): it is past any capacity.
    if step.rps <= 0.0 && step.goodput <= 0.0 {
        return Some("no request completed within the step".to_string());
    }
    let slo_errors: Vec<&Condition> = slo
        .unwrap_or(&[])
        .iter()
        .filter(|c| c.metric == Metric::Errors)
        .collect();
    let e = step.error_rate_pct;
    if slo_errors.is_empty() {
        if e > t.max_error_pct {
            return Some(format!("errors {e:.2}% > {}%", t.max_error_pct));
        }
    } else if let Some(c) = slo_errors
        .iter()
        .find(|c| !c.comparator.holds(e, c.threshold))
    {
        return Some(format!("errors {e:.2}% fail the SLO's {}", c.text));
    }
    let timeouts = step.timeout_pct();
    (timeouts > t.max_timeout_pct).then(|| {
        format!(
            "{} ({timeouts:.2}% > {}% of requests)",
            count_noun(step.timeouts, "timeout"),
            t.max_timeout_pct
        )
    })
}

fn pct_change(new: f64, old: f64) -> Option<f64> {
    (old > 0.0 && new.is_finite()).then(|| 100.0 * (new / old - 1.0))
}

/// Walks the steps in order; the first step is the reference, and every
/// later one is judged by what its added load bought over the previous step.
fn classify(steps: &[StepInput], slo: Option<&[Condition]>, t: &Thresholds) -> Vec<StepAnalysis> {
    let mut past_knee = false;
    let Some(first) = steps.first() else {
        return Vec::new();
    };
    let base_latency_ms = first.mean_ms;
    let mut out = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| &steps[j]);
        let load_change = prev.and_then(|p| pct_change(step.load.value(), p.load.value()));
        let thr_change = prev.and_then(|p| pct_change(step.goodput, p.goodput));
        let lat_change = prev.and_then(|p| pct_change(step.mean_ms, p.mean_ms));
        let slo_outcomes = slo.map(|c| evaluate(c, step));
        let saturation = server_saturation(step, prev, first, t);
        let (class, rule) = if let Some(why) = error_verdict(step, slo, t) {
            (Class::Overloaded, format!("{why}: overloaded"))
        } else {
            let (class, rule) = judge_growth(
                step,
                load_change,
                thr_change,
                lat_change,
                past_knee,
                base_latency_ms,
                t,
            );
            past_knee |= class != Class::Healthy;
            (class, rule)
        };
        out.push(StepAnalysis {
            load: step.load,
            class,
            rule,
            goodput: step.goodput,
            rps: step.rps,
            error_rate_pct: step.error_rate_pct,
            mean_ms: step.mean_ms,
            effective_rps: step.effective_rps(),
            throughput_change_pct: thr_change,
            latency_change_pct: lat_change,
            load_change_pct: load_change,
            little: little_check(step, saturation.as_deref(), t),
            server_saturation: saturation,
            server_cpu: step.server_cpu,
            slo_passed: slo_outcomes.as_deref().map(all_passed),
            slo: slo_outcomes,
        });
    }
    out
}

/// Healthy, saturated or queueing, from the gains against the previous step.
fn judge_growth(
    step: &StepInput,
    load_change: Option<f64>,
    thr_change: Option<f64>,
    lat_change: Option<f64>,
    past_knee: bool,
    base_latency_ms: f64,
    t: &Thresholds,
) -> (Class, String) {
    let achieved_pct = match step.load {
        Load::Rate(r) if r > 0.0 => Some(100.0 * step.goodput / r),
        _ => None,
    };
    let shortfall = achieved_pct.filter(|a| *a < t.min_rate_achieved_pct);
    let (Some(dl), Some(dx)) = (load_change, thr_change) else {
        return match shortfall {
            Some(a) => (
                Class::Saturated,
                format!(
                    "first step, but only {a:.1}% of the offered rate achieved (< {}%): already saturated",
                    t.min_rate_achieved_pct
                ),
            ),
            None => (Class::Healthy, "first step: the reference".into()),
        };
    };
    // Scaling efficiency: the share of linear (ideal) throughput growth that
    // the added load bought. 1 = perfect scaling, ≤ 0 = nothing gained.
    let efficiency = if dl > 0.0 { dx / dl } else { 1.0 };
    let dr = lat_change.unwrap_or(0.0);
    let numbers = format!(
        "throughput {dx:+.1}% for {dl:+.0}% load (efficiency {efficiency:.2}), mean latency {dr:+.1}%"
    );
    let queue_building = !step.load.is_closed() && dr > t.open_latency_rise_pct;
    if efficiency >= t.healthy_efficiency && shortfall.is_none() && !queue_building {
        return (
            Class::Healthy,
            format!(
                "{numbers}: efficiency ≥ {} — still scaling",
                t.healthy_efficiency
            ),
        );
    }
    let why = match shortfall {
        Some(a) => format!("{numbers}, only {a:.1}% of the offered rate achieved"),
        None if queue_building => format!(
            "{numbers}: rate achieved but latency rose > {}%",
            t.open_latency_rise_pct
        ),
        None => format!("{numbers}: efficiency < {}", t.healthy_efficiency),
    };
    if !past_knee {
        return (Class::Saturated, format!("{why} — the knee"));
    }
    if dx < t.flat_pct && dr > t.latency_rise_pct {
        // Little's law: with throughput flat, extra concurrency shows up as
        // waiting time; X·(R − R₀) estimates the requests waiting in queue.
        let waiting = step.rps * (step.mean_ms - base_latency_ms).max(0.0) / 1000.0;
        return (
            Class::Queueing,
            format!(
                "{numbers}: throughput flat (< {:+}%) while latency rises (> {}%) — only queueing, ≈ {} waiting (Little's law: X·(R − R₀))",
                t.flat_pct,
                t.latency_rise_pct,
                count_noun(waiting.round() as u64, "request")
            ),
        );
    }
    (Class::Saturated, format!("{why}, past the knee"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::parse_slo;

    fn step(load: Load, rps: f64, mean_ms: f64, error_pct: f64) -> StepInput {
        StepInput {
            load,
            goodput: rps * (1.0 - error_pct / 100.0),
            rps,
            error_rate_pct: error_pct,
            mean_ms,
            service_mean_ms: None,
            p50_ms: None,
            p90_ms: None,
            p99_ms: None,
            p99_9_ms: None,
            max_ms: None,
            requests: (rps * 60.0) as u64,
            timeouts: 0,
            connections: None,
            server_cpu: None,
        }
    }

    /// seeds/001, the coroutine server with logging on under JMeter.
    fn seed_table() -> Vec<StepInput> {
        [
            (1000, 2700.0, 301.0, 0.0),
            (2000, 2863.9, 607.0, 0.0),
            (5000, 2804.1, 1324.0, 0.0),
            (10000, 3111.7, 2211.0, 11.91),
        ]
        .into_iter()
        .map(|(n, x, r, e)| step(Load::Connections(n), x, r, e))
        .collect()
    }

    fn classes(a: &SweepAnalysis) -> Vec<Class> {
        a.steps.iter().map(|s| s.class).collect()
    }

    #[test]
    fn a_step_where_nothing_completed_is_overloaded() {
        let mut steps = seed_table();
        steps[2] = step(Load::Connections(5000), 0.0, 0.0, 0.0);
        let a = analyze_sweep(&steps[..3], None, &Thresholds::default());
        assert_eq!(a.steps[2].class, Class::Overloaded, "{}", a.steps[2].rule);
        let range = a.stable_range.expect("a stable range");
        assert_eq!(range.to, Load::Connections(1000), "2000 is the knee");
    }

    #[test]
    fn reaches_the_seeds_conclusions() {
        let a = analyze_sweep(&seed_table(), None, &Thresholds::default());
        for s in &a.steps {
            println!("{:>6} {:<10} {}", s.load.value(), s.class.as_str(), s.rule);
        }
        for line in &a.verdict {
            println!("verdict: {line}");
        }
        for w in &a.warnings {
            println!("warning: {w}");
        }
        assert_eq!(
            classes(&a),
            vec![
                Class::Healthy,
                Class::Saturated,
                Class::Queueing,
                Class::Overloaded
            ]
        );
        // The seed's "best stable range 1000–2000 users" included the knee;
        // a saturated step is not stable.
        assert_eq!(
            a.stable_range,
            Some(LoadRange {
                from: Load::Connections(1000),
                to: Load::Connections(1000)
            })
        );
        assert_eq!(a.verdict[0], "Stable range: 1000 connections.");
        // "ceiling ≈ 2800 req/s", on two steps: 2000 and 5000.
        let ceiling = a.ceiling.unwrap();
        assert!((2780.0..2880.0).contains(&ceiling), "{ceiling}");
        let range = a.ceiling_range.unwrap();
        assert_eq!((range.low, range.high, range.steps), (2804.1, 2863.9, 2));
        assert_eq!(a.ceiling_at_least, None);
        assert!(a.capacity_reached);
        let capacity = a.capacity.unwrap();
        assert_eq!(capacity.load, Load::Connections(2000));
        assert!((capacity.goodput - 2863.9).abs() < 1e-9);
        assert_eq!(a.knee.unwrap().load, Load::Connections(2000));
        // "from 5000 on it only queues"
        assert!(a
            .verdict
            .iter()
            .any(|v| v.starts_with("From 5000 connections on, added load only queues")));
        // "10000 is past capacity", effective 2741.
        assert!(a
            .verdict
            .iter()
            .any(|v| v.contains("10000 connections is overloaded") && v.contains("past capacity")));
        assert!(a.verdict.iter().any(|v| v.contains(
            "3111.7 req/s with 11.91% errors = 2741.1 req/s effective, below the capacity of 2863.9 req/s"
        )));
        assert!((a.steps[3].effective_rps - 2741.1).abs() < 0.05);
        // Three usable closed-model points: a fit, flagged as barely determined.
        assert!(a.usl.is_some());
        assert!(a
            .warnings
            .iter()
            .any(|w| w.contains("only 3 concurrency levels")));
    }

    /// The seed's verdict word for word: each sentence's guard and wording
    /// (knee, ceiling, capacity, queueing, overload, effective rate, USL).
    #[test]
    fn the_seeds_verdict_in_full() {
        let a = analyze_sweep(&seed_table(), None, &Thresholds::default());
        assert_eq!(
            a.verdict,
            [
                "Stable range: 1000 connections.",
                "Knee at 2000 connections: +100% load gave +6.1% throughput while mean latency changed +101.7% (301 ms → 607 ms).",
                "Throughput ceiling ≈ 2834 req/s: goodput from the knee on stays within 2804.1–2863.9 req/s over 2 steps.",
                "Capacity: 2863.9 req/s goodput at 2000 connections (the highest goodput with errors ≤ 1% and timeouts ≤ 0.1%).",
                "From 5000 connections on, added load only queues: +150% load gave -2.1% throughput while mean latency changed +118.1% (607 ms → 1324 ms).",
                "10000 connections is overloaded (errors 11.91% > 1%): past capacity.",
                "10000 connections: 3111.7 req/s with 11.91% errors = 2741.1 req/s effective, below the capacity of 2863.9 req/s: the higher raw figure is not real.",
                "USL fit: λ = 16.8071 req/s per connection, σ = 0.0051 (contention), κ = 1.412e-7 (coherency), R² = 1.000; predicted peak 2878.7 req/s at N* ≈ 2654.",
            ]
        );
    }

    /// Queueing at one step that does not last, then overloaded to the end:
    /// "At …" rather than "From … on" for the queueing, "From … on" for the
    /// overload, and no "not real" where the raw figure is below capacity.
    #[test]
    fn queueing_that_passes_and_overload_to_the_end_in_full() {
        let steps: Vec<_> = [
            (50, 1000.0, 10.0, 0.0),
            (100, 1200.0, 18.0, 0.0),
            (200, 1230.0, 40.0, 0.0),
            (400, 1400.0, 60.0, 0.0),
            (800, 1300.0, 200.0, 5.0),
            (1600, 1350.0, 400.0, 20.0),
        ]
        .into_iter()
        .map(|(n, x, r, e)| step(Load::Connections(n), x, r, e))
        .collect();
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert_eq!(
            a.verdict,
            [
                "Stable range: 50 connections.",
                "Knee at 100 connections: +100% load gave +20.0% throughput while mean latency changed +80.0% (10.0 ms → 18.0 ms).",
                // Errors from 800 on: more load would only add errors.
                "Throughput ceiling not confirmed: at least 1400.0 req/s, but no second step past the knee confirms a plateau before the target is overloaded at 800 connections; sweep in finer steps below it.",
                "Capacity: 1400.0 req/s goodput at 400 connections (the highest goodput with errors ≤ 1% and timeouts ≤ 0.1%).",
                "At 200 connections added load only queues: +100% load gave +2.5% throughput while mean latency changed +122.2% (18.0 ms → 40.0 ms).",
                "From 800 connections on the target is overloaded (errors 5.00% > 1%): past capacity.",
                "800 connections: 1300.0 req/s with 5.00% errors = 1235.0 req/s effective.",
                "1600 connections: 1350.0 req/s with 20.00% errors = 1080.0 req/s effective.",
                "USL fit: λ = 62.2575 req/s per connection, σ = 0.0434 (contention), κ = 0.000e0 (coherency), R² = 0.924; no throughput peak predicted (κ ≈ 0 or σ ≥ 1).",
            ]
        );
        assert!(!a.verdict.iter().any(|v| v.contains("sweep higher")));
    }

    /// Errors before any knee: "No knee" must not claim that throughput
    /// still scales. Too few closed-model points say the USL was not fitted;
    /// an open model says nothing of USL.
    #[test]
    fn errors_before_the_knee_and_no_usl() {
        let table = [
            (10.0, 1000.0, 0.0),
            (20.0, 2000.0, 0.0),
            (40.0, 3900.0, 5.0),
        ];
        let closed: Vec<_> = table
            .iter()
            .map(|&(n, x, e)| step(Load::Connections(n as u64), x, 10.0, e))
            .collect();
        let a = analyze_sweep(&closed, None, &Thresholds::default());
        assert_eq!(
            classes(&a),
            vec![Class::Healthy, Class::Healthy, Class::Overloaded]
        );
        assert_eq!(
            a.verdict[1],
            "No knee: errors began before throughput stopped scaling."
        );
        assert_eq!(a.usl, None);
        assert_eq!(
            a.verdict.last().map(String::as_str),
            Some("USL not fitted (see warnings).")
        );
        let open: Vec<_> = table
            .iter()
            .map(|&(r, x, e)| step(Load::Rate(r * 100.0), x, 10.0, e))
            .collect();
        let a = analyze_sweep(&open, None, &Thresholds::default());
        assert_eq!(
            a.verdict[1],
            "No knee: errors began before throughput stopped scaling."
        );
        assert!(
            !a.verdict.iter().any(|v| v.contains("USL")),
            "{:#?}",
            a.verdict
        );
    }

    /// "The higher raw figure is not real" needs a raw figure above the
    /// capacity and an effective one below it; at either equality it is not said.
    #[test]
    fn an_error_inflated_figure_is_called_unreal_only_strictly_past_capacity() {
        let steps: Vec<_> = [
            (10, 1000.0, 0.0),
            (20, 2000.0, 0.0),
            // Raw figure equal to the capacity of 2000.
            (40, 2000.0, 5.0),
            // Effective figure equal to it: 4000 × (1 − 0.5).
            (80, 4000.0, 50.0),
            (160, 4100.0, 50.0),
        ]
        .into_iter()
        .map(|(n, x, e)| step(Load::Connections(n), x, 10.0, e))
        .collect();
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert_eq!(a.capacity.map(|c| c.goodput), Some(2000.0));
        let effective: Vec<&str> = a
            .verdict
            .iter()
            .filter(|v| v.contains("effective"))
            .map(String::as_str)
            .collect();
        assert_eq!(
            effective,
            [
                "40 connections: 2000.0 req/s with 5.00% errors = 1900.0 req/s effective.",
                "80 connections: 4000.0 req/s with 50.00% errors = 2000.0 req/s effective.",
                "160 connections: 4100.0 req/s with 50.00% errors = 2050.0 req/s effective.",
            ]
        );
    }

    #[test]
    fn seed_sweep_serializes_with_the_required_keys() {
        let a = analyze_sweep(&seed_table(), None, &Thresholds::default());
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["steps"][0]["connections"], 1000);
        assert_eq!(json["steps"][3]["class"], "overloaded");
        assert_eq!(json["capacity"]["connections"], 2000);
        assert_eq!(json["capacity"]["goodput"], 2863.9);
        assert_eq!(json["knee"]["connections"], 2000);
        for key in ["lambda", "sigma", "kappa", "r2", "n_star", "x_max"] {
            assert!(json["usl"].get(key).is_some(), "usl.{key}");
        }
        assert!(json["verdict"].as_array().unwrap().len() >= 5);
        let open = analyze_sweep(
            &[step(Load::Rate(100.0), 100.0, 1.0, 0.0)],
            None,
            &Thresholds::default(),
        );
        let json = serde_json::to_value(&open).unwrap();
        assert_eq!(json["steps"][0]["rate"], 100.0);
        assert_eq!(json["capacity"]["rate"], 100.0);
        assert!(json["usl"].is_null());
    }

    #[test]
    fn usl_shaped_closed_sweep_finds_the_knee_and_the_fit() {
        // λ=1000, σ=0.05, κ=0.0005: peak at N* ≈ 43.6.
        let x = |n: f64| 1000.0 * n / (1.0 + 0.05 * (n - 1.0) + 0.0005 * n * (n - 1.0));
        let steps: Vec<StepInput> = [1u64, 2, 4, 8, 16, 32, 64, 128]
            .iter()
            .map(|&n| {
                let thr = x(n as f64);
                // Little's law for a closed model without think time: R = N/X.
                step(Load::Connections(n), thr, 1000.0 * n as f64 / thr, 0.0)
            })
            .collect();
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        let c = classes(&a);
        assert_eq!(c[..4], [Class::Healthy; 4], "{:#?}", a.steps);
        let knee = a.knee.unwrap().load.value();
        assert!((16.0..=32.0).contains(&knee), "knee {knee}");
        assert_eq!(c[7], Class::Queueing);
        let fit = a.usl.as_ref().unwrap();
        assert!((fit.sigma - 0.05).abs() < 0.0025 && (fit.kappa - 0.0005).abs() < 0.000025);
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        assert!(a
            .verdict
            .iter()
            .any(|v| v.starts_with("USL fit: λ = 1000.0000")));
        // Capacity is the highest goodput: at N=32 (closest to N*).
        assert_eq!(a.capacity.unwrap().load, Load::Connections(32));
    }

    /// A `-r 20000:100000:40000` sweep as the analysis saw it before the
    /// window fix: the knee is the last step, so nothing shows a ceiling.
    fn rising_rate_table() -> Vec<StepInput> {
        [
            (20000.0, 19990.0, 1.0),
            (60000.0, 62617.0, 1.2),
            (100000.0, 126439.0, 3.5),
        ]
        .into_iter()
        .map(|(rate, x, mean)| {
            let mut s = step(Load::Rate(rate), x, mean, 0.0);
            s.connections = Some(1000);
            s
        })
        .collect()
    }

    #[test]
    fn one_step_past_the_knee_is_no_ceiling() {
        let a = analyze_sweep(&rising_rate_table(), None, &Thresholds::default());
        assert_eq!(
            classes(&a),
            vec![Class::Healthy, Class::Healthy, Class::Saturated]
        );
        assert_eq!(a.ceiling, None);
        assert_eq!(a.ceiling_range, None);
        assert_eq!(a.ceiling_at_least, Some(126439.0));
        assert!(a.verdict.iter().any(|v| v.starts_with(
            "Throughput ceiling not reached in the tested range: at least 126439.0 req/s"
        )));
        assert!(!a.verdict.iter().any(|v| v.contains("126439.0–126439.0")));
        // The saturated step is not in the stable range.
        assert_eq!(a.stable_range.map(|r| r.to), Some(Load::Rate(60000.0)));
        assert_eq!(a.verdict[0], "Stable range: 20000–60000 req/s offered.");
        // The highest step qualifies: capacity is a lower bound.
        assert!(!a.capacity_reached);
        assert!(a.verdict.iter().any(|v| v.starts_with(
            "Capacity not reached: at least 126439.0 req/s goodput at 100000 req/s offered"
        )));
        // More than was offered is flagged, whatever produced the file.
        let over: Vec<_> = a
            .warnings
            .iter()
            .filter(|w| w.contains("exceeds"))
            .collect();
        assert_eq!(over.len(), 2, "{:?}", a.warnings);
        assert!(over[0].starts_with("60000 req/s offered: goodput 62617.0 req/s exceeds"));
    }

    #[test]
    fn a_plateau_needs_two_flat_steps_past_the_knee() {
        // Knee at 3000 (latency), then goodput still climbs 40%: no ceiling yet.
        let rising: Vec<StepInput> = [
            (1000.0, 1000.0, 2.0),
            (2000.0, 2000.0, 2.1),
            (3000.0, 2990.0, 8.0),
            (4200.0, 4180.0, 9.0),
        ]
        .into_iter()
        .map(|(rate, x, mean)| step(Load::Rate(rate), x, mean, 0.0))
        .collect();
        let a = analyze_sweep(&rising, None, &Thresholds::default());
        assert_eq!(a.knee.map(|k| k.load), Some(Load::Rate(3000.0)));
        assert_eq!((a.ceiling, a.ceiling_at_least), (None, Some(4180.0)));
        // Two steps within 5% of the highest: a ceiling with a real range.
        let mut flat = rising.clone();
        flat.push(step(Load::Rate(5000.0), 4100.0, 300.0, 0.0));
        let a = analyze_sweep(&flat, None, &Thresholds::default());
        let range = a.ceiling_range.expect("a plateau");
        assert_eq!((range.low, range.high, range.steps), (4100.0, 4180.0, 2));
        assert_eq!(a.ceiling, Some(4140.0));
        assert!(a.verdict.iter().any(|v| v
            == "Throughput ceiling ≈ 4140 req/s: goodput from the knee on stays within 4100.0–4180.0 req/s over 2 steps."));
        assert!(a.capacity_reached, "5000 req/s gained nothing over 4200");
    }

    #[test]
    fn the_stable_range_holds_healthy_steps_only() {
        let mut steps = seed_table();
        steps.truncate(3);
        // A healthy-looking step after the knee does not extend the range.
        steps.push(step(Load::Connections(10000), 5700.0, 1750.0, 0.0));
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert_eq!(a.steps[3].class, Class::Healthy, "{}", a.steps[3].rule);
        assert_eq!(a.stable_range.map(|r| r.to), Some(Load::Connections(1000)));
        let shortfall = analyze_sweep(
            &[step(Load::Rate(1000.0), 500.0, 5.0, 0.0)],
            None,
            &Thresholds::default(),
        );
        assert_eq!(shortfall.stable_range, None);
        assert!(shortfall.verdict[0].starts_with("No stable step"));
    }

    #[test]
    fn a_pinned_server_cpu_stops_the_advice_and_is_said() {
        let mut steps: Vec<StepInput> = [(1000.0, 1000.0, 2.0), (2000.0, 1990.0, 80.0)]
            .into_iter()
            .map(|(rate, x, mean)| {
                let mut s = step(Load::Rate(rate), x, mean, 0.0);
                s.service_mean_ms = Some(mean);
                s.connections = Some(50);
                s
            })
            .collect();
        steps[1].server_cpu = Some(ServerCpu {
            used_pct: 99.0,
            available_pct: 100.0,
            busiest_thread_pct: 99.0,
            machine_busy_pct: Some(60.0),
        });
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        let s = &a.steps[1];
        assert!(s
            .server_saturation
            .as_deref()
            .unwrap()
            .contains("CPU was pinned"));
        // 1990 req/s × 80 ms = 159 in flight > 50 connections: still no advice.
        let note = s.little.note.as_deref().unwrap();
        assert!(!note.contains("add connections"), "{note}");
        assert!(a.warnings.iter().all(|w| !w.contains("add connections")));
        assert!(a.verdict.iter().any(|v| v.starts_with(
            "At 2000 req/s offered the server is saturated: its CPU was pinned (99% of the 100% it could use)"
        )));
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["steps"][1]["server_cpu"]["used_pct"], 99.0);
        assert!(json["steps"][0]["server_saturation"].is_null());
    }

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(Load::Connections(1).to_string(), "1 connection");
        assert_eq!(Load::Connections(2).to_string(), "2 connections");
        let mut one = step(Load::Rate(100.0), 100.0, 50.0, 0.0);
        one.requests = 100;
        one.timeouts = 1;
        one.connections = Some(1);
        let a = analyze_sweep(&[one], None, &Thresholds::default());
        assert!(
            a.steps[0].rule.starts_with("1 timeout (1.00%"),
            "{}",
            a.steps[0].rule
        );
        // 100 req/s × 50 ms = 5 in flight, through one connection.
        let note = a.steps[0].little.note.as_deref().unwrap();
        assert!(
            note.contains("needs 5 connections in flight but only 1 was available"),
            "{note}"
        );
    }

    /// A verdict that says the target only queues from some step on must not
    /// also advise sweeping higher: more load would only queue.
    fn assert_no_sweep_higher_once_queueing(a: &SweepAnalysis, from: &str) {
        let lead = format!("From {from} on, added load only queues");
        assert!(
            a.verdict.iter().any(|v| v.starts_with(&lead)),
            "{:#?}",
            a.verdict
        );
        assert!(
            !a.verdict.iter().any(|v| v.contains("sweep higher")),
            "{:#?}",
            a.verdict
        );
    }

    #[test]
    fn a_sweep_ending_in_queueing_has_reached_its_capacity() {
        // The last step gains 2.5% throughput for double the connections
        // while latency doubles: the highest goodput, but only queueing.
        let steps: Vec<_> = [(50, 1000.0, 10.0), (100, 1200.0, 18.0), (200, 1230.0, 40.0)]
            .into_iter()
            .map(|(n, x, r)| step(Load::Connections(n), x, r, 0.0))
            .collect();
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert_eq!(
            classes(&a),
            vec![Class::Healthy, Class::Saturated, Class::Queueing]
        );
        assert_eq!(a.capacity.unwrap().load, Load::Connections(200));
        assert!(a.capacity_reached);
        assert!(a.verdict.iter().any(|v| v.starts_with(
            "Capacity: 1230.0 req/s goodput at 200 connections (the highest goodput with errors"
        )));
        assert_no_sweep_higher_once_queueing(&a, "200 connections");
    }

    #[test]
    fn throughput_falling_past_the_knee_is_a_peak_not_a_reason_to_sweep_higher() {
        // Past the knee at 100, goodput falls by more than 5% a step while
        // latency climbs: no plateau of two steps, but nothing to find higher.
        let steps: Vec<_> = [
            (50, 1000.0, 10.0),
            (100, 1200.0, 18.0),
            (200, 1100.0, 45.0),
            (400, 1000.0, 100.0),
        ]
        .into_iter()
        .map(|(n, x, r)| step(Load::Connections(n), x, r, 0.0))
        .collect();
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert_eq!(
            classes(&a),
            vec![
                Class::Healthy,
                Class::Saturated,
                Class::Queueing,
                Class::Queueing
            ]
        );
        assert_eq!((a.ceiling, a.ceiling_at_least), (None, Some(1200.0)));
        assert!(a.verdict.iter().any(|v| v
            == "Throughput peaked at 1200.0 req/s past the knee, with no plateau of two steps: from 200 connections on, added load only queues."));
        assert_no_sweep_higher_once_queueing(&a, "200 connections");
    }

    #[test]
    fn all_healthy_has_no_knee() {
        let steps: Vec<_> = [10u64, 20, 40]
            .iter()
            .map(|&n| step(Load::Connections(n), 100.0 * n as f64, 10.0, 0.0))
            .collect();
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert_eq!(classes(&a), vec![Class::Healthy; 3]);
        assert_eq!(a.knee, None);
        assert_eq!(a.ceiling, None);
        assert!(a.verdict[1].starts_with("No knee in the tested range"));
        assert_eq!(a.verdict[0], "Stable range: 10–40 connections.");
        assert!(!a.capacity_reached);
        assert!(a.verdict.iter().any(|v| v
            .starts_with("Capacity not reached: at least 4000.0 req/s goodput at 40 connections")));
        // 100·n req/s × 10 ms = n in flight: Little's law holds.
        assert!(a.steps.iter().all(|s| s.little.consistent));
    }

    #[test]
    fn open_model_rate_sweep_with_an_slo() {
        let slo = parse_slo("p99<200ms,errors<0.5%").unwrap();
        let mut steps: Vec<StepInput> = [
            (1000.0, 1000.0, 5.0, 20.0, 0.0),
            (2000.0, 2000.0, 6.0, 40.0, 0.0),
            (3000.0, 2900.0, 20.0, 150.0, 0.0),
            (4000.0, 2950.0, 400.0, 900.0, 0.0),
            (5000.0, 3000.0, 900.0, 2000.0, 0.8),
        ]
        .into_iter()
        .map(|(rate, x, mean, p99, e)| {
            let mut s = step(Load::Rate(rate), x, mean, e);
            s.p99_ms = Some(p99);
            s.connections = Some(100);
            s
        })
        .collect();
        steps[4].goodput = 2976.0;
        let a = analyze_sweep(&steps, Some(&slo), &Thresholds::default());
        assert_eq!(
            classes(&a),
            vec![
                Class::Healthy,
                Class::Healthy,
                Class::Saturated,
                Class::Queueing,
                Class::Overloaded // 0.8% errors fail the SLO's errors<0.5% (not over 1%)
            ]
        );
        assert!(a.steps[4].rule.contains("fail the SLO's errors<0.5%"));
        assert_eq!(a.steps[3].slo_passed, Some(false));
        // Highest goodput meeting the SLO: 2900 at 3000 req/s offered.
        assert_eq!(a.capacity.unwrap().load, Load::Rate(3000.0));
        assert!(a.verdict.iter().any(|v| v.contains("meets the SLO")));
        assert!(a.usl.is_none());
        // 2950 req/s × 0.4 s = 1180 in flight > 100 connections, but latency
        // rose 1900% for +1.7% throughput: the server is saturated, and more
        // connections would only queue.
        let note = a.steps[3].little.note.as_ref().unwrap();
        assert!(!note.contains("add connections"), "{note}");
        assert!(note.contains("the server is saturated"), "{note}");
        // The stable range stops before the saturated 3000 req/s step.
        assert_eq!(a.stable_range.map(|r| r.to), Some(Load::Rate(2000.0)));
    }

    #[test]
    fn open_model_shortfall_at_the_first_step() {
        let a = analyze_sweep(
            &[step(Load::Rate(1000.0), 500.0, 5.0, 0.0)],
            None,
            &Thresholds::default(),
        );
        assert_eq!(classes(&a), vec![Class::Saturated]);
        assert!(a.verdict[1].starts_with("Knee at the first step"));
    }

    #[test]
    fn timeouts_make_a_step_overloaded() {
        let mut steps = seed_table();
        steps.truncate(2);
        steps[1].timeouts = steps[1].requests / 100; // 1%
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert_eq!(classes(&a), vec![Class::Healthy, Class::Overloaded]);
        assert!(a.steps[1].rule.contains("timeouts"), "{}", a.steps[1].rule);
        assert_eq!(a.capacity.unwrap().load, Load::Connections(1000));
        assert_eq!(a.verdict[0], "Stable range: 1000 connections.");
        assert!(a.warnings.iter().any(|w| w.contains("USL not fitted")));
    }

    #[test]
    fn first_step_overloaded_and_empty_input() {
        let a = analyze_sweep(
            &[step(Load::Connections(10), 100.0, 10.0, 50.0)],
            None,
            &Thresholds::default(),
        );
        assert_eq!(a.capacity, None);
        assert_eq!(a.stable_range, None);
        assert!(a.verdict[0].starts_with("No stable step"));
        assert!(a.verdict.iter().any(|v| v.starts_with("No step qualifies")));
        let empty = analyze_sweep(&[], None, &Thresholds::default());
        assert_eq!(empty.verdict, vec!["No steps to analyse.".to_string()]);
        assert!(empty.usl.is_none());
    }

    #[test]
    fn littles_law_flags_idle_connections() {
        // 1000 connections but 100 req/s × 1 s = 100 in flight.
        let a = analyze_sweep(
            &[step(Load::Connections(1000), 100.0, 1000.0, 0.0)],
            None,
            &Thresholds::default(),
        );
        let little = &a.steps[0].little;
        assert!(!little.consistent);
        assert!((little.ratio_pct.unwrap() - 10.0).abs() < 1e-9);
        assert!(a.warnings[0].contains("connections sat idle"));
    }

    #[test]
    fn from_result_takes_the_figures() {
        let mut lat = vec![10_000u64; 99];
        lat.push(900_000);
        let mut r = crate::slo::tests::result(5000.0, 1.0, &lat);
        r.errors.insert("timeout".into(), 3);
        r.errors.insert("connect_timeout".into(), 2);
        r.requests.errors = 5;
        let s = StepInput::closed(100, &r);
        assert_eq!(s.load, Load::Connections(100));
        assert_eq!(s.timeouts, 5);
        assert_eq!(s.requests, 105);
        assert_eq!(s.connections, Some(100));
        assert!((s.p99_ms.unwrap() - 10.007).abs() < 0.01);
        assert!((s.max_ms.unwrap() - 900.0).abs() < 1.0);
        assert_eq!(StepInput::open(7.5, &r).load, Load::Rate(7.5));
        let out = evaluate(&parse_slo("p99<20ms,p95<1s").unwrap(), &s);
        assert!(out[0].passed);
        assert_eq!(out[1].measured, None, "p95 is not kept in a step");
    }

    #[test]
    fn loads_print_whole_rates_without_decimals() {
        assert_eq!(Load::Connections(1).to_string(), "1 connection");
        assert_eq!(Load::Connections(2000).to_string(), "2000 connections");
        assert_eq!(Load::Rate(5000.0).to_string(), "5000 req/s offered");
        assert_eq!(Load::Rate(2.5).to_string(), "2.5 req/s offered");
    }

    #[test]
    fn a_step_from_a_result_in_milliseconds() {
        let mut r = crate::slo::tests::result(100.0, 0.0, &[1000, 2000, 3000, 4000]);
        r.latency_us.mean = 2500.0;
        r.service_time_us.mean = 1500.0;
        let s = StepInput::from_result(Load::Connections(10), &r);
        assert_eq!(s.mean_ms, 2.5);
        assert_eq!(s.service_mean_ms, Some(1.5));
        assert_eq!(s.p50_ms, Some(r.latency_us.p50 as f64 / 1000.0));
        // No service time measured (a result from before it was): none.
        r.service_time_us.mean = 0.0;
        let s = StepInput::from_result(Load::Connections(10), &r);
        assert_eq!(s.service_mean_ms, None);
    }

    #[test]
    fn a_step_measures_each_kept_percentile_and_a_mean_only_with_traffic() {
        let mut s = step(Load::Connections(10), 100.0, 4.0, 0.0);
        (s.p50_ms, s.p90_ms, s.p99_ms, s.p99_9_ms, s.max_ms) =
            (Some(1.0), Some(2.0), Some(3.0), Some(4.0), Some(5.0));
        let kept = [
            (50.0, 1.0),
            (90.0, 2.0),
            (99.0, 3.0),
            (99.9, 4.0),
            (100.0, 5.0),
        ];
        for (p, ms) in kept {
            assert_eq!(s.measure(Metric::Percentile(p)), Some(ms), "p{p}");
        }
        assert_eq!(s.measure(Metric::Mean), Some(4.0));
        // Requests but no rate (a step cut short), or a rate alone: a mean.
        (s.requests, s.rps) = (5, 0.0);
        assert_eq!(s.measure(Metric::Mean), Some(4.0));
        (s.requests, s.rps) = (0, 1.0);
        assert_eq!(s.measure(Metric::Mean), Some(4.0));
        (s.requests, s.rps) = (0, 0.0);
        assert_eq!(s.measure(Metric::Mean), None, "nothing ran");
    }

    fn growth(load: Load, dl: f64, dx: f64, dr: f64, past_knee: bool) -> (Class, String) {
        let s = step(load, 1000.0, 100.0, 0.0);
        judge_growth(
            &s,
            Some(dl),
            Some(dx),
            Some(dr),
            past_knee,
            100.0,
            &Thresholds::default(),
        )
    }

    #[test]
    fn class_names() {
        let names = [
            (Class::Healthy, "healthy"),
            (Class::Saturated, "saturated"),
            (Class::Queueing, "queueing"),
            (Class::Overloaded, "overloaded"),
        ];
        for (class, name) in names {
            assert_eq!(class.as_str(), name);
        }
    }

    #[test]
    fn growth_at_each_threshold_exactly() {
        // No load added but throughput fell: efficiency is taken as 1.
        assert_eq!(
            growth(Load::Connections(10), 0.0, -10.0, 0.0, false).0,
            Class::Healthy
        );
        // Open model: a latency rise of exactly 50% is not yet a queue.
        assert_eq!(
            growth(Load::Rate(1000.0), 100.0, 100.0, 50.0, false).0,
            Class::Healthy
        );
        let (class, rule) = growth(Load::Rate(1000.0), 100.0, 100.0, 50.1, false);
        assert_eq!(class, Class::Saturated);
        assert!(
            rule.contains("rate achieved but latency rose > 50%"),
            "{rule}"
        );
        // Low efficiency and no queue: the efficiency is the reason given.
        let (_, rule) = growth(Load::Connections(10), 100.0, 10.0, 0.0, false);
        assert!(rule.contains(": efficiency < 0.5 — the knee"), "{rule}");
        // Past the knee: flat means under +5%, rising means over +10%.
        assert_eq!(
            growth(Load::Connections(10), 100.0, 4.9, 10.1, true).0,
            Class::Queueing
        );
        assert_eq!(
            growth(Load::Connections(10), 100.0, 5.0, 10.1, true).0,
            Class::Saturated
        );
        assert_eq!(
            growth(Load::Connections(10), 100.0, 4.9, 10.0, true).0,
            Class::Saturated
        );
    }

    #[test]
    fn queueing_counts_the_waiting_requests_by_littles_law() {
        // X = 1000 req/s, R − R₀ = 300 − 100 ms: 200 waiting.
        let s = step(Load::Connections(400), 1000.0, 300.0, 0.0);
        let t = Thresholds::default();
        let (class, rule) = judge_growth(&s, Some(100.0), Some(1.0), Some(50.0), true, 100.0, &t);
        assert_eq!(class, Class::Queueing);
        assert!(rule.contains("≈ 200 requests waiting"), "{rule}");
    }

    #[test]
    fn a_first_open_step_at_exactly_the_achieved_share_is_the_reference() {
        let t = Thresholds::default();
        let at = step(Load::Rate(1000.0), 950.0, 10.0, 0.0);
        assert_eq!(
            judge_growth(&at, None, None, None, false, 10.0, &t).0,
            Class::Healthy
        );
        let under = step(Load::Rate(1000.0), 949.0, 10.0, 0.0);
        assert_eq!(
            judge_growth(&under, None, None, None, false, 10.0, &t).0,
            Class::Saturated
        );
    }

    #[test]
    fn errors_and_timeouts_at_their_limits() {
        let t = Thresholds::default();
        // Responses that all failed are errors, not "nothing completed".
        let failed = step(Load::Connections(10), 500.0, 5.0, 100.0);
        assert_eq!(
            error_verdict(&failed, None, &t).as_deref(),
            Some("errors 100.00% > 1%")
        );
        assert_eq!(
            error_verdict(&step(Load::Connections(10), 500.0, 5.0, 1.0), None, &t),
            None
        );
        // 1 timeout in 1000 requests is 0.1%: the limit, not over it.
        let mut timed_out = step(Load::Connections(10), 500.0, 5.0, 0.0);
        (timed_out.requests, timed_out.timeouts) = (1000, 1);
        assert_eq!(error_verdict(&timed_out, None, &t), None);
        timed_out.timeouts = 2;
        assert!(error_verdict(&timed_out, None, &t).is_some());
    }

    #[test]
    fn changes_need_a_positive_old_value_and_a_finite_new_one() {
        assert_eq!(pct_change(5.0, 0.0), None);
        assert_eq!(pct_change(f64::NAN, 10.0), None);
        assert_eq!(pct_change(15.0, 10.0), Some(50.0));
    }

    #[test]
    fn the_first_step_that_stops_scaling_is_the_knee_and_later_ones_are_past_it() {
        let steps = [
            (100, 1000.0, 10.0),
            (200, 1900.0, 10.5),
            (400, 2000.0, 20.0),
            (800, 2020.0, 40.0),
        ]
        .map(|(n, x, r)| step(Load::Connections(n), x, r, 0.0));
        let a = analyze_sweep(&steps, None, &Thresholds::default());
        assert!(
            a.steps[2].rule.ends_with("— the knee"),
            "{}",
            a.steps[2].rule
        );
        assert_eq!(a.steps[3].class, Class::Queueing, "{}", a.steps[3].rule);
    }

    #[test]
    fn a_goodput_above_the_offered_rate_warns_only_beyond_the_noise() {
        let at = |rate: f64, goodput: f64| {
            let mut s = step(Load::Rate(rate), goodput, 5.0, 0.0);
            s.goodput = goodput;
            let a = analyze_sweep(&[s], None, &Thresholds::default());
            above_offered(&a.steps[0])
        };
        assert_eq!(at(1000.0, 1015.0), None, "within 2%");
        assert!(at(1000.0, 1021.0).is_some());
        assert_eq!(at(0.0, 10.0), None, "no offered rate");
    }
}
