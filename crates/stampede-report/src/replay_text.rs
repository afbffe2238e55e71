//! The replay lines of the text summary (`stampede replay`):
//! the log's lines read, skipped and sent, then one line per URI pattern
//! with its count, the statuses the log recorded and, where the log had
//! `$request_time`, its recorded p50 and p99, and where the pattern had
//! figures of its own, the replayed p50 and p99.

use crate::format::{format_count, format_latency_us};
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// The most patterns listed; the rest are counted in one line.
const PATTERNS_SHOWN: usize = 20;

/// `Replay` and its patterns, when the run replayed a log.
pub(crate) fn render_replay(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(replay) = &result.replay else {
        return Ok(());
    };
    let speed = replay
        .speed
        .map_or("as fast as the connections allow".to_string(), |k| {
            format!("at {k}x the recorded pace")
        });
    writeln!(
        out,
        "  Replay        {} lines read, {} skipped; {} requests sent {speed}",
        format_count(replay.lines_read),
        format_count(replay.lines_skipped),
        format_count(replay.requests_sent),
    )?;
    for group in replay.groups.iter().take(PATTERNS_SHOWN) {
        let statuses: Vec<String> = group
            .recorded_status
            .iter()
            .map(|(code, n)| format!("{code}: {}", format_count(*n)))
            .collect();
        let recorded = group.recorded.map_or(String::new(), |r| {
            format!(
                "; recorded p50 {}, p99 {}",
                format_latency_us(r.p50_us as f64),
                format_latency_us(r.p99_us as f64)
            )
        });
        let replayed = group.latency_us.as_ref().map_or(String::new(), |l| {
            format!(
                "; replayed p50 {}, p99 {}",
                format_latency_us(l.p50 as f64),
                format_latency_us(l.p99 as f64)
            )
        });
        writeln!(
            out,
            "    {:<32} {:>8}  logged status {}{recorded}{replayed}",
            group.pattern,
            format_count(group.count),
            if statuses.is_empty() {
                "-".to_string()
            } else {
                statuses.join(", ")
            },
        )?;
    }
    let more = replay.groups.len().saturating_sub(PATTERNS_SHOWN);
    if more > 0 {
        writeln!(out, "    ... {more} more patterns (all in the JSON result)")?;
    }
    Ok(())
}
