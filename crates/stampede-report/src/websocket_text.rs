//! The WebSocket lines of the text summary (`ws://`, `wss://`): messages
//! each way and their rates, bytes each way, the round trip and the
//! connection setup (median, p99, maximum), close codes counted, pings
//! answered and connections the server dropped.

use crate::format::{counted, format_bytes, format_rate};
use crate::stream_text::summary_line;
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// `WebSocket` lines, when the run was one.
pub(crate) fn render_websocket(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(ws) = &result.websocket else {
        return Ok(());
    };
    writeln!(
        out,
        "  WebSocket     {} sent ({}/sec), {} received ({}/sec)",
        counted(ws.messages_sent, "message"),
        format_rate(ws.sent_per_s),
        counted(ws.messages_received, "message"),
        format_rate(ws.received_per_s),
    )?;
    writeln!(
        out,
        "    bytes       {} sent, {} received (frames)",
        format_bytes(ws.bytes_sent as f64),
        format_bytes(ws.bytes_received as f64),
    )?;
    writeln!(out, "    round trip  {}", summary_line(&ws.rtt))?;
    writeln!(out, "    setup       {}", summary_line(&ws.setup))?;
    let codes = if ws.close_codes.is_empty() {
        "none".to_string()
    } else {
        (ws.close_codes.iter())
            .map(|(code, count)| format!("{code}×{count}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(
        out,
        "    closes      {codes}; {} dropped by the server, {} answered",
        counted(ws.dropped, "connection"),
        counted(ws.pings_answered, "ping"),
    )?;
    Ok(())
}
