//! The tables of the run report: the `--targets` mix, percentiles, where
//! the time went (connect, TLS, waiting, service), request counts, and the
//! plan and environment (shared with the sweep and compare pages). Latency
//! columns are written in one unit each, named in the header.

use super::page::Page;
use super::units::LatencyUnit;
use crate::format::{format_bytes, format_count, format_rate};
use stampede_metrics::RunResult;

/// One row per request of a `--targets` mix.
pub(crate) fn targets_section(page: &mut Page, result: &RunResult) {
    if result.targets.is_empty() {
        return;
    }
    page.heading("Targets");
    let t = &result.targets;
    let p50 = LatencyUnit::for_column(&column(t, |t| t.latency_us.p50));
    let p99 = LatencyUnit::for_column(&column(t, |t| t.latency_us.p99));
    let max = LatencyUnit::for_column(&column(t, |t| t.latency_us.max));
    let rows: Vec<Vec<String>> = t
        .iter()
        .map(|t| {
            vec![
                match &t.name {
                    Some(step) => format!("{step}: {} {}", t.method, t.url),
                    None => format!("{} {}", t.method, t.url),
                },
                t.weight.to_string(),
                format_count(t.finished),
                format_rate(t.goodput),
                // The totals' terms, as in the text report: failed
                // statuses (a 503) and checks apart from transport errors.
                format_count(t.failed_status + t.check_failed),
                format_count(t.errors),
                p50.format(t.latency_us.p50 as f64),
                p99.format(t.latency_us.p99 as f64),
                max.format(t.latency_us.max as f64),
            ]
        })
        .collect();
    let headers = [
        "target".to_string(),
        "weight".to_string(),
        "finished".to_string(),
        "goodput (req/s)".to_string(),
        "failed".to_string(),
        "errors".to_string(),
        p50.header("p50"),
        p99.header("p99"),
        max.header("max"),
    ];
    page.table(&as_str(&headers), &rows);
}

pub(crate) fn as_str(headers: &[String]) -> Vec<&str> {
    headers.iter().map(String::as_str).collect()
}

fn column<T>(rows: &[T], value: impl Fn(&T) -> u64) -> Vec<f64> {
    rows.iter().map(|row| value(row) as f64).collect()
}

/// Percentiles of the whole run, in one unit chosen by the largest (max).
pub(crate) fn percentile_table(result: &RunResult) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rows = crate::text::percentiles(result).to_vec();
    rows.push(("max", result.latency_us.max));
    let unit = LatencyUnit::for_column(&column(&rows, |(_, us)| *us));
    let rows = rows
        .into_iter()
        .map(|(label, us)| vec![label.to_string(), unit.format(us as f64)])
        .collect();
    (vec!["percentile".to_string(), unit.header("latency")], rows)
}

/// Where the time went (connect, TLS, waiting, service, total): each
/// column in one unit, chosen by the column's largest value.
pub(crate) fn breakdown_table(result: &RunResult) -> (Vec<String>, Vec<Vec<String>>) {
    let b = &result.breakdown;
    let phases: Vec<(&str, &stampede_metrics::TimingSummary)> = [
        ("connect", &b.connect),
        ("TLS", &b.tls),
        ("QUIC handshake", &b.quic),
        ("0-RTT", &b.zero_rtt),
        ("waiting", &b.waiting),
        ("service", &b.service),
        ("total", &b.total),
    ]
    .into_iter()
    // Phases a run did not have (TLS, QUIC) are left out; connect too
    // over HTTP/3, whose QUIC handshake is the whole opening.
    .filter(|(label, t)| {
        let optional = ["TLS", "QUIC handshake", "0-RTT"].contains(label)
            || (*label == "connect" && (b.quic.count > 0 || b.zero_rtt.count > 0));
        !optional || t.count > 0
    })
    .collect();
    let unit = |value: fn(&stampede_metrics::TimingSummary) -> f64| {
        let values: Vec<f64> = phases.iter().map(|(_, t)| value(t)).collect();
        LatencyUnit::for_column(&values)
    };
    let min = unit(|t| t.min as f64);
    let mean = unit(|t| t.mean);
    let sd = unit(|t| t.stdev);
    let median = unit(|t| t.median as f64);
    let max = unit(|t| t.max as f64);
    let rows = phases
        .iter()
        .map(|(label, t)| {
            vec![
                label.to_string(),
                min.format(t.min as f64),
                mean.format(t.mean),
                sd.format(t.stdev),
                median.format(t.median as f64),
                max.format(t.max as f64),
                format_count(t.count),
            ]
        })
        .collect();
    let headers = vec![
        String::new(),
        min.header("min"),
        mean.header("mean"),
        sd.header("±sd"),
        median.header("median"),
        max.header("max"),
        "count".to_string(),
    ];
    (headers, rows)
}

