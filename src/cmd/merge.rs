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
  stampede merge old.json new.json --force      # different URLs: merged anyway, with a warning
  stampede merge a.hlog b.hlog c.hlog --hlog merged.hlog   # interval logs, per interval, exactly";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct MergeArgs {
    /// Result files written by `stampede run --json` (one per agent), or
    /// interval logs written by `--hlog`
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Interval logs: write the merged log to PATH (intervals aligned by
    /// their start offset from each log's start time, histograms added)
    #[arg(long, value_name = "PATH")]
    pub hlog: Option<PathBuf>,
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
    refuse_a_file_twice(&args.files)?;
    let is_hlog = |path: &PathBuf| {
        let head = std::fs::read(path).unwrap_or_default();
        crate::process::hlog_file::looks_like_hlog(path, &head)
    };
    if args.hlog.is_some() || args.files.iter().any(is_hlog) {
        return merge_hlogs(&args);
    }
    let mut results = Vec::with_capacity(args.files.len());
    for path in &args.files {
        match result_file::read(path)? {
            ResultFile::Run(result) => results.push(*result),
            other => {
                return Err(result_file::refuse(
                    &other,
                    path,
                    "a run's result (stampede.result/1) to merge",
                ))
            }
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

/// A merge adds its inputs: one file given twice (under any spelling)
/// would count twice.
fn refuse_a_file_twice(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut seen: Vec<(PathBuf, &PathBuf)> = Vec::with_capacity(files.len());
    for path in files.iter().filter(|p| p.exists()) {
        // (A missing file: reading it names what is wrong.)
        let real = crate::process::output::resolved(path);
        if let Some((_, first)) = seen.iter().find(|(r, _)| *r == real) {
            bail!(
                "{} and {} are the same file: a merge adds its inputs, so it would count twice",
                first.display(),
                path.display()
            );
        }
        seen.push((real, path));
    }
    Ok(())
}

/// Interval logs merged per interval into `--hlog PATH`.
fn merge_hlogs(args: &MergeArgs) -> anyhow::Result<i32> {
    let Some(out) = &args.hlog else {
        bail!("interval logs merge into an interval log: give --hlog PATH");
    };
    if args.json.is_some() || args.html.is_some() {
        bail!("--json and --html merge run results; interval logs merge with --hlog only");
    }
    let mut files = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let file = crate::process::hlog_file::read_hlog_file(path)?;
        files.push((path.display().to_string(), file));
    }
    let merged = stampede_metrics::merge_hlogs(&files).map_err(|e| anyhow::anyhow!("{e}"))?;
    for warning in &merged.warnings {
        eprintln!("stampede: warning: {warning}");
    }
    let started_at = (merged.start_time).unwrap_or_else(std::time::SystemTime::now);
    let merged = merged.intervals;
    crate::process::hlog_file::write_merged(out, started_at, &merged)?;
    if args.output == OutputFormat::Text {
        let first = merged.first().map(|m| m.tag.as_str());
        let intervals = merged
            .iter()
            .filter(|m| Some(m.tag.as_str()) == first)
            .count();
        eprintln!(
            "stampede: merged {} logs into {} ({intervals} intervals per tag)",
            files.len(),
            out.display()
        );
    }
    Ok(crate::process::exit::OK)
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
