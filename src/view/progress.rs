//! The plain progress line on stderr: rewritten in place on a terminal, one
//! line every few seconds otherwise (no escape codes in CI logs or pipes).
//! It reads the same snapshot stream as every other view.

use stampede_engine::Observer;
use stampede_metrics::Snapshot;
use stampede_report::{format_count, format_latency_us};
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// A rate to read at a glance: whole requests per second from 100 up (the
/// decimals of "67,295.00 req/s" are noise), one decimal below (a paced
/// `-r 5` run).
pub fn glance_rate(rate: f64) -> String {
    if rate >= 99.95 {
        format_count(rate.round() as u64)
    } else {
        format!("{rate:.1}")
    }
}

pub struct ProgressLine {
    terminal: bool,
    every: Duration,
    /// The planned length, for "elapsed/total".
    planned: Option<Duration>,
    last_print: Duration,
    last_completed: u64,
    printed_in_place: bool,
}

impl ProgressLine {
    pub fn new(planned: Option<Duration>) -> ProgressLine {
        let terminal = std::io::stderr().is_terminal();
        ProgressLine {
            terminal,
            every: if terminal {
                Duration::from_millis(500)
            } else {
                Duration::from_secs(5)
            },
            planned,
            last_print: Duration::ZERO,
            last_completed: 0,
            printed_in_place: false,
        }
    }

    /// Ends the in-place line so the summary starts on a fresh one.
    pub fn finish(&mut self) {
        if self.printed_in_place {
            eprintln!();
            self.printed_in_place = false;
        }
    }
}

impl Observer for ProgressLine {
    fn on_snapshot(&mut self, elapsed: Duration, _interval: &Snapshot, total: &Snapshot) {
        if elapsed < self.last_print + self.every {
            return;
        }
        let completed = total.counters.completed();
        let window = (elapsed - self.last_print).as_secs_f64();
        let rate = (completed - self.last_completed) as f64 / window.max(1e-3);
        self.last_print = elapsed;
        self.last_completed = completed;
        let planned = self
            .planned
            .map(|p| format!("/{:.0}s", p.as_secs_f64()))
            .unwrap_or_default();
        // No response yet: a p99 of 0 would read as a very fast server.
        let p99 = match completed {
            0 => "—".to_string(),
            _ => format_latency_us(total.latency.value_at_quantile(0.99) as f64),
        };
        let line = format!(
            "[{:.1}s{planned}] {} responses, {} req/s now, p99 {}, {} errors",
            elapsed.as_secs_f64(),
            format_count(completed),
            glance_rate(rate),
            p99,
            format_count(total.counters.error_total()),
        );
        let mut err = std::io::stderr().lock();
        let _ = if self.terminal {
            self.printed_in_place = true;
            write!(err, "\r\x1b[2K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }
}
