//! A sweep's file, `stampede.sweep/1`: the analysis the sweep printed
//! (classes, rules, capacity, verdict, warnings, made with its `--slo` and
//! thresholds) with each step's full result beside its classification.
//! Written by `stampede sweep --json`, read back by `stampede report`, which
//! prints from it exactly what the sweep printed.
//!
//! On the wire each entry of `steps` is a [`StepAnalysis`] with a `result`
//! key; the schema tag and the writer's version sit at the top.

use crate::sweep::{analyze_sweep, Load, StepInput, SweepAnalysis, Thresholds, SWEEP_SCHEMA};
use serde_json::Value;
use stampede_metrics::RunResult;

/// A sweep: its analysis and every step's load and result, in step order.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepDocument {
    /// The sweep's answer.
    pub analysis: SweepAnalysis,
    /// Every step's load and full result, in step order.
    pub steps: Vec<(Load, RunResult)>,
}

/// Why a sweep file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SweepDocumentError {
    /// The file is not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The sweep has no step.
    #[error("the sweep has no steps")]
    NoSteps,
    /// The step (1-based) has neither connections nor rate.
    #[error("step {0} has neither connections nor rate")]
    NoLoad(usize),
    /// The step (1-based) has no result.
    #[error("step {0} has no result")]
    NoResult(usize),
    /// The step's result is not a stampede result.
    #[error("step {step}: not a stampede result: {error}")]
    Result {
        /// The step (1-based).
        step: usize,
        /// Why it could not be read.
        error: serde_json::Error,
    },
}

impl SweepDocument {
    /// The document as JSON, the schema tag and version included.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        let mut document = serde_json::to_value(&self.analysis)?;
        if let Some(steps) = document.get_mut("steps").and_then(Value::as_array_mut) {
            for (step, (_, result)) in steps.iter_mut().zip(&self.steps) {
                step["result"] = serde_json::to_value(result)?;
            }
        }
        document["schema"] = SWEEP_SCHEMA.into();
        document["version"] = env!("CARGO_PKG_VERSION").into();
        Ok(document)
    }

    /// Reads a document: each step's load and result, and the saved
    /// analysis. A file whose analysis this version cannot read (or that
    /// does not match its steps) is classified again with the default
    /// thresholds and no SLO.
    pub fn from_value(document: Value) -> Result<SweepDocument, SweepDocumentError> {
        let steps = document
            .get("steps")
            .and_then(Value::as_array)
            .ok_or(SweepDocumentError::NoSteps)?
            .iter()
            .enumerate()
            .map(|(i, step)| read_step(i + 1, step))
            .collect::<Result<Vec<_>, _>>()?;
        let analysis = match serde_json::from_value::<SweepAnalysis>(document) {
            Ok(saved) if saved.steps.len() == steps.len() => saved,
            _ => {
                let inputs: Vec<StepInput> = steps
                    .iter()
                    .map(|(load, result)| StepInput::from_result(*load, result))
                    .collect();
                analyze_sweep(&inputs, None, &Thresholds::default())
            }
        };
        Ok(SweepDocument { analysis, steps })
    }

    /// Reads a sweep file's text (see [`SweepDocument::from_value`]).
    pub fn from_json(text: &str) -> Result<SweepDocument, SweepDocumentError> {
        SweepDocument::from_value(serde_json::from_str(text)?)
    }
}

/// Step `number` (from 1): its load (`connections` or `rate`) and result.
fn read_step(number: usize, step: &Value) -> Result<(Load, RunResult), SweepDocumentError> {
    let load = if let Some(n) = step.get("connections").and_then(Value::as_u64) {
        Load::Connections(n)
    } else if let Some(r) = step.get("rate").and_then(Value::as_f64) {
        Load::Rate(r)
    } else {
        return Err(SweepDocumentError::NoLoad(number));
    };
    let result = step
        .get("result")
        .ok_or(SweepDocumentError::NoResult(number))?;
    let result =
        serde_json::from_value(result.clone()).map_err(|error| SweepDocumentError::Result {
            step: number,
            error,
        })?;
    Ok((load, result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::tests::result;

    fn sweep() -> SweepDocument {
        let steps = vec![
            (
                Load::Connections(10),
                result(1000.0, 0.0, &[900, 1000, 1100]),
            ),
            (
                Load::Connections(20),
                result(1900.0, 0.0, &[950, 1050, 1200]),
            ),
        ];
        let inputs: Vec<StepInput> = steps
            .iter()
            .map(|(load, r)| StepInput::from_result(*load, r))
            .collect();
        // Thresholds other than the defaults: a reader must keep them.
        let thresholds = Thresholds {
            healthy_efficiency: 0.99,
            ..Thresholds::default()
        };
        SweepDocument {
            analysis: analyze_sweep(&inputs, None, &thresholds),
            steps,
        }
    }

    #[test]
    fn reads_back_what_it_wrote_with_the_saved_analysis() {
        let document = sweep();
        let value = document.to_value().unwrap();
        assert_eq!(value["schema"], SWEEP_SCHEMA);
        assert!(value["steps"][1]["result"].is_object());
        let back = SweepDocument::from_value(value).unwrap();
        assert_eq!(back, document);
    }

    #[test]
    fn a_file_without_an_analysis_is_classified_again() {
        let mut value = sweep().to_value().unwrap();
        value.as_object_mut().unwrap().remove("verdict");
        let back = SweepDocument::from_value(value).unwrap();
        assert_eq!(back.steps.len(), 2);
        assert!(!back.analysis.verdict.is_empty());
        let mut value = sweep().to_value().unwrap();
        value["steps"][0].as_object_mut().unwrap().remove("result");
        assert!(matches!(
            SweepDocument::from_value(value),
            Err(SweepDocumentError::NoResult(1))
        ));
    }
}
