//! The compression line of the text summary: the
//! `Accept-Encoding` a `--compressed` run sent and, with `--decode`, how
//! many responses came encoded and what their bodies came to once decoded.

use crate::format::{format_bytes, format_count};
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// `Compression` line, when the run asked for compressed responses.
pub(crate) fn render_compression(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(compression) = &result.compression else {
        return Ok(());
    };
    let accept = compression
        .accept_encoding
        .as_deref()
        .map_or(String::new(), |a| format!("Accept-Encoding: {a}; "));
    let wire = result.bytes.body;
    match compression.decoded_bytes {
        Some(decoded) => {
            let ratio = if wire > 0 {
                format!(" ({:.1}x)", decoded as f64 / wire as f64)
            } else {
                String::new()
            };
            writeln!(
                out,
                "  Compression   {accept}{} of {} responses encoded; body {} on the wire, {} decoded{ratio}",
                format_count(compression.encoded_responses.unwrap_or(0)),
                format_count(result.requests.completed),
                format_bytes(wire as f64),
                format_bytes(decoded as f64),
            )
        }
        None => writeln!(
            out,
            "  Compression   {accept}body {} on the wire (not decoded: add --decode for decoded bytes)",
            format_bytes(wire as f64)
        ),
    }
}
