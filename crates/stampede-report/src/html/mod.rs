//! HTML reports: one self-contained, offline file per run, sweep,
//! comparison or experiment, with interactive charts (zoom, legend with the values under
//! the cursor) drawn by uPlot, which is vendored in assets/uplot and inlined
//! into the page with the charts' data as JSON. A live page (`run --web`)
//! is the run's page with its own controls added, its content replaced as
//! the run goes on.

mod charts;
mod compare;
mod experiment;
mod groups;
mod heatmap;
mod page;
mod protocols;
mod run;
mod sweep;
mod tables;
mod units;
mod workload;

pub use compare::{render_compare_html, Deltas, LabeledRun};
pub use experiment::render_experiment_html;
pub use groups::{render_groups_index, GroupPage};
pub use heatmap::heatmap_section;
pub use run::{render_html, render_html_with_heatmap, render_live_html, render_live_parts};
pub use sweep::{render_sweep_html, SweepStep};
