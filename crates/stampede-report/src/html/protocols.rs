//! The run report's WebSocket and streams sections: messages each way
//! with their rates and bytes, the round trip and the connection setup,
//! close codes, drops and pings (`websocket`); streams, events and their
//! rate, reconnects, and the first byte, first event, gaps and length
//! (`stream`). Each figure is read from the result's summaries as the
//! text summary reads them; nothing for runs without them.

use super::page::Page;
use crate::format::{format_bytes, format_count, format_latency_us, format_rate};
use stampede_metrics::{RunResult, StreamSummary};

/// Headers of a timings table: what, how many, p50, p99, max.
const TIMING_HEADERS: [&str; 5] = ["timing", "count", "p50", "p99", "max"];

/// One timing's row: its label, count, p50, p99 and max (`-` when empty).
fn timing_row(label: &str, s: &StreamSummary) -> Vec<String> {
    let at = |us: u64| match s.count {
        0 => "-".to_string(),
        _ => format_latency_us(us as f64),
    };
    vec![
        label.to_string(),
        format_count(s.count),
        at(s.p50_us),
        at(s.p99_us),
        at(s.max_us),
    ]
}

/// The `WebSocket` section, when the run was one.
pub(crate) fn websocket_section(page: &mut Page, result: &RunResult) {
    let Some(ws) = &result.websocket else {
        return;
    };
    page.heading("WebSocket");
    page.open_row();
    page.raw("<div>");
    page.table(
        &["messages", "count", "messages/s", "bytes (frames)"],
        &[
            vec![
                "sent".into(),
                format_count(ws.messages_sent),
                format_rate(ws.sent_per_s),
                format_bytes(ws.bytes_sent as f64),
            ],
            vec![
                "received".into(),
                format_count(ws.messages_received),
                format_rate(ws.received_per_s),
                format_bytes(ws.bytes_received as f64),
            ],
        ],
    );
    page.table(
        &TIMING_HEADERS,
        &[
            timing_row("round trip", &ws.rtt),
            timing_row("setup", &ws.setup),
        ],
    );
    page.raw("</div><div>");
    page.table(
        &["connections", "dropped by the server", "pings answered"],
        &[vec![
            format_count(ws.connections),
            format_count(ws.dropped),
            format_count(ws.pings_answered),
        ]],
    );
    let codes: Vec<Vec<String>> = match ws.close_codes.is_empty() {
        true => vec![vec!["none".into(), "0".into()]],
        false => (ws.close_codes.iter())
            .map(|(code, count)| vec![code.clone(), format_count(*count)])
            .collect(),
    };
    page.table(&["close code", "count"], &codes);
    page.raw("</div>");
    page.close_row();
    if let Some(agreed) = crate::websocket_text::negotiated(ws) {
        page.notes("agreed", &[format!("Agreed: {agreed}")]);
    }
}

/// The `Streams` section, when the run watched streams (`--sse`).
pub(crate) fn stream_section(page: &mut Page, result: &RunResult) {
    let Some(stream) = &result.stream else {
        return;
    };
    page.heading("Streams");
    page.open_row();
    page.raw("<div>");
    page.table(
        &["streams", "events", "events/s", "reconnects"],
        &[vec![
            format_count(stream.streams),
            format_count(stream.events),
            format_rate(stream.events_per_s),
            format_count(stream.reconnects),
        ]],
    );
    page.raw("</div><div>");
    page.table(
        &TIMING_HEADERS,
        &[
            timing_row("first byte", &stream.first_byte),
            timing_row("first event", &stream.first_event),
            timing_row("event gap", &stream.gap),
            timing_row("length", &stream.length),
        ],
    );
    page.raw("</div>");
    page.close_row();
}

#[cfg(test)]
mod tests {
    use stampede_metrics::{RunResult, StreamResult, StreamSummary, WebSocketResult};

    fn page(result: &RunResult) -> String {
        let mut out = Vec::new();
        crate::render_html(result, &mut out).expect("renders");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn sections_show_the_results_figures_and_only_when_it_has_them() {
        let mut result = RunResult::from_json(include_str!("testdata/run-503.json")).unwrap();
        let plain = page(&result);
        assert!(!plain.contains("<h2>WebSocket</h2>") && !plain.contains("<h2>Streams</h2>"));
        let summary = StreamSummary {
            count: 1_200,
            p50_us: 850,
            p99_us: 4_100,
            max_us: 12_000,
        };
        let mut ws = WebSocketResult {
            messages_sent: 1_200,
            messages_received: 1_199,
            sent_per_s: 600.0,
            received_per_s: 599.5,
            rtt: summary,
            connections: 4,
            dropped: 1,
            ..Default::default()
        };
        ws.close_codes.insert("1006".into(), 1);
        result.websocket = Some(ws);
        result.stream = Some(StreamResult {
            streams: 3,
            events: 60,
            events_per_s: 30.0,
            gap: StreamSummary {
                count: 57,
                p50_us: 50_000,
                p99_us: 51_000,
                max_us: 1_000_000,
            },
            ..Default::default()
        });
        let html = page(&result);
        for row in [
            "<td class=\"\">sent</td><td class=\"num\">1,200</td><td class=\"num\">600.00</td>",
            "<td class=\"\">received</td><td class=\"num\">1,199</td><td class=\"num\">599.50</td>",
            "<td class=\"\">round trip</td><td class=\"num\">1,200</td><td class=\"num\">850us</td><td class=\"num\">4.10ms</td><td class=\"num\">12.00ms</td>",
            "<td class=\"\">setup</td><td class=\"num\">0</td><td class=\"\">-</td>",
            "<td class=\"num\">4</td><td class=\"num\">1</td><td class=\"num\">0</td>",
            "<td class=\"num\">1006</td><td class=\"num\">1</td>",
            "<td class=\"num\">3</td><td class=\"num\">60</td><td class=\"num\">30.00</td>",
            "<td class=\"\">event gap</td><td class=\"num\">57</td><td class=\"num\">50.00ms</td><td class=\"num\">51.00ms</td><td class=\"num\">1.00s</td>",
        ] {
            assert!(html.contains(row), "no {row}");
        }
        assert!(html.contains("<h2>WebSocket</h2>") && html.contains("<h2>Streams</h2>"));
    }
}
