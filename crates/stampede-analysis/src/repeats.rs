//! The file of repeated rounds of one plan (`run --repeat N`,
//! `--until-stable`): `stampede.repeat/1`, its rounds and their summary. The
//! summary is over the rounds that ran to their end: an interrupted round
//! measured a shorter window and is kept in `runs` but not averaged. The
//! same rounds are what `compare` takes from the file, so both report the
//! same mean.
//!
//! Owns the document's shape and the summary; printing it is the binary's.

use crate::compare::{Figure, RunFigures};
use crate::stability::{mean_interval, Interval, StableTarget};
use serde::{Deserialize, Serialize};
use stampede_metrics::RunResult;
use std::collections::BTreeMap;

/// The schema tag of a file of repeated runs.
pub const REPEAT_SCHEMA: &str = "stampede.repeat/1";

/// A file of repeated rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatDocument {
    /// The schema tag, [`REPEAT_SCHEMA`].
    pub schema: String,
    /// The stampede version that wrote the file.
    pub version: String,
    /// Rounds run, an interrupted last one included.
    pub rounds: usize,
    /// Rounds that ran to their end: the summary's sample.
    #[serde(default)]
    pub rounds_completed: usize,
    /// Whether a round was interrupted (it ends the series).
    #[serde(default)]
    pub interrupted: bool,
    /// Confidence of the summary's intervals: 0.95.
    pub confidence: f64,
    /// `--until-stable`, when given.
    pub until_stable: Option<StableTarget>,
    /// `--until-stable` reached its target.
    pub stable: bool,
    /// Per figure name: the mean over the completed rounds and, from two
    /// rounds on, its confidence interval; null when no round completed (or
    /// none had the figure).
    pub summary: BTreeMap<String, Option<Interval>>,
    /// Every round's full result, in order.
    pub runs: Vec<RunResult>,
}

impl RepeatDocument {
    /// The document of `runs`, summarizing `figures` over the completed ones.
    pub fn new(
        runs: Vec<RunResult>,
        figures: &[Figure],
        confidence: f64,
        until_stable: Option<StableTarget>,
        stable: bool,
    ) -> RepeatDocument {
        let summary = figures
            .iter()
            .map(|f| {
                (
                    f.name().to_string(),
                    summarize_rounds(&runs, *f, confidence),
                )
            })
            .collect();
        RepeatDocument {
            schema: REPEAT_SCHEMA.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            rounds: runs.len(),
            rounds_completed: runs.iter().filter(|r| !r.interrupted).count(),
            interrupted: runs.iter().any(|r| r.interrupted),
            confidence,
            until_stable,
            stable,
            summary,
            runs,
        }
    }

    /// Reads a document; the counts are taken from the runs themselves, so a
    /// file written before they were recorded reads the same.
    pub fn from_json(text: &str) -> Result<RepeatDocument, serde_json::Error> {
        let mut document: RepeatDocument = serde_json::from_str(text)?;
        document.rounds = document.runs.len();
        document.rounds_completed = document.completed().count();
        document.interrupted = document.runs.iter().any(|r| r.interrupted);
        Ok(document)
    }

    /// The rounds that ran to their end.
    pub fn completed(&self) -> impl Iterator<Item = &RunResult> {
        self.runs.iter().filter(|r| !r.interrupted)
    }

    /// The summarized figures with their summaries, in the order of every figure.
    pub fn figures(&self) -> Vec<(Figure, Option<Interval>)> {
        Figure::ALL
            .into_iter()
            .filter_map(|f| self.summary.get(f.name()).map(|i| (f, *i)))
            .collect()
    }
}

/// The mean of `figure` over the completed rounds, with its interval from
/// two rounds on.
pub fn summarize_rounds(runs: &[RunResult], figure: Figure, confidence: f64) -> Option<Interval> {
    let values: Vec<f64> = runs
        .iter()
        .filter(|r| !r.interrupted)
        .filter_map(|r| RunFigures::of("", r).get(figure))
        .collect();
    mean_interval(&values, confidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::tests::result;

    #[test]
    fn summary_is_over_completed_rounds_and_reads_back() {
        let mut runs: Vec<RunResult> = [100.0, 200.0, 900.0]
            .iter()
            .map(|&rps| result(rps, 0.0, &[1000, 2000]))
            .collect();
        runs[2].interrupted = true;
        let document = RepeatDocument::new(runs, &[Figure::Rps, Figure::P50], 0.95, None, false);
        assert_eq!((document.rounds, document.rounds_completed), (3, 2));
        assert!(document.interrupted);
        let rps = document.summary["rps"].expect("two completed rounds");
        assert_eq!((rps.mean, rps.rounds), (150.0, 2));
        assert!(rps.half_width.is_some());
        let text = serde_json::to_string(&document).unwrap();
        let back = RepeatDocument::from_json(&text).unwrap();
        assert_eq!(back, document);
        assert_eq!(back.figures()[0].0, Figure::Rps);
    }
}
