//! `experiment --html`: the experiment's page (stampede-report's
//! `render_experiment_html`): verdicts, each variant's throughput and p99
//! on shared axes, its cost per request as bars, the table of figures.

use crate::process::exports::write_file;
use stampede_analysis::ExperimentDocument;
use std::path::Path;

/// Writes the page; refused when no variant has a finished run to draw.
pub fn write(doc: &ExperimentDocument, path: &Path) -> anyhow::Result<()> {
    if doc.variants.iter().all(|v| v.runs.is_empty()) {
        anyhow::bail!("--html: no variant has a finished run to draw");
    }
    write_file(path, |out| {
        stampede_report::render_experiment_html(doc, out)
    })
}
