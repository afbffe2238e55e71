//! An experiment on a server's configuration (`stampede experiment`, issue
//! 36): the document `stampede.experiment/1` (variants, the order their runs
//! ran in, each run's result and server cost), each variant's figures with
//! their confidence intervals over its rounds, and the pairwise verdicts.
//! `cost` turns two readings of the server's counters into a cost per
//! request, `bottleneck` names what limited the server, `metric` names the compared figures, `verdicts` compares each
//! variant with the first. Pure: the runs and readings are the binary's.

mod bottleneck;
mod cost;
mod metric;
mod verdicts;

pub use cost::{Bottleneck, Evidence, ServerCost, ServerReading, ThreadShare};
pub use metric::Metric;
pub use verdicts::{pairwise_verdicts, ExperimentVerdict};

use crate::stability::mean_interval;
use serde::{Deserialize, Serialize};
use stampede_metrics::RunResult;
use std::collections::BTreeMap;

/// The schema tag of an experiment's JSON.
pub const EXPERIMENT_SCHEMA: &str = "stampede.experiment/1";

/// A whole experiment, as its JSON file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentDocument {
    pub schema: String,
    /// `--server`, with its `{NAME}` placeholders.
    pub server_template: String,
    /// The load's words after `--`, as given.
    pub load: Vec<String>,
    pub repeat: usize,
    /// `interleaved`, `grouped` or `random`.
    pub order_kind: String,
    /// `--seed` of a random order.
    pub seed: Option<u64>,
    /// One entry per run, in the order they ran: its variant's index.
    pub order: Vec<usize>,
    pub variants: Vec<VariantResult>,
    pub verdicts: Vec<ExperimentVerdict>,
    /// Confidence of the intervals (0.95).
    pub confidence: f64,
    /// Stopped by Ctrl-C: the runs after the last finished one are missing.
    pub interrupted: bool,
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
    /// The full results of the runs that finished, in the order they ran.
    pub runs: Vec<RunResult>,
    /// The server's cost of each run in `runs` (`None`: not readable).
    pub costs: Vec<Option<ServerCost>>,
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
    pub reason: String,
    /// The last lines the server wrote to stderr.
    pub stderr: Vec<String>,
}

/// A figure's mean over a variant's runs and its confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub metric: Metric,
    pub mean: f64,
    /// `None` for one run.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub rounds: usize,
}

impl VariantResult {
    /// A figure's values over the runs that have it.
    pub fn values_of(&self, metric: Metric) -> Vec<f64> {
        self.runs
            .iter()
            .enumerate()
            .filter(|(_, run)| !run.interrupted)
            .filter_map(|(i, run)| metric.of(run, self.costs.get(i).and_then(Option::as_ref)))
            .collect()
    }

    /// The estimate of one figure, if any run has it.
    pub fn estimate(&self, metric: Metric) -> Option<&Estimate> {
        self.figures.iter().find(|e| e.metric == metric)
    }

    fn summarize(&mut self, confidence: f64) {
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
        for variant in &mut self.variants {
            variant.summarize(self.confidence);
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
