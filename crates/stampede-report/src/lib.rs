//! Renderers of a [`RunResult`]: `fn render(&RunResult, &mut dyn Write)`, one
//! module per format (text, JSON, CSV, HTML), plus the per-request row formats
//! (ab's gnuplot TSV, the request log) that the binary's background writer
//! uses. No runtime, no terminal control: bytes out only.
//!
//! Modules: `text` (the human summary), `json`, `csv`, `gnuplot`,
//! `request_line` (`--log-requests`), `format` (numbers and units shared by
//! the human formats), `html` (the run, sweep and comparison pages, their
//! charts and tables). See docs/architecture.md.

mod checks_text;
mod csv;
mod format;
mod gnuplot;
mod groups_text;
mod html;
mod json;
mod request_line;
mod text;

pub use csv::{render_csv, render_csv_timeseries, TIMESERIES_COLUMNS};
pub use format::{counted, format_bytes, format_count, format_latency_us, format_rate};
pub use gnuplot::{ctime, render_gnuplot_header, render_gnuplot_row, GnuplotRow, GNUPLOT_HEADER};
pub use html::{
    render_compare_html, render_html, render_sweep_html, Deltas, LabeledRun, SweepStep,
};
pub use json::render_json;
pub use request_line::{
    render_request_line, render_request_log_header, RequestLine, REQUEST_LOG_HEADER,
};
pub use stampede_metrics::RunResult;
pub use text::{no_response_reason, render_text};
