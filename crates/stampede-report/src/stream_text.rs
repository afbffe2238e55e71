//! The streams lines of the text summary (`--sse`): streams and
//! their events, events per second, reconnects (those after a network
//! error), and the time to the first
//! byte and event, the gaps between events and the streams' length, each
//! as median, p99 and maximum.

use crate::format::{counted, format_count, format_latency_us, format_rate};
use stampede_metrics::{RunResult, StreamSummary};
use std::io::{self, Write};

/// `Streams` lines, when the run watched streams.
pub(crate) fn render_streams(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(stream) = &result.stream else {
        return Ok(());
    };
    // Network errors reconnected after show only when there were some.
    let after_errors = match stream.errors {
        0 => String::new(),
        n => format!(" ({} after a network error)", format_count(n)),
    };
    writeln!(
        out,
        "  Streams       {}, {} ({} events/sec), {}{after_errors}",
        counted(stream.streams, "stream"),
        counted(stream.events, "event"),
        format_rate(stream.events_per_s),
        counted(stream.reconnects, "reconnect"),
    )?;
    for (label, s) in [
        ("first byte", &stream.first_byte),
        ("first event", &stream.first_event),
        ("event gap", &stream.gap),
        ("length", &stream.length),
    ] {
        writeln!(out, "    {label:<12}{}", summary_line(s))?;
    }
    Ok(())
}

/// A summary of durations in one line: p50, p99, max and how many; `-`
/// when there were none. Streams' and WebSocket's figures read alike.
pub(crate) fn summary_line(s: &StreamSummary) -> String {
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
}
