//! Renderers of a [`RunResult`]: `fn render(&RunResult, &mut dyn Write)`, one
//! module per format (text, JSON, CSV, HTML), plus the per-request row formats
//! (ab's gnuplot TSV, the request log) that the binary's background writer
//! uses. No runtime, no terminal control: bytes out only.
//!
//! Modules: `text` (the human summary of a run, with `checks_text` and
//! `groups_text` for its checks and scenario groups, `replay_text` for a
//! replayed log), `sweep_text`,
//! `compare_text`, `repeat_text`, `experiment_text` and `experiment_sweep_text` (the tables of a
//! sweep, a comparison, repeated rounds and an experiment), `json`, `csv`, `gnuplot`,
//! `request_line` (`--log-requests`), `format` (numbers and units shared by
//! the human formats), `html` (the run, sweep and comparison pages, their
//! charts and tables), `compat` (the layouts of ab, wrk, webbench and
//! press). See docs/architecture.md.

mod checks_text;
mod compare_text;
pub mod compat;
mod compression_text;
mod csv;
mod experiment_sweep_text;
mod experiment_text;
mod format;
mod gnuplot;
mod groups_text;
mod html;
mod json;
mod rendezvous_text;
mod repeat_text;
mod replay_text;
mod request_line;
mod selfcheck;
mod stream_text;
mod sweep_text;
mod text;
mod websocket_text;

pub use compare_text::render_compare_text;
pub use csv::{render_csv, render_csv_timeseries};
pub use experiment_text::{render_experiment_text, verdict_lines};
pub use format::{counted, format_bytes, format_count, format_latency_us, format_rate};
pub use gnuplot::{ctime, render_gnuplot_header, render_gnuplot_row, GnuplotRow};
pub use html::{
    heatmap_section, render_compare_html, render_experiment_html, render_groups_index, render_html,
    render_html_with_heatmap, render_live_html, render_live_parts, render_sweep_html, Deltas,
    GroupPage, LabeledRun, SweepStep,
};
pub use json::render_json;
pub use rendezvous_text::describe_rendezvous;
pub use repeat_text::render_repeat_text;
pub use request_line::{render_request_line, render_request_log_header, RequestLine};
pub use selfcheck::warnings as selfcheck_warnings;
pub use stampede_metrics::RunResult;
pub use sweep_text::{describe_load, render_sweep_text, sweep_banner};
pub use text::{no_response_reason, render_text};
