//! `stampede compare A.json B.json` when the files are experiments
//! (`stampede.experiment/1`): each variant of the first against the
//! variant of the same name in the others, over their rounds, in
//! compare's table (Welch intervals where both sides have rounds). The
//! files must hold the same variants: a mismatch is one clear line.

use crate::process::result_file::{self, ResultFile};
use anyhow::bail;
use stampede_analysis::{compare_samples, CompareOptions, ExperimentDocument, RunFigures, Sample};
use std::path::{Path, PathBuf};

/// Reads each file as an experiment, or `None` when the first is not one.
pub fn read_all(files: &[PathBuf]) -> anyhow::Result<Option<Vec<(String, ExperimentDocument)>>> {
    let Some(first) = files.first() else {
        return Ok(None);
    };
    if !matches!(result_file::read(first)?, ResultFile::Experiment(_)) {
        return Ok(None);
    }
    files
        .iter()
        .map(|path| match result_file::read(path)? {
            ResultFile::Experiment(doc) => Ok((result_file::label(path), *doc)),
            other => Err(result_file::refuse(
                &other,
                path,
                "an experiment, as the first file is",
            )),
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

/// The variant names of `doc`, in its order.
fn names(doc: &ExperimentDocument) -> Vec<&str> {
    doc.variants.iter().map(|v| v.name.as_str()).collect()
}

/// Refuses files whose variants differ from the first's, naming what
/// differs.
pub fn check_variants(
    files: &[PathBuf],
    docs: &[(String, ExperimentDocument)],
) -> anyhow::Result<()> {
    let Some((_, base)) = docs.first() else {
        return Ok(());
    };
    let wanted = names(base);
    for (path, (_, doc)) in files.iter().zip(docs).skip(1) {
        let have = names(doc);
        let missing: Vec<&str> = wanted
            .iter()
            .filter(|n| !have.contains(n))
            .copied()
            .collect();
        let extra: Vec<&str> = have
            .iter()
            .filter(|n| !wanted.contains(n))
            .copied()
            .collect();
        if !missing.is_empty() || !extra.is_empty() {
            bail!(
                "{} and {} hold different variants (missing: {}; not in the first: {}): compare experiments of the same --vary",
                shown(&files[0]),
                shown(path),
                list(&missing),
                list(&extra)
            );
        }
    }
    Ok(())
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// One comparison table per variant, headed by its name; a variant without
/// a finished run in some file says so instead.
pub fn render(
    docs: &[(String, ExperimentDocument)],
    options: &CompareOptions,
) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let Some((_, base)) = docs.first() else {
        return Ok(String::new());
    };
    for (i, variant) in base.variants.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let samples: Vec<Sample> = docs
            .iter()
            .filter_map(|(label, doc)| {
                let v = doc.variants.iter().find(|v| v.name == variant.name)?;
                Some(Sample {
                    label: label.clone(),
                    runs: v
                        .runs
                        .iter()
                        .filter(|r| !r.interrupted)
                        .map(|r| RunFigures::of(label, r))
                        .collect(),
                })
            })
            .collect();
        use std::io::Write;
        writeln!(out, "variant {}:", variant.name)?;
        if let Some(empty) = samples.iter().find(|s| s.runs.is_empty()) {
            writeln!(
                out,
                "  no finished run in {}: nothing to compare",
                empty.label
            )?;
            continue;
        }
        let comparison = compare_samples(&samples, options)?;
        stampede_report::render_compare_text(&comparison, &mut out)?;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
