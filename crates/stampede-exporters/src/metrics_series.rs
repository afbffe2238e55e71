//! The one list of series a [`Reading`] shows: names, help, kinds, labels
//! and values. `--metrics` (metrics_endpoint.rs, the text formats) and
//! `--remote-write` (remote_write.rs, protobuf) both encode this list, so
//! a scrape and a push always carry the same series.

use crate::metrics_feed::{Reading, LATENCY_BUCKETS_S, QUANTILES};

pub use crate::metrics_family::{Family, Labels, Values};

/// The labels on every series of a run: `run_id`, and `agent` (its index)
/// when the run is one agent of several.
pub fn run_labels(run_id: &str, agent: Option<u32>) -> Labels {
    let mut labels = vec![("run_id", run_id.to_string())];
    if let Some(index) = agent {
        labels.push(("agent", index.to_string()));
    }
    labels
}

/// Every family of a reading, in exposition order.
pub fn families(reading: &Reading) -> Vec<Family> {
    let none = Vec::new;
    let outcome_labels = |outcome: &str, code: &String| {
        vec![("outcome", outcome.to_string()), ("code", code.clone())]
    };
    // A mix's counts carry the target (its 1-based place in the targets
    // file or the scenario, unique), its request and its step's name; they
    // add up to the run's, which are then not repeated (a sum over the
    // family stays the run's total).
    let requests = if reading.per_target.is_empty() {
        reading
            .requests
            .iter()
            .map(|(outcome, code, count)| (outcome_labels(outcome, code), *count))
            .collect()
    } else {
        reading
            .per_target
            .iter()
            .enumerate()
            .flat_map(|(index, (mix, counts))| {
                counts.iter().map(move |(outcome, code, count)| {
                    let mut labels = vec![
                        ("target", (index + 1).to_string()),
                        ("request", mix.request.clone()),
                    ];
                    if let Some(step) = &mix.step {
                        labels.push(("step", step.clone()));
                    }
                    labels.extend(outcome_labels(outcome, code));
                    (labels, *count)
                })
            })
            .collect()
    };
    let mut families = vec![Family {
        name: "stampede_requests",
        help: "Finished requests by outcome: success, failed_status and check_failed by status \
               code, error by class; per target (its request, its step) in a mix",
        values: Values::Counter(requests),
    }];
    let counters = [
        (
            "stampede_bytes_received",
            "All bytes read from the target",
            reading.bytes_received,
        ),
        (
            "stampede_connections_opened",
            "TCP connections established",
            reading.connections_opened,
        ),
        (
            "stampede_late_sends",
            "Open model: requests sent over 1 ms late",
            reading.late_sends,
        ),
    ];
    families.extend(counters.into_iter().map(|(name, help, value)| Family {
        name,
        help,
        values: Values::Counter(vec![(none(), value)]),
    }));
    let mut gauges = vec![
        (
            "stampede_connections_open",
            "Connections open now",
            reading.open_connections as f64,
        ),
        (
            "stampede_in_flight",
            "Requests in flight now",
            reading.in_flight as f64,
        ),
        (
            "stampede_rate",
            "Completed responses per second over the latest interval (after the run: its average)",
            reading.rate,
        ),
    ];
    if let Some(rate) = reading.target_rate {
        gauges.push((
            "stampede_target_rate",
            "Open model: the planned requests per second now",
            rate,
        ));
    }
    if let Some(lateness) = reading.send_lateness_p99_s {
        gauges.push((
            "stampede_send_lateness_seconds",
            "Open model: p99 of how late every send was (intended instant to send), so far",
            lateness,
        ));
    }
    families.extend(gauges.into_iter().map(|(name, help, value)| Family {
        name,
        help,
        values: Values::Gauge(vec![(none(), value)]),
    }));
    let buckets = if reading.latency_buckets.is_empty() {
        LATENCY_BUCKETS_S
            .iter()
            .map(|bound| (*bound, 0))
            .chain(std::iter::once((f64::INFINITY, 0)))
            .collect()
    } else {
        reading.latency_buckets.clone()
    };
    families.push(Family {
        name: "stampede_latency_seconds",
        help: "Latency from the intended send to the complete response",
        values: Values::Histogram {
            sum: reading.latency_sum_s,
            count: reading.latency_count,
            buckets,
        },
    });
    families.push(Family {
        name: "stampede_latency_quantile_seconds",
        help: "Latency quantiles of the whole run so far, from its HDR histogram",
        values: Values::Gauge(
            QUANTILES
                .iter()
                .zip(&reading.latency_quantiles_s)
                .map(|((_, label), value)| (vec![("quantile", label.to_string())], *value))
                .collect(),
        ),
    });
    if let Some(ws) = &reading.websocket {
        families.extend(crate::metrics_protocols::websocket_families(ws));
    }
    if let Some(stream) = &reading.stream {
        families.extend(crate::metrics_protocols::stream_families(stream));
    }
    families
}

/// A histogram bound as the OpenMetrics encoding writes it in `le`
/// (prometheus-client formats with dtoa: `0.0005`, `1.0`, `+Inf`), which is
/// what Prometheus stores when it scrapes `--metrics`, so a pushed series and
/// a scraped one are the same series.
pub fn le_label(bound: f64) -> String {
    if bound == f64::INFINITY {
        "+Inf".to_string()
    } else {
        format!("{bound:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_written_as_the_text_encoder_writes_them() {
        let written: Vec<String> = LATENCY_BUCKETS_S.iter().map(|b| le_label(*b)).collect();
        assert_eq!(written[0], "0.0005");
        assert_eq!(written[10], "1.0");
        assert_eq!(written[13], "10.0");
        assert_eq!(le_label(f64::INFINITY), "+Inf");
    }
}
