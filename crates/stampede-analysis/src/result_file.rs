//! Telling the files stampede writes apart. Each carries a schema tag; this
//! reads the tag, parses the document it names and, when a command is handed
//! the wrong file, says in one line which file it is and what it holds (not
//! a serde message about its first odd field). It takes the file's text: the
//! caller reads it.

use crate::{
    CompareDocument, ExperimentDocument, RepeatDocument, SweepDocument, COMPARE_SCHEMA,
    EXPERIMENT_SCHEMA, REPEAT_SCHEMA, SWEEP_SCHEMA,
};
use stampede_metrics::{RunResult, RESULT_SCHEMA};

/// A file stampede wrote, by its schema tag.
pub enum ResultFile {
    /// A run's result (`run --json`, `merge`).
    Run(Box<RunResult>),
    /// Repeated rounds of one plan (`run --repeat`).
    Repeat(Box<RepeatDocument>),
    /// A comparison (`compare --json`).
    Compare(Box<CompareDocument>),
    /// A sweep (`sweep --json`).
    Sweep(Box<SweepDocument>),
    /// An experiment on a server's configuration (`experiment --json`).
    Experiment(Box<ExperimentDocument>),
}

/// Why a file is not the stampede file a command can read: one line that
/// names the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct UnreadableFile(String);

/// What a schema tag's file is and which command writes it, for messages.
fn describe(schema: &str) -> (&'static str, &'static str) {
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
    /// The schema tag of this kind of file.
    pub fn schema(&self) -> &'static str {
        match self {
            ResultFile::Run(_) => RESULT_SCHEMA,
            ResultFile::Repeat(_) => REPEAT_SCHEMA,
            ResultFile::Compare(_) => COMPARE_SCHEMA,
            ResultFile::Sweep(_) => SWEEP_SCHEMA,
            ResultFile::Experiment(_) => EXPERIMENT_SCHEMA,
        }
    }

    /// The error for the file `name`, of this kind, where `wanted` was
    /// expected.
    pub fn refuse(&self, name: &str, wanted: &str) -> UnreadableFile {
        let (what, by) = describe(self.schema());
        UnreadableFile(format!(
            "{name} is {what} ({}, from `{by}`), not {wanted}",
            self.schema()
        ))
    }

    /// Parses `text`, the content of the file `name`, as the document its
    /// schema tag names.
    pub fn parse(text: &str, name: &str) -> Result<ResultFile, UnreadableFile> {
        let refused = |why: String| UnreadableFile(format!("{name} {why}"));
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| refused(format!("is not a stampede result (not JSON: {e})")))?;
        let schema = match value.get("schema") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => return Err(refused(format!(
                "is not a stampede result (its schema tag is {other}, not a name such as {RESULT_SCHEMA})"
            ))),
            None => return Err(refused(format!(
                "is not a stampede result (no schema tag; stampede's files start with \"schema\": \"{RESULT_SCHEMA}\" or the like)"
            ))),
        };
        let unreadable = |e: &dyn std::fmt::Display| {
            refused(format!(
                "says it is {} ({schema}) but does not read as one: {e}",
                describe(&schema).0
            ))
        };
        Ok(match schema.as_str() {
            RESULT_SCHEMA => {
                ResultFile::Run(Box::new(RunResult::from_json(text).map_err(|e| unreadable(&e))?))
            }
            REPEAT_SCHEMA => ResultFile::Repeat(Box::new(
                RepeatDocument::from_json(text).map_err(|e| unreadable(&e))?,
            )),
            COMPARE_SCHEMA => ResultFile::Compare(Box::new(
                serde_json::from_value(value).map_err(|e| unreadable(&e))?,
            )),
            SWEEP_SCHEMA => ResultFile::Sweep(Box::new(
                SweepDocument::from_value(value).map_err(|e| unreadable(&e))?,
            )),
            EXPERIMENT_SCHEMA => ResultFile::Experiment(Box::new(
                ExperimentDocument::from_json(text).map_err(|e| unreadable(&e))?,
            )),
            other => return Err(refused(format!(
                "is not a file this stampede reads (schema '{other}'; it reads {RESULT_SCHEMA}, {REPEAT_SCHEMA}, {COMPARE_SCHEMA}, {SWEEP_SCHEMA} and {EXPERIMENT_SCHEMA})"
            ))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        match ResultFile::parse(text, "x.json") {
            Ok(file) => panic!("{} read", file.schema()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn what_is_not_a_result_says_why_in_one_line() {
        assert!(refusal("nope").starts_with("x.json is not a stampede result (not JSON: "));
        assert_eq!(
            refusal(r#"{"schema": 3}"#),
            "x.json is not a stampede result (its schema tag is 3, not a name such as stampede.result/1)"
        );
        assert!(refusal("{}").starts_with("x.json is not a stampede result (no schema tag;"));
        assert!(refusal(r#"{"schema": "k6.summary/1"}"#)
            .starts_with("x.json is not a file this stampede reads (schema 'k6.summary/1';"));
        assert!(refusal(r#"{"schema": "stampede.sweep/1"}"#).starts_with(
            "x.json says it is a sweep (stampede.sweep/1) but does not read as one: "
        ));
    }

    #[test]
    fn a_refusal_names_the_file_its_kind_and_its_writer() {
        let run = crate::slo::tests::result(100.0, 0.0, &[1000]);
        let text = serde_json::to_string(&run).expect("a result serializes");
        let file = ResultFile::parse(&text, "r.json").expect("a run's result reads");
        assert_eq!(file.schema(), RESULT_SCHEMA);
        assert_eq!(
            file.refuse("r.json", "an experiment").to_string(),
            "r.json is a run's result (stampede.result/1, from `run --json or merge`), not an experiment"
        );
        let rounds = RepeatDocument::new(vec![run], &[], 0.95, None, false);
        let text = serde_json::to_string(&rounds).expect("rounds serialize");
        let file = ResultFile::parse(&text, "x.json").expect("rounds read");
        assert_eq!(
            file.refuse("x.json", "a sweep").to_string(),
            "x.json is a file of repeated rounds (stampede.repeat/1, from `run --repeat`), not a sweep"
        );
        assert_eq!(
            describe(EXPERIMENT_SCHEMA),
            ("an experiment", "experiment --json")
        );
        assert_eq!(describe(COMPARE_SCHEMA), ("a comparison", "compare --json"));
        assert_eq!(describe("other/1").1, "another tool");
    }
}
