//! HTML reports: one self-contained, offline file per run, sweep or
//! comparison, with interactive charts (zoom, tooltips) drawn by plotly.js,
//! which the `plotly` crate ships and the page inlines.

mod charts;
mod compare;
mod page;
mod run;
mod sweep;

pub use compare::{render_compare_html, Deltas, LabeledRun};
pub use run::render_html;
pub use sweep::{render_sweep_html, SweepStep};
