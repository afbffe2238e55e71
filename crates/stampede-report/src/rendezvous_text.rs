//! The rendezvous lines of the text summary: for each scenario step with a
//! `rendezvous` (JMeter's Synchronizing Timer), its batches, how close
//! together each batch sent (its spread from first to last send) and,
//! beside it, the step's response times.

use crate::format::{format_count, format_latency_us};
use stampede_metrics::{RendezvousResult, RunResult};
use std::io::{self, Write};

/// One line per rendezvous: `step buy: 4 batches of 5 (1 by timeout), send
/// spread p50 …, p99 …, max …; response p50 …, p99 …`. Batches smaller than
/// asked (a timeout, users finishing, the end of the run) say so: `3
/// batches of 2 to 6 users, 10 asked (12 sent, 2 by timeout)`.
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
        n => format!("{} by timeout", format_count(n)),
    };
    let full = point.smallest == point.users && point.largest == point.users;
    let batches = match (point.batches, full) {
        (0, _) => format!("no batch released, {} asked", format_count(point.users)),
        (_, true) => match by_timeout.is_empty() {
            true => format!(
                "{} batches of {}",
                format_count(point.batches),
                format_count(point.users)
            ),
            false => format!(
                "{} batches of {} ({by_timeout})",
                format_count(point.batches),
                format_count(point.users)
            ),
        },
        (_, false) => {
            let sizes = match point.smallest == point.largest {
                true => format_count(point.smallest),
                false => format!(
                    "{} to {}",
                    format_count(point.smallest),
                    format_count(point.largest)
                ),
            };
            let sent = format!("{} sent", format_count(point.sent));
            let detail = match by_timeout.is_empty() {
                true => sent,
                false => format!("{sent}, {by_timeout}"),
            };
            format!(
                "{} batches of {sizes} users, {} asked ({detail})",
                format_count(point.batches),
                format_count(point.users)
            )
        }
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
        "step {}: {batches}, send spread p50 {}, p99 {}, max {}{response}",
        point.step,
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
        let point = |users, sizes: &[u64], timed_out| RendezvousResult {
            step: "buy".into(),
            users,
            batches: sizes.len() as u64,
            sent: sizes.iter().sum(),
            smallest: sizes.iter().copied().min().unwrap_or(0),
            largest: sizes.iter().copied().max().unwrap_or(0),
            timed_out,
            spread_us: SpreadSummary {
                p50: 300,
                p99: 900,
                max: 1200,
            },
        };
        result.rendezvous.push(point(5, &[5, 5, 5, 5], 1));
        let line = &describe_rendezvous(&result)[0];
        assert!(
            line.starts_with("step buy: 4 batches of 5 (1 by timeout), send spread p50 "),
            "{line}"
        );
        assert!(line.contains("max 1.20ms"), "{line}");
        // What was released, not only what was asked: 6 users, batches of 4.
        result.rendezvous[0] = point(4, &[4, 2], 0);
        let line = &describe_rendezvous(&result)[0];
        assert!(
            line.starts_with("step buy: 2 batches of 2 to 4 users, 4 asked (6 sent), send"),
            "{line}"
        );
        result.rendezvous[0] = point(10, &[4, 6, 2], 2);
        let line = &describe_rendezvous(&result)[0];
        assert!(
            line.starts_with(
                "step buy: 3 batches of 2 to 6 users, 10 asked (12 sent, 2 by timeout), send"
            ),
            "{line}"
        );
        result.rendezvous[0] = point(6, &[], 0);
        let line = &describe_rendezvous(&result)[0];
        assert!(
            line.starts_with("step buy: no batch released, 6 asked, send"),
            "{line}"
        );
    }
}
