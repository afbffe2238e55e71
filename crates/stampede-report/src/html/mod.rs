//! HTML reports: one self-contained, offline file per run, sweep or
//! comparison, with interactive charts (zoom, legend with the values under
//! the cursor) drawn by uPlot, which is vendored in assets/uplot and inlined
//! into the page with the charts' data as JSON.

mod charts;
mod compare;
mod page;
mod run;
mod sweep;
mod tables;
mod units;
mod workload;

pub use compare::{render_compare_html, Deltas, LabeledRun};
pub use run::render_html;
pub use sweep::{render_sweep_html, SweepStep};
