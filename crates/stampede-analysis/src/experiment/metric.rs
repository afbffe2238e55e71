//! The figures an experiment compares across variants: the load's (goodput,
//! p50, p99, error rate) from each run's result, the server's cost per
//! request from its counters, and under a sweep each round's capacity, knee
//! and USL peak.

use super::cost::ServerCost;
use crate::sweep::SweepAnalysis;
use serde::{Deserialize, Serialize};
use stampede_metrics::RunResult;

/// A compared figure of one run; its JSON name (`verdicts[].metric`) is
/// the snake_case of the variant: `goodput`, `p50`, `p99`, `error_rate`,
/// `cpu_us_per_request`, `write_bytes_per_request`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Successful responses per second.
    Goodput,
    /// Median latency, ms.
    P50,
    /// 99th percentile latency, ms.
    P99,
    /// Failed share of finished requests, percent.
    ErrorRate,
    /// Server CPU time per request, µs.
    CpuUsPerRequest,
    /// Server user CPU time per request, µs.
    CpuUserUsPerRequest,
    /// Server system CPU time per request, µs.
    CpuSystemUsPerRequest,
    /// Bytes the server wrote per request.
    WriteBytesPerRequest,
    /// The server's write calls per request.
    WriteSyscallsPerRequest,
    /// The server's context switches per request.
    CtxSwitchesPerRequest,
    /// The server's voluntary context switches per request.
    CtxVoluntaryPerRequest,
    /// The server's involuntary context switches per request.
    CtxInvoluntaryPerRequest,
    /// Under a sweep: the highest goodput that met the SLO (or was not overloaded).
    Capacity,
    /// Under a sweep: the goodput of the first saturated step.
    Knee,
    /// Under a sweep: the USL fit's predicted peak throughput.
    UslPeak,
}

impl Metric {
    /// Every figure, in the order of the table and the verdicts.
    pub const ALL: [Metric; 15] = [
        Metric::Capacity,
        Metric::Knee,
        Metric::UslPeak,
        Metric::Goodput,
        Metric::P50,
        Metric::P99,
        Metric::ErrorRate,
        Metric::CpuUsPerRequest,
        Metric::CpuUserUsPerRequest,
        Metric::CpuSystemUsPerRequest,
        Metric::WriteBytesPerRequest,
        Metric::WriteSyscallsPerRequest,
        Metric::CtxSwitchesPerRequest,
        Metric::CtxVoluntaryPerRequest,
        Metric::CtxInvoluntaryPerRequest,
    ];

    /// Its name in a sentence.
    pub fn words(self) -> &'static str {
        match self {
            Metric::Goodput => "goodput",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::ErrorRate => "errors",
            Metric::CpuUsPerRequest => "CPU per request",
            Metric::CpuUserUsPerRequest => "user CPU per request",
            Metric::CpuSystemUsPerRequest => "system CPU per request",
            Metric::WriteBytesPerRequest => "written per request",
            Metric::WriteSyscallsPerRequest => "write calls per request",
            Metric::CtxSwitchesPerRequest => "context switches per request",
            Metric::CtxVoluntaryPerRequest => "voluntary switches per request",
            Metric::CtxInvoluntaryPerRequest => "involuntary switches per request",
            Metric::Capacity => "capacity",
            Metric::Knee => "knee",
            Metric::UslPeak => "USL peak",
        }
    }

    /// Its unit.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Goodput | Metric::Capacity | Metric::Knee | Metric::UslPeak => "req/s",
            Metric::P50 | Metric::P99 => "ms",
            Metric::ErrorRate => "%",
            Metric::CpuUsPerRequest
            | Metric::CpuUserUsPerRequest
            | Metric::CpuSystemUsPerRequest => "µs",
            Metric::WriteBytesPerRequest => "B",
            _ => "",
        }
    }

    /// Its value in one run; `None` when the run has no such figure (no
    /// latency without a completed request, no cost without a reading, no
    /// capacity without a sweep or a knee where goodput kept growing).
    pub fn of(
        self,
        run: &RunResult,
        cost: Option<&ServerCost>,
        sweep: Option<&SweepAnalysis>,
    ) -> Option<f64> {
        let latency = |us: u64| (run.requests.completed > 0).then_some(us as f64 / 1000.0);
        match self {
            Metric::Goodput => Some(run.goodput),
            Metric::P50 => latency(run.latency_us.p50),
            Metric::P99 => latency(run.latency_us.p99),
            Metric::ErrorRate => Some(run.error_rate_pct),
            Metric::CpuUsPerRequest => cost.map(|c| c.cpu_us_per_request),
            Metric::CpuUserUsPerRequest => cost.map(|c| c.cpu_user_us_per_request),
            Metric::CpuSystemUsPerRequest => cost.map(|c| c.cpu_system_us_per_request),
            Metric::WriteBytesPerRequest => cost.map(|c| c.write_bytes_per_request),
            Metric::WriteSyscallsPerRequest => cost.map(|c| c.write_syscalls_per_request),
            Metric::CtxSwitchesPerRequest => cost.map(|c| c.ctx_switches_per_request),
            Metric::CtxVoluntaryPerRequest => cost.map(|c| c.ctx_voluntary_per_request),
            Metric::CtxInvoluntaryPerRequest => cost.map(|c| c.ctx_involuntary_per_request),
            Metric::Capacity => sweep.and_then(|s| s.capacity).map(|p| p.goodput),
            Metric::Knee => sweep.and_then(|s| s.knee).map(|p| p.goodput),
            Metric::UslPeak => sweep.and_then(|s| s.usl.as_ref()?.x_max),
        }
        .filter(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::tests::result;

    #[test]
    fn each_figure_is_named_with_its_unit() {
        assert_eq!(Metric::Goodput.words(), "goodput");
        assert_eq!(Metric::ErrorRate.words(), "errors");
        assert_eq!(Metric::UslPeak.words(), "USL peak");
        // One figure of each arm of `unit`, and one without a unit.
        assert_eq!(Metric::Knee.unit(), "req/s");
        assert_eq!(Metric::P99.unit(), "ms");
        assert_eq!(Metric::ErrorRate.unit(), "%");
        assert_eq!(Metric::CpuSystemUsPerRequest.unit(), "µs");
        assert_eq!(Metric::WriteBytesPerRequest.unit(), "B");
        assert_eq!(Metric::CtxSwitchesPerRequest.unit(), "");
    }

    #[test]
    fn latency_needs_a_completed_request_and_is_in_ms() {
        // One completed request: its p50 of 1,500 µs is 1.5 ms.
        let mut one = result(100.0, 0.0, &[1500]);
        one.latency_us.p50 = 1500;
        assert_eq!(Metric::P50.of(&one, None, None), Some(1.5));
        // None completed: no latency, whatever the summary holds.
        let mut none = result(100.0, 0.0, &[]);
        none.latency_us.p50 = 1500;
        assert_eq!(none.requests.completed, 0);
        assert_eq!(Metric::P50.of(&none, None, None), None);
    }
}
