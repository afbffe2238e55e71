//! An experiment on a server's configuration (`stampede experiment`, issue
//! 36): the document `stampede.experiment/1` (variants, the order their runs
//! ran in, each run's result and server cost), each variant's figures with
//! their confidence intervals over its rounds, and the pairwise verdicts.
//! `cost` turns two readings of the server's counters into a cost per
//! request, `bottleneck` names what limited the server, `metric` names the
//! compared figures, `verdicts` compares each variant with the first,
//! `sweeps` summarizes a variant's sweeps (under `-- sweep`: each step over
//! the rounds, the knee and its bottleneck). Pure: the runs and readings are
//! the binary's.

mod bottleneck;
mod cost;
mod metric;
mod sweeps;
mod verdicts;

pub use cost::{Bottleneck, Evidence, ServerCost, ServerReading, ThreadShare};
pub use metric::Metric;
pub use sweeps::{KneeSummary, StepSummary, SweepRound, SweptStep};
pub use verdicts::{pairwise_verdicts, ExperimentVerdict};

use crate::stability::mean_interval;
use crate::sweep::Load;
use serde::{Deserialize, Serialize};
use stampede_metrics::RunResult;
use std::collections::BTreeMap;

/// The schema tag of an experiment's JSON.
pub const EXPERIMENT_SCHEMA: &str = "stampede.experiment/1";

/// A whole experiment, as its JSON file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentDocument {
    /// The schema tag, [`EXPERIMENT_SCHEMA`].
    pub schema: String,
    /// `--server`, with its `{NAME}` placeholders.
    pub server_template: String,
    /// The load's words after `--`, as given.
    pub load: Vec<String>,
    /// Rounds per variant (`--repeat`).
    pub repeat: usize,
    /// `interleaved`, `grouped` or `random`.
    pub order_kind: String,
    /// `--seed` of a random order.
    pub seed: Option<u64>,
    /// One entry per run, in the order they ran: its variant's index.
    pub order: Vec<usize>,
    /// Every variant, in `--vary` order.
    pub variants: Vec<VariantResult>,
    /// Every variant after the first against the first, figure by figure.
    pub verdicts: Vec<ExperimentVerdict>,
    /// Confidence of the intervals (0.95).
    pub confidence: f64,
    /// Stopped by Ctrl-C: the runs after the last finished one are missing.
    pub interrupted: bool,
    /// Under `-- sweep`: the load at which `runs`, `costs`, `server` and the
    /// fixed-load figures are taken (the highest every round reached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_load: Option<Load>,
}

/// One configuration of the server and what its runs measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantResult {
    /// `NAME=VALUE` pairs joined by spaces, in `--vary` order.
    pub name: String,
    /// NAME → value.
    pub values: BTreeMap<String, String>,
    /// The server's command line for this variant.
    pub command: String,
    /// The full results of the runs that finished, in the order they ran
    /// (under `-- sweep`: each round's step at the common load).
    pub runs: Vec<RunResult>,
    /// The server's cost of each run in `runs` (`None`: not readable).
    pub costs: Vec<Option<ServerCost>>,
    /// Under `-- sweep`: each finished round's sweep, in the order they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweeps: Vec<SweepRound>,
    /// Under `-- sweep`: each step over the rounds, with its bottleneck.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSummary>,
    /// Under `-- sweep`: the knee most rounds found, and its bottleneck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<KneeSummary>,
    /// Runs that could not be made: the server did not start, never
    /// listened or died during the load.
    pub failures: Vec<Failure>,
    /// The mean cost per request over the runs.
    pub server: Option<ServerCost>,
    /// Each figure's mean and interval over the runs.
    pub figures: Vec<Estimate>,
}

/// A run that failed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Its round (0-based).
    pub round: usize,
    /// Why it failed, in words.
    pub reason: String,
    /// The last lines the server wrote to stderr.
    pub stderr: Vec<String>,
}

/// A figure's mean over a variant's runs and its confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The figure.
    pub metric: Metric,
    /// Its mean over the runs, in the figure's unit.
    pub mean: f64,
    /// `None` for one run.
    pub ci_low: Option<f64>,
    /// Upper bound of the interval; `None` for one run.
    pub ci_high: Option<f64>,
    /// How many runs had the figure.
    pub rounds: usize,
}

impl VariantResult {
    /// A figure's values over the runs that have it.
    pub fn values_of(&self, metric: Metric) -> Vec<f64> {
        self.runs
            .iter()
            .enumerate()
            .filter(|(_, run)| !run.interrupted)
            .filter_map(|(i, run)| {
                let cost = self.costs.get(i).and_then(Option::as_ref);
                let sweep = self.sweeps.get(i).map(|s| &s.analysis);
                metric.of(run, cost, sweep)
            })
            .collect()
    }

    /// The estimate of one figure, if any run has it.
    pub fn estimate(&self, metric: Metric) -> Option<&Estimate> {
        self.figures.iter().find(|e| e.metric == metric)
    }

    fn summarize(&mut self, confidence: f64, common_load: Option<Load>) {
        if let Some(load) = common_load {
            (self.runs, self.costs) = sweeps::at_load(&self.sweeps, load).into_iter().unzip();
            self.steps = sweeps::step_summaries(&mut self.sweeps);
            self.knee = sweeps::knee(&self.sweeps, &self.steps);
        }
        for cost in self.costs.iter_mut().flatten() {
            cost.bottleneck = bottleneck::bottlenecks(cost);
        }
        let costs: Vec<ServerCost> = self.costs.iter().flatten().cloned().collect();
        self.server = ServerCost::mean(&costs).map(|mut mean| {
            mean.bottleneck = bottleneck::bottlenecks(&mean);
            mean
        });
        let measured: Vec<RunResult> = self
            .runs
            .iter()
            .filter(|r| !r.interrupted)
            .cloned()
            .collect();
        if let (Some(server), Some(client)) = (
            self.server.as_mut(),
            bottleneck::client_bottleneck(&measured),
        ) {
            server.bottleneck.push(client);
        }
        self.figures = Metric::ALL
            .iter()
            .filter_map(|&metric| {
                let interval = mean_interval(&self.values_of(metric), confidence)?;
                let half = interval.half_width;
                Some(Estimate {
                    metric,
                    mean: interval.mean,
                    ci_low: half.map(|h| interval.mean - h),
                    ci_high: half.map(|h| interval.mean + h),
                    rounds: interval.rounds,
                })
            })
            .collect();
    }
}

impl ExperimentDocument {
    /// Fills each variant's mean cost and figures and the verdicts from the
    /// runs (called after every run, so a file written at any point is whole).
    pub fn summarize(&mut self) {
        self.common_load = sweeps::common_load(self.variants.iter().flat_map(|v| &v.sweeps));
        for variant in &mut self.variants {
            variant.summarize(self.confidence, self.common_load);
        }
        self.verdicts = pairwise_verdicts(&self.variants, self.confidence);
    }

    /// Reads a document back, refusing another schema.
    pub fn from_json(text: &str) -> Result<ExperimentDocument, String> {
        let doc: ExperimentDocument = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if doc.schema != EXPERIMENT_SCHEMA {
            return Err(format!(
                "schema {:?}, expected {EXPERIMENT_SCHEMA}",
                doc.schema
            ));
        }
        Ok(doc)
    }
}

#[cfg(test)]
mod tests;
