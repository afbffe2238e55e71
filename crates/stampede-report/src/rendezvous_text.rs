//! The rendezvous lines of the text summary: for each scenario step with a
//! `rendezvous` (JMeter's Synchronizing Timer), its batches, how close
//! together each batch sent (its spread from first to last send) and,
//! beside it, the step's response times.

use crate::format::{format_count, format_latency_us};
use stampede_metrics::{RendezvousResult, RunResult};
use std::io::{self, Write};

/// One line per rendezvous: `step buy: 4 batches of 5 (1 by timeout), send
/// spread p50 …, p99 …, max …; response p50 …, p99 …`.
pub fn describe_rendezvous(result: &RunResult) -> Vec<String> {
    result
        .rendezvous
        .iter()
        .map(|point| describe(result, point))
        .collect()
}

fn describe(result: &RunResult, point: &RendezvousResult) -> String {
    let by_timeout = match point.timed_out {
        0 => String::new(),
        n => format!(" ({} by timeout)", format_count(n)),
    };
    let s = &point.spread_us;
    let step = result
        .targets
        .iter()
        .find(|t| t.name.as_deref() == Some(point.step.as_str()))
        .filter(|t| t.finished > 0);
    let response = step.map_or(String::new(), |t| {
        format!(
            "; response p50 {}, p99 {}",
            format_latency_us(t.latency_us.p50 as f64),
            format_latency_us(t.latency_us.p99 as f64)
        )
    });
    format!(
        "step {}: {} batches of {}{by_timeout}, send spread p50 {}, p99 {}, max {}{response}",
        point.step,
        format_count(point.batches),
        format_count(point.users),
        format_latency_us(s.p50 as f64),
        format_latency_us(s.p99 as f64),
        format_latency_us(s.max as f64),
    )
}

/// `Rendezvous` lines, when a step has one.
pub(crate) fn render_rendezvous(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    for line in describe_rendezvous(result) {
        writeln!(out, "  Rendezvous    {line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_metrics::SpreadSummary;

    #[test]
    fn a_rendezvous_line_gives_batches_spread_and_nothing_without_one() {
        let mut result: RunResult =
            serde_json::from_str(include_str!("html/testdata/run-503.json"))
                .expect("fixture parses");
        assert!(describe_rendezvous(&result).is_empty());
        result.rendezvous.push(RendezvousResult {
            step: "buy".into(),
            users: 5,
            batches: 4,
            timed_out: 1,
            spread_us: SpreadSummary {
                p50: 300,
                p99: 900,
                max: 1200,
            },
        });
        let line = &describe_rendezvous(&result)[0];
        assert!(
            line.starts_with("step buy: 4 batches of 5 (1 by timeout), send spread p50 "),
            "{line}"
        );
        assert!(line.contains("max 1.20ms"), "{line}");
    }
}
