//! The WebSocket lines of the text summary (`ws://`, `wss://`): messages
//! each way and their rates, bytes each way, the round trip and the
//! connection setup (median, p99, maximum), close codes counted, pings
//! answered and connections the server dropped.

use crate::format::{counted, format_bytes, format_count, format_latency_us, format_rate};
use stampede_metrics::{RunResult, StreamSummary};
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
    let shape = |s: &StreamSummary| {
        if s.count == 0 {
            return "-".to_string();
        }
        format!(
            "p50 {}, p99 {}, max {} ({})",
            format_latency_us(s.p50_us as f64),
            format_latency_us(s.p99_us as f64),
            format_latency_us(s.max_us as f64),
            format_count(s.count)
        )
    };
    writeln!(out, "    round trip  {}", shape(&ws.rtt))?;
    writeln!(out, "    setup       {}", shape(&ws.setup))?;
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
