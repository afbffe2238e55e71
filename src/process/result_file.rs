//! Reading back the files stampede writes. Each carries a schema tag; this
//! reads the tag, parses the document it names and, when a command is handed
//! the wrong file, says in one line which file it is and what it holds (not
//! a serde message about its first odd field). It does not render anything.

use anyhow::{bail, Context};
use stampede_analysis::{
    CompareDocument, ExperimentDocument, RepeatDocument, SweepDocument, COMPARE_SCHEMA,
    EXPERIMENT_SCHEMA, REPEAT_SCHEMA, SWEEP_SCHEMA,
};
use stampede_metrics::{RunResult, RESULT_SCHEMA};
use std::path::Path;

/// A file stampede wrote, by its schema tag.
pub enum ResultFile {
    Run(Box<RunResult>),
    Repeat(Box<RepeatDocument>),
    Compare(Box<CompareDocument>),
    Sweep(Box<SweepDocument>),
    Experiment(Box<ExperimentDocument>),
}

/// What a schema tag's file is and which command writes it, for messages.
pub fn describe(schema: &str) -> (&'static str, &'static str) {
    match schema {
        RESULT_SCHEMA => ("a run's result", "run --json or merge"),
        REPEAT_SCHEMA => ("a file of repeated rounds", "run --repeat"),
        COMPARE_SCHEMA => ("a comparison", "compare --json"),
        SWEEP_SCHEMA => ("a sweep", "sweep --json"),
        EXPERIMENT_SCHEMA => ("an experiment", "experiment --json"),
        _ => ("a file unknown to this stampede", "another tool"),
    }
}

impl ResultFile {
    pub fn schema(&self) -> &'static str {
        match self {
            ResultFile::Run(_) => RESULT_SCHEMA,
            ResultFile::Repeat(_) => REPEAT_SCHEMA,
            ResultFile::Compare(_) => COMPARE_SCHEMA,
            ResultFile::Sweep(_) => SWEEP_SCHEMA,
            ResultFile::Experiment(_) => EXPERIMENT_SCHEMA,
        }
    }

    /// The error for a file of this kind where `wanted` was expected.
    pub fn refuse(&self, path: &Path, wanted: &str) -> anyhow::Error {
        let (what, by) = describe(self.schema());
        anyhow::anyhow!(
            "{} is {what} ({}, from `{by}`), not {wanted}",
            path.display(),
            self.schema()
        )
    }
}

/// Reads `path` and parses the document its schema tag names.
pub fn read(path: &Path) -> anyhow::Result<ResultFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a stampede result (not JSON: {e})",
            path.display()
        )
    })?;
    let schema = match value.get("schema") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => bail!(
            "{} is not a stampede result (its schema tag is {other}, not a name such as {RESULT_SCHEMA})",
            path.display()
        ),
        None => bail!(
            "{} is not a stampede result (no schema tag; stampede's files start with \"schema\": \"{RESULT_SCHEMA}\" or the like)",
            path.display()
        ),
    };
    let unreadable = |e: &dyn std::fmt::Display| {
        anyhow::anyhow!(
            "{} says it is {} ({schema}) but does not read as one: {e}",
            path.display(),
            describe(&schema).0
        )
    };
    Ok(match schema.as_str() {
        RESULT_SCHEMA => {
            ResultFile::Run(Box::new(RunResult::from_json(&text).map_err(|e| unreadable(&e))?))
        }
        REPEAT_SCHEMA => ResultFile::Repeat(Box::new(
            RepeatDocument::from_json(&text).map_err(|e| unreadable(&e))?,
        )),
        COMPARE_SCHEMA => ResultFile::Compare(Box::new(
            serde_json::from_value(value).map_err(|e| unreadable(&e))?,
        )),
        SWEEP_SCHEMA => ResultFile::Sweep(Box::new(
            SweepDocument::from_value(value).map_err(|e| unreadable(&e))?,
        )),
        EXPERIMENT_SCHEMA => ResultFile::Experiment(Box::new(
            ExperimentDocument::from_json(&text).map_err(|e| unreadable(&e))?,
        )),
        other => bail!(
            "{} is not a file this stampede reads (schema '{other}'; it reads {RESULT_SCHEMA}, {REPEAT_SCHEMA}, {COMPARE_SCHEMA}, {SWEEP_SCHEMA} and {EXPERIMENT_SCHEMA})",
            path.display()
        ),
    })
}

/// A file's name without folder and `.json`, as compare and report label it.
pub fn label(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
