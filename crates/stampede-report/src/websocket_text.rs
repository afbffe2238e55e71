//! The WebSocket lines of the text summary (`ws://`, `wss://`): messages
//! each way and their rates, bytes each way, the round trip and the
//! connection setup (median, p99, maximum), close codes counted, pings
//! answered and connections the server dropped, and what the upgrades
//! agreed (`permessage-deflate`, a subprotocol).

use crate::format::{counted, format_bytes, format_rate};
use crate::stream_text::summary_line;
use stampede_metrics::{RunResult, WebSocketResult};
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
    if let Some(agreed) = negotiated(ws) {
        writeln!(out, "    agreed      {agreed}")?;
    }
    Ok(())
}

/// What the upgrades agreed, when something was asked: whether the server
/// took `--ws-deflate` and which subprotocol it chose. A user who asked
/// for compression must see when the run went without it: bytes and
/// round trips mean something else then.
pub(crate) fn negotiated(ws: &WebSocketResult) -> Option<String> {
    let mut parts = Vec::new();
    if ws.deflated + ws.deflate_refused > 0 {
        parts.push(format!(
            "permessage-deflate on {} of {} (refused by the server on {})",
            ws.deflated,
            counted(ws.deflated + ws.deflate_refused, "connection"),
            ws.deflate_refused,
        ));
    }
    if !ws.subprotocols.is_empty() {
        let chosen: Vec<String> = (ws.subprotocols.iter())
            .map(|(name, count)| format!("{name}×{count}"))
            .collect();
        parts.push(format!("subprotocol {}", chosen.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::negotiated;
    use stampede_metrics::WebSocketResult;

    #[test]
    fn the_agreement_is_said_only_when_something_was_asked() {
        let mut ws = WebSocketResult {
            connections: 3,
            ..WebSocketResult::default()
        };
        assert_eq!(negotiated(&ws), None);
        ws.deflate_refused = 3;
        assert_eq!(
            negotiated(&ws).unwrap(),
            "permessage-deflate on 0 of 3 connections (refused by the server on 3)"
        );
        ws.deflate_refused = 0;
        ws.deflated = 2;
        ws.subprotocols.insert("chat".into(), 2);
        assert_eq!(
            negotiated(&ws).unwrap(),
            "permessage-deflate on 2 of 2 connections (refused by the server on 0); subprotocol chat×2"
        );
    }
}
