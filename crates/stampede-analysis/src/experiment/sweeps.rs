//! An experiment whose load is a sweep: each round of a variant is a whole
//! sweep (its analysis: capacity, knee, USL) with each step's result and
//! the server's cost during that step. Here: the common load at which the
//! variants' fixed-load figures are compared, each step's figures over the
//! rounds with its bottleneck, and the knee with the bottleneck named there.

use super::bottleneck::{bottlenecks, client_bottleneck};
use super::cost::{Bottleneck, ServerCost};
use crate::sweep::{Load, SweepAnalysis};
use serde::{Deserialize, Serialize};
use stampede_metrics::RunResult;

/// One round of a variant under `-- sweep`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRound {
    /// The sweep's answer (capacity, knee, USL, verdict), as `sweep` prints it.
    pub analysis: SweepAnalysis,
    /// Every step of the round, in order.
    pub steps: Vec<SweptStep>,
}

/// One step of a round: its load, full result and the server's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweptStep {
    /// The load the step applied.
    pub load: Load,
    /// The step's full result.
    pub result: RunResult,
    /// `None`: the server's counters could not be read.
    pub cost: Option<ServerCost>,
}

/// One step over a variant's rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// The load the step applied.
    pub load: Load,
    /// Rounds that reached this step.
    pub rounds: usize,
    /// Mean goodput (req/s) and p99 (ms) over those rounds.
    pub goodput: f64,
    /// Mean p99 over those rounds, ms.
    pub p99_ms: f64,
    /// The mean cost per request during the step, with its bottleneck.
    pub server: Option<ServerCost>,
    /// What limited the server or the client in this step, each with its figure.
    pub bottleneck: Vec<Bottleneck>,
}

/// Where a variant's throughput stopped growing, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KneeSummary {
    /// The step most rounds' knee was at (the lower one on a tie).
    pub load: Load,
    /// How many rounds had their knee there, of how many.
    pub rounds: usize,
    /// How many rounds found a knee at all.
    pub of_rounds: usize,
    /// Mean goodput at the knee over those rounds (req/s).
    pub goodput: f64,
    /// The bottleneck at that step (empty: no counter names one).
    pub bottleneck: Vec<Bottleneck>,
}

/// The highest load every round of every variant reached: the last step of
/// the shortest sweep (all share one ladder, so it is a step of each).
pub fn common_load<'a>(rounds: impl Iterator<Item = &'a SweepRound>) -> Option<Load> {
    rounds
        .filter_map(|r| r.steps.last().map(|s| s.load))
        .min_by(|a, b| a.value().total_cmp(&b.value()))
}

/// Each round's step at `load`: its result and cost.
pub fn at_load(sweeps: &[SweepRound], load: Load) -> Vec<(RunResult, Option<ServerCost>)> {
    sweeps
        .iter()
        .filter_map(|round| round.steps.iter().find(|s| s.load == load))
        .map(|s| (s.result.clone(), s.cost.clone()))
        .collect()
}

/// Each step's figures over the rounds, in ladder order, each with its
/// bottleneck (the server's counters, then the client's busiest thread).
pub fn step_summaries(sweeps: &mut [SweepRound]) -> Vec<StepSummary> {
    for step in sweeps.iter_mut().flat_map(|r| r.steps.iter_mut()) {
        if let Some(cost) = step.cost.as_mut() {
            cost.bottleneck = bottlenecks(cost);
        }
    }
    let mut loads: Vec<Load> = Vec::new();
    for step in sweeps.iter().flat_map(|r| &r.steps) {
        if !loads.contains(&step.load) {
            loads.push(step.load);
        }
    }
    loads
        .into_iter()
        .map(|load| {
            let steps: Vec<&SweptStep> = sweeps
                .iter()
                .filter_map(|r| r.steps.iter().find(|s| s.load == load))
                .collect();
            let n = steps.len() as f64;
            let results: Vec<RunResult> = steps.iter().map(|s| s.result.clone()).collect();
            let costs: Vec<ServerCost> = steps.iter().filter_map(|s| s.cost.clone()).collect();
            let server = ServerCost::mean(&costs);
            let mut found = server.as_ref().map(bottlenecks).unwrap_or_default();
            found.extend(client_bottleneck(&results));
            StepSummary {
                load,
                rounds: steps.len(),
                goodput: steps.iter().map(|s| s.result.goodput).sum::<f64>() / n,
                p99_ms: steps
                    .iter()
                    .map(|s| s.result.latency_us.p99 as f64 / 1000.0)
                    .sum::<f64>()
                    / n,
                server,
                bottleneck: found,
            }
        })
        .collect()
}

/// The knee most rounds agree on, with the bottleneck of its step.
pub fn knee(sweeps: &[SweepRound], steps: &[StepSummary]) -> Option<KneeSummary> {
    let knees: Vec<(Load, f64)> = sweeps
        .iter()
        .filter_map(|r| r.analysis.knee.map(|k| (k.load, k.goodput)))
        .collect();
    let count = |load: Load| knees.iter().filter(|(l, _)| *l == load).count();
    let (load, _) = knees.iter().copied().max_by(|a, b| {
        count(a.0)
            .cmp(&count(b.0))
            .then(b.0.value().total_cmp(&a.0.value()))
    })?;
    let at: Vec<f64> = knees
        .iter()
        .filter(|(l, _)| *l == load)
        .map(|(_, g)| *g)
        .collect();
    Some(KneeSummary {
        load,
        rounds: at.len(),
        of_rounds: sweeps.len(),
        goodput: at.iter().sum::<f64>() / at.len() as f64,
        bottleneck: steps
            .iter()
            .find(|s| s.load == load)
            .map(|s| s.bottleneck.clone())
            .unwrap_or_default(),
    })
}
