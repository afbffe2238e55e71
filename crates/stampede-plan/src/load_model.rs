//! The load model: how much load, and how it changes over time.
//!
//! Closed model: a number of connections, each with one request in flight; the
//! server's speed sets the rate (wrk, ab, webbench, JMeter threads). Open model:
//! requests at fixed intended instants whatever the server does, so a stalling
//! server shows up as latency instead of silently lowering the load
//! (coordinated omission, as wrk2 fixed it).

use crate::{parse_duration, PlanError, Setting};
use std::sync::Arc;
use std::time::Duration;

/// How requests are spaced in the open model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Arrival {
    /// Evenly spaced: one request every 1/rate seconds.
    #[default]
    Uniform,
    /// Exponentially distributed gaps with mean 1/rate (a Poisson process).
    Poisson,
    /// At these offsets from the start, one request each, in order (a
    /// replayed log, `stampede replay`): the rate is only their average,
    /// and the run sends exactly as many requests as there are offsets.
    Listed(Arc<[Duration]>),
}

impl Arrival {
    /// The name recorded in results (`uniform`, `poisson` or `listed`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
            Arrival::Listed(_) => "listed",
        }
    }
}

/// One k6-style stage: move linearly from the previous target to `target`
/// over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// The value reached at the stage's end (connections or requests per second).
    pub target: f64,
}

/// Parses `30s:100,1m:1000,30s:0`.
pub fn parse_stages(text: &str) -> Result<Vec<Stage>, PlanError> {
    let invalid = |why: &str| PlanError::Value {
        setting: Setting::Stages,
        text: text.to_string(),
        why: why.to_string(),
    };
    let mut stages = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (duration, target) = part
            .split_once(':')
            .ok_or_else(|| invalid("each stage is DURATION:TARGET, e.g. 30s:100"))?;
        let duration = parse_duration(duration)?;
        let target: f64 = target
            .trim()
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| invalid("a target is a number >= 0"))?;
        stages.push(Stage { duration, target });
    }
    if stages.is_empty() {
        return Err(invalid("no stage given"));
    }
    Ok(stages)
}

/// A target that changes over time: piecewise linear through stages,
/// starting from `start` at time zero.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// The value at time zero.
    pub start: f64,
    /// The stages, in order.
    pub stages: Vec<Stage>,
}

impl Schedule {
    /// A target held constant for `duration`.
    pub fn constant(target: f64, duration: Duration) -> Schedule {
        Schedule {
            start: target,
            stages: vec![Stage { duration, target }],
        }
    }

    /// Rising linearly from 0 to `target` over `ramp`, then held for `hold`.
    pub fn ramp(target: f64, ramp: Duration, hold: Duration) -> Schedule {
        Schedule {
            start: 0.0,
            stages: vec![
                Stage {
                    duration: ramp,
                    target,
                },
                Stage {
                    duration: hold,
                    target,
                },
            ],
        }
    }

    /// Total length of all stages.
    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// The highest target anywhere in the schedule.
    pub fn peak(&self) -> f64 {
        self.stages
            .iter()
            .map(|s| s.target)
            .fold(self.start, f64::max)
    }

    /// The target at `elapsed` from the start (the last target after the end).
    pub fn target_at(&self, elapsed: Duration) -> f64 {
        let mut from = self.start;
        let mut stage_start = Duration::ZERO;
        for stage in &self.stages {
            let stage_end = stage_start + stage.duration;
            if elapsed < stage_end {
                let progress = if stage.duration.is_zero() {
                    1.0
                } else {
                    (elapsed - stage_start).as_secs_f64() / stage.duration.as_secs_f64()
                };
                return from + (stage.target - from) * progress;
            }
            from = stage.target;
            stage_start = stage_end;
        }
        from
    }

    /// The area under the target from the start to `elapsed`: for a rate,
    /// how many requests are intended by then.
    pub fn cumulative(&self, elapsed: Duration) -> f64 {
        let t = elapsed.as_secs_f64();
        let mut from = self.start;
        let mut stage_start = 0.0;
        let mut area = 0.0;
        for stage in &self.stages {
            let length = stage.duration.as_secs_f64();
            if t < stage_start + length {
                let s = t - stage_start;
                return area + from * s + (stage.target - from) * s * s / (2.0 * length);
            }
            area += (from + stage.target) / 2.0 * length;
            from = stage.target;
            stage_start += length;
        }
        area + from * (t - stage_start)
    }

    /// When the area under the target reaches `count` (the inverse of
    /// [`Schedule::cumulative`]): the instant of intended request number
    /// `count`, counted from 0, of a rate. `None` when it is never reached
    /// (the target ends at zero first). The open model's instants are these
    /// times rather than a sum of gaps, so that no rounding accumulates and
    /// the instants in [0, d) number exactly the area up to d, rounded up
    /// (`-r 100 -d 1s`: 100), whatever the stages.
    pub fn time_of(&self, count: f64) -> Option<Duration> {
        let mut left = count.max(0.0);
        let mut from = self.start;
        let mut stage_start = 0.0;
        for stage in &self.stages {
            let length = stage.duration.as_secs_f64();
            let area = (from + stage.target) / 2.0 * length;
            if left < area {
                let s = time_into_stage(from, stage.target, length, left);
                return Some(Duration::from_secs_f64(stage_start + s.min(length)));
            }
            left -= area;
            from = stage.target;
            stage_start += length;
        }
        if left == 0.0 {
            return Some(Duration::from_secs_f64(stage_start));
        }
        (from > 0.0).then(|| Duration::from_secs_f64(stage_start + left / from))
    }
}

