//! CSV exports of a result: ab's `-e` percentile table (percent, then
//! milliseconds, for 0 … 100) and the per-second time series, with a
//! WebSocket run's messages each way and streams' events as columns of
//! their own when the run has them.

use stampede_metrics::RunResult;
use std::io::{self, Write};

/// Writes ab's `-e` table: `Percentage served,Time in ms`, one row per whole
/// percent from 0 (the fastest response) to 100 (the slowest), read from
/// the full HDR histogram rather than a sorted sample list.
pub fn render_csv(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let histogram = result
        .latency_histogram()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    writeln!(out, "Percentage served,Time in ms")?;
    for percent in 0..=100u32 {
        let micros = if histogram.is_empty() {
            0
        } else if percent == 0 {
            histogram.min()
        } else if percent == 100 {
            histogram.max()
        } else {
            histogram.value_at_quantile(f64::from(percent) / 100.0)
        };
        writeln!(out, "{percent},{:.3}", micros as f64 / 1000.0)?;
    }
    Ok(())
}

/// Columns of the time-series CSV, in order.
pub(crate) const TIMESERIES_COLUMNS: [&str; 14] = [
    "second",
    "duration_s",
    "completed",
    "success",
    "errors",
    "rps",
    "bytes_received",
    "in_flight",
    "open_connections",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
    "target",
];

/// Columns after [`TIMESERIES_COLUMNS`] for a WebSocket run: data
/// messages written and read in the second.
pub(crate) const WEBSOCKET_COLUMNS: [&str; 2] = ["ws_messages_sent", "ws_messages_received"];

/// The column after those for a run watching streams: the events of the
/// streams that ended in the second.
pub(crate) const STREAM_COLUMNS: [&str; 1] = ["stream_events"];

/// Writes a header (second, duration_s, completed, ... target) and one row
/// per second of measurement;
/// `errors` counts requests without a usable response in that second.
/// A WebSocket run adds `ws_messages_sent,ws_messages_received`, a run
/// watching streams `stream_events` (other runs' files are unchanged).
pub fn render_csv_timeseries(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let (websocket, streams) = (result.websocket.is_some(), result.stream.is_some());
    let mut columns = TIMESERIES_COLUMNS.to_vec();
    if websocket {
        columns.extend(WEBSOCKET_COLUMNS);
    }
    if streams {
        columns.extend(STREAM_COLUMNS);
    }
    writeln!(out, "{}", columns.join(","))?;
    let ms = |us: u64| us as f64 / 1000.0;
    for p in &result.timeseries {
        write!(
            out,
            "{},{},{},{},{},{:.3},{},{},{},{:.3},{:.3},{:.3},{:.3},{}",
            p.second,
            p.duration_s,
            p.completed,
            p.success,
            p.errors.values().sum::<u64>(),
            p.rps,
            p.bytes_received,
            p.in_flight,
            p.open_connections,
            ms(p.p50_us),
            ms(p.p90_us),
            ms(p.p99_us),
            ms(p.max_us),
            p.target
        )?;
        if websocket {
            let messages = p.websocket.unwrap_or_default();
            write!(out, ",{},{}", messages.sent, messages.received)?;
        }
        if streams {
            write!(out, ",{}", p.stream_events.unwrap_or(0))?;
        }
        writeln!(out)?;
    }
    Ok(())
}
