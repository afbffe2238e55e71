//! `experiment --html`: the variants on the comparison page (stampede-report's
//! `render_compare_html`), each variant's first run drawn on shared axes
//! (throughput and latency over time), the table of each variant's rounds
//! against the first variant's with Welch intervals (`compare_samples`).

use crate::process::exports::write_file;
use stampede_analysis::{compare_samples, CompareOptions, ExperimentDocument, RunFigures, Sample};
use stampede_report::{render_compare_html, Deltas, LabeledRun};
use std::path::Path;

/// Writes the page; the variants without a finished run are left out.
pub fn write(doc: &ExperimentDocument, path: &Path) -> anyhow::Result<()> {
    let measured: Vec<_> = doc.variants.iter().filter(|v| !v.runs.is_empty()).collect();
    if measured.is_empty() {
        anyhow::bail!("--html: no variant has a finished run to draw");
    }
    let samples: Vec<Sample> = measured
        .iter()
        .map(|v| Sample {
            label: v.name.clone(),
            runs: v
                .runs
                .iter()
                .map(|r| RunFigures::of(v.name.as_str(), r))
                .collect(),
        })
        .collect();
    let comparison = compare_samples(&samples, &CompareOptions::default())?;
    let runs: Vec<LabeledRun<'_>> = measured
        .iter()
        .map(|v| LabeledRun {
            label: &v.name,
            result: &v.runs[0],
        })
        .collect();
    write_file(path, |out| {
        render_compare_html(&runs, Deltas::Runs(&comparison), out)
    })
}