pub(crate) fn request_rows(result: &RunResult) -> Vec<Vec<String>> {
    let r = &result.requests;
    let mut rows = vec![
        vec!["sent".into(), format_count(r.sent)],
        vec!["success (< 400)".into(), format_count(r.success)],
        vec![
            "failed status (>= 400)".into(),
            format_count(r.failed_status),
        ],
        vec!["transport errors".into(), format_count(r.errors)],
        vec!["unfinished".into(), format_count(r.unfinished)],
        vec![
            "connections opened".into(),
            format_count(result.connections.opened),
        ],
        vec![
            "reconnects".into(),
            format_count(result.connections.reconnects),
        ],
    ];
    if result.connections.planned_reconnects > 0 {
        rows.push(vec![
            "planned reconnects".into(),
            format_count(result.connections.planned_reconnects),
        ]);
    }
    if let Some(n) = r.check_failed {
        rows.insert(3, vec!["failed a check".into(), format_count(n)]);
    }
    if let Some(log) = &result.request_log {
        rows.push(vec!["request log lines".into(), format_count(log.written)]);
        rows.push(vec![
            "request log dropped".into(),
            format_count(log.dropped),
        ]);
    }
    rows
}

/// The plan and the machine, as setting/value rows.
pub(crate) fn plan_rows(result: &RunResult) -> Vec<Vec<String>> {
    let p = &result.plan;
    let e = &result.environment;
    let mut rows: Vec<(&str, String)> = vec![
        ("target", format!("{} {}", p.method, p.url)),
        ("date", result.started_at.clone()),
        ("tool", format!("stampede {}", result.version)),
        ("model", p.model.clone()),
        ("connections", p.connections.to_string()),
        ("threads", p.threads.to_string()),
    ];
    if let Some(rate) = p.rate {
        let arrival = p.arrival.clone().unwrap_or_default();
        rows.push(("rate", format!("{} req/s ({arrival})", format_rate(rate))));
    }
    if let Some(d) = p.duration_s {
        rows.push(("duration", format!("{d}s")));
    }
    if let Some(n) = p.requests {
        rows.push(("requests", format_count(n)));
    }
    if !p.stages.is_empty() {
        let stages: Vec<String> = p
            .stages
            .iter()
            .map(|s| format!("{}s:{}", s.duration_s, s.target))
            .collect();
        rows.push(("stages", stages.join(", ")));
    }
    if let Some(w) = p.warmup_s {
        rows.push(("warm-up", format!("{w}s")));
    }
    rows.extend([
        ("keep-alive", p.keepalive.to_string()),
        ("HTTP version", p.http_version_number().to_string()),
        (
            "timeouts",
            format!(
                "connect {}s, response {}s",
                p.connect_timeout_s, p.timeout_s
            ),
        ),
        ("request body", format_bytes(p.body_bytes as f64)),
        ("host", e.hostname.clone()),
        ("OS", format!("{} {}", e.os, e.kernel)),
        ("CPU", format!("{} × {}", e.cpus, e.cpu_model)),
        (
            "open files",
            format!("{} (hard {})", e.rlimit_nofile, e.rlimit_nofile_max),
        ),
    ]);
    rows.into_iter()
        .map(|(k, v)| vec![k.to_string(), v])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_503() -> RunResult {
        RunResult::from_json(include_str!("testdata/run-503.json")).expect("fixture parses")
    }

    #[test]
    fn detail_tables_write_each_column_in_one_unit() {
        let result = run_503();
        let (headers, rows) = percentile_table(&result);
        assert_eq!(headers[1], "latency (ms)", "max 5.86 ms decides");
        assert_eq!(rows[0], ["50%", "0.25"]);
        assert_eq!(rows[10], ["max", "5.86"]);
        let (headers, rows) = breakdown_table(&result);
        assert_eq!(headers[1], "min (µs)");
        assert_eq!(headers[5], "max (ms)");
        let connect = &rows[0];
        assert_eq!(connect[0], "connect");
        assert_eq!(connect[1], result.breakdown.connect.min.to_string());
    }
}
