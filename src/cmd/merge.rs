//! `stampede merge FILES...`: reads agents' results, merges them losslessly
//! (stampede-metrics' `merge_results`), re-checks the SLO on the whole, prints
//! the text summary and writes the merged JSON and HTML. The merge rules live
//! in the library; this file owns reading files and naming them in errors (a
//! file that is not a run's result is named with what it is).

use crate::process::exports::{self, ExportArgs};
use crate::process::output::{self, OutputFormat};
use crate::process::result_file::{self, ResultFile};
use crate::session::slo_checks;
use anyhow::{bail, Context};
use stampede_metrics::{merge_results, MergeError, RunResult};
use std::path::PathBuf;

const EXAMPLES: &str = "Examples:
  stampede merge out-*.json --json merged.json
  stampede merge out-0.json out-1.json out-2.json --json merged.json --html merged.html
  stampede merge old.json new.json --force      # different URLs: merged anyway, with a warning";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct MergeArgs {
    /// Result files written by `stampede run --json` (one per agent)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged result (stampede.result/1) to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the merged HTML report to PATH
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Merge even when the plans differ in URL, method or load model
    #[arg(long)]
    pub force: bool,
    /// What to print on stdout
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

pub fn execute(args: MergeArgs) -> anyhow::Result<i32> {
    let mut results = Vec::with_capacity(args.files.len());
    for path in &args.files {
        match result_file::read(path)? {
            ResultFile::Run(result) => results.push(*result),
            other => return Err(other.refuse(path, "a run's result (stampede.result/1) to merge")),
        }
    }
    let mut merged = match merge_results(&results, args.force) {
        Ok(merged) => merged,
        Err(error) => bail!("{}", describe(&error, &args.files)),
    };
    recheck_slo(&results, &mut merged)?;
    let saved = args
        .json
        .as_ref()
        .map(|path| output::write_json(&merged, path))
        .transpose();
    let export_args = ExportArgs {
        html: args.html.clone(),
        ..ExportArgs::default()
    };
    let exported = exports::write_exports(&merged, &export_args);
    // With `--json -` or `--html -` the file is stdout: the summary moves to stderr.
    let stdout_taken = [&args.json, &args.html]
        .into_iter()
        .flatten()
        .any(|path| output::is_stdout(path));
    output::print_summary(&merged, args.output, stdout_taken)?;
    saved?;
    exported?;
    // An input cut short by Ctrl-C is partial data (its `interrupted` stays
    // in the merged file), not an interrupt of this merge: no 130 here.
    let interrupted_inputs = results.iter().filter(|r| r.interrupted).count();
    if interrupted_inputs > 0 {
        let which = match interrupted_inputs {
            1 => "1 input was".to_string(),
            n => format!("{n} inputs were"),
        };
        eprintln!("stampede: warning: {which} interrupted: the merge holds what it measured");
    }
    Ok(crate::session::delivery::measured_status(&merged))
}

/// The merge error with input numbers replaced by file names.
fn describe(error: &MergeError, files: &[PathBuf]) -> String {
    let name = |index: usize| {
        files
            .get(index)
            .map_or_else(|| format!("input {index}"), |p| p.display().to_string())
    };
    match error {
        MergeError::PlanMismatch {
            index,
            field,
            first,
            other,
        } => format!(
            "{} and {} measured different tests: plan.{field} is '{first}' vs '{other}' \
             (--force merges them anyway)",
            name(0),
            name(*index)
        ),
        MergeError::Histogram { index, source } => format!("{}: {source}", name(*index)),
        MergeError::StartedAt { index, source } => {
            format!("{}: started_at: {source}", name(*index))
        }
        MergeError::Empty => error.to_string(),
    }
}

/// SLO conditions were checked per agent, against one share of the load;
/// when every input checked the same ones, they are checked again against
/// the whole (an `rps>...` condition only means something there).
fn recheck_slo(results: &[RunResult], merged: &mut RunResult) -> anyhow::Result<()> {
    let conditions: Vec<&str> = match results.first() {
        Some(first) => first.slo.iter().map(|c| c.condition.as_str()).collect(),
        None => return Ok(()),
    };
    let same = results.iter().all(|r| {
        r.slo.len() == conditions.len()
            && r.slo
                .iter()
                .zip(&conditions)
                .all(|(c, text)| c.condition == *text)
    });
    if conditions.is_empty() {
        return Ok(());
    }
    if !same {
        merged.warnings.push(
            "the inputs checked different SLO conditions: none is checked on the merge".into(),
        );
        return Ok(());
    }
    let parsed = stampede_analysis::parse_slo(&conditions.join(","))
        .context("re-reading the inputs' SLO conditions")?;
    merged.slo = slo_checks(&parsed, &*merged);
    Ok(())
}
