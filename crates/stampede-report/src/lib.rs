//! Renderers of a [`RunResult`]: `fn render(&RunResult, &mut dyn Write)`, one
//! module per format. No runtime, no terminal control: bytes out only.

mod format;
mod json;
mod text;

pub use format::{format_bytes, format_count, format_latency_us, format_rate};
pub use json::render_json;
pub use stampede_metrics::RunResult;
pub use text::render_text;