/// How far into a stage going linearly from rate `a` to `b` over `length`
/// seconds the area reaches `area` (less than the stage's): the root of
/// a·s + (b − a)·s²/(2·length) = area, in the form that stays exact for a
/// constant rate (area / a) and stable when a or b − a is small.
fn time_into_stage(a: f64, b: f64, length: f64, area: f64) -> f64 {
    if area <= 0.0 {
        return 0.0;
    }
    if a == b {
        return area / a;
    }
    let slope = (b - a) / length;
    2.0 * area / (a + (a * a + 2.0 * slope * area).max(0.0).sqrt())
}

/// The open model's pacing window when `--pace-window` is not given (see
/// [`LoadModel::Rate`]): chosen by measurement at 20,000 requests/s
/// (bench/results/2026-12-04-pace-window.md).
pub const DEFAULT_PACE_WINDOW: Duration = Duration::from_micros(200);

/// What load to apply.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadModel {
    /// `connections` over time, each with one request in flight.
    Closed {
        /// How many connections, over time.
        connections: Schedule,
    },
    /// Requests per second over time, on at most `max_connections` connections.
    Rate {
        /// Requests per second over time.
        per_s: Schedule,
        /// The most connections open at once.
        max_connections: usize,
        /// How the requests are spaced.
        arrival: Arrival,
        /// `--pace-window`: the pacer wakes this long after the next
        /// intended instant and sends every request due by then, each at
        /// most this late and never early; latency still counts from each
        /// one's intended instant. Zero: one wake per intended instant.
        pace_window: Duration,
        /// `--batch-reads`: the reactors read answers once per
        /// `pace_window` too, so a wake-up takes many; an HTTP/1.1
        /// answer's time is the kernel's receive time, not the read's.
        batch_reads: bool,
    },
}

impl LoadModel {
    /// The most connections the model ever uses.
    pub fn max_connections(&self) -> usize {
        match self {
            LoadModel::Closed { connections } => connections.peak().ceil() as usize,
            LoadModel::Rate {
                max_connections, ..
            } => *max_connections,
        }
    }

    /// The schedule of the model: connections (closed) or requests per second (open).
    pub fn schedule(&self) -> &Schedule {
        match self {
            LoadModel::Closed { connections } => connections,
            LoadModel::Rate { per_s, .. } => per_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k6_stages() {
        let stages = parse_stages("30s:100, 1m:1000,30s:0").unwrap();
        assert_eq!(stages.len(), 3);
        assert_eq!(stages[1].duration, Duration::from_secs(60));
        assert_eq!(stages[1].target, 1000.0);
        for bad in ["", "30s", "x:1", "1s:-1", "1s:abc"] {
            assert!(parse_stages(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn interpolates_linearly_between_targets() {
        let schedule = Schedule {
            start: 0.0,
            stages: parse_stages("10s:100,10s:100,10s:0").unwrap(),
        };
        let at = |s: f64| schedule.target_at(Duration::from_secs_f64(s));
        assert_eq!(at(0.0), 0.0);
        assert_eq!(at(5.0), 50.0);
        assert_eq!(at(15.0), 100.0);
        assert_eq!(at(25.0), 50.0);
        assert_eq!(at(99.0), 0.0);
        assert_eq!(schedule.duration(), Duration::from_secs(30));
        assert_eq!(schedule.peak(), 100.0);
    }

    #[test]
    fn intended_instants_number_exactly_the_area() {
        let count_before = |schedule: &Schedule, end: Duration| {
            (0u64..)
                .take_while(|k| schedule.time_of(*k as f64).is_some_and(|t| t < end))
                .count()
        };
        let second = Duration::from_secs(1);
        for rate in [1.0, 3.0, 7.0, 100.0, 101.0, 1000.0] {
            let schedule = Schedule::constant(rate, second);
            assert_eq!(count_before(&schedule, second), rate as usize, "{rate}/s");
        }
        // 40/s for 1.5 s: 60; 10/s for 1.05 s: 11 (0, 0.1, ... 1.0).
        let schedule = Schedule::constant(40.0, Duration::from_millis(1500));
        assert_eq!(count_before(&schedule, Duration::from_millis(1500)), 60);
        let schedule = Schedule::constant(10.0, second);
        assert_eq!(count_before(&schedule, Duration::from_millis(1050)), 11);
        // A ramp 0 -> 100 over 1 s (area 50), then 100 for 1 s: 150.
        let staged = Schedule {
            start: 0.0,
            stages: parse_stages("1s:100,1s:100").unwrap(),
        };
        assert_eq!(count_before(&staged, 2 * second), 150);
        assert_eq!(staged.cumulative(2 * second), 150.0);
        assert_eq!(staged.time_of(50.0), Some(second));
        // Up and down again: 0 -> 60 -> 0 over 2 s, area 60.
        let peak = Schedule {
            start: 0.0,
            stages: parse_stages("1s:60,1s:0").unwrap(),
        };
        assert_eq!(count_before(&peak, 2 * second), 60);
        assert_eq!(peak.time_of(60.5), None, "never reached after the end");
        for k in 0..60 {
            let t = peak.time_of(k as f64).unwrap();
            assert!((peak.cumulative(t) - k as f64).abs() < 1e-6, "{k}");
        }
    }

    #[test]
    fn ramp_then_hold() {
        let schedule = Schedule::ramp(40.0, Duration::from_secs(4), Duration::from_secs(6));
        assert_eq!(schedule.target_at(Duration::from_secs(1)), 10.0);
        assert_eq!(schedule.target_at(Duration::from_secs(7)), 40.0);
        assert_eq!(schedule.duration(), Duration::from_secs(10));
    }
}
