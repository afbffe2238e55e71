//! The text of an experiment (`stampede experiment`): one row per variant
//! (runs, goodput with its interval, p50, p99, errors, the server's cost per
//! request, its busiest thread), each variant's client sockets (RTT and
//! retransmits) and bottleneck, the failed runs,
//! and the pairwise verdicts in words under the table. Under a sweep, the
//! sweep part (experiment_sweep_text.rs) comes first and the table is at the
//! common load.

use stampede_analysis::{ExperimentDocument, ExperimentMetric as Metric, ExperimentVerdict};
use std::fmt::Write;

/// The figures a verdict line names when they differ, in this order.
const SPOKEN: [Metric; 10] = [
    Metric::Capacity,
    Metric::Knee,
    Metric::Goodput,
    Metric::P50,
    Metric::P99,
    Metric::ErrorRate,
    Metric::CpuUsPerRequest,
    Metric::WriteBytesPerRequest,
    Metric::WriteSyscallsPerRequest,
    Metric::CtxSwitchesPerRequest,
];

/// The table, the failures and the verdicts.
pub fn render_experiment_text(doc: &ExperimentDocument) -> String {
    let mut out = crate::experiment_sweep_text::render_sweep_part(doc);
    let width = crate::experiment_sweep_text::variant_width(doc);
    let _ = writeln!(
        out,
        "{:<width$}  {:>4}  {:>26}  {:>8}  {:>8}  {:>7}  {:>11}  {:>10}  {:>8}  {:>9}  busiest thread",
        "variant", "runs", "goodput req/s (95% CI)", "p50 ms", "p99 ms", "errors", "CPU µs/req",
        "B writ/req", "writes/r", "ctx sw/r"
    );
    for v in &doc.variants {
        let mean = |m: Metric| v.estimate(m).map(|e| e.mean);
        let fixed = |m: Metric, digits: usize| {
            mean(m).map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
        };
        let goodput = match v.estimate(Metric::Goodput) {
            Some(e) => match (e.ci_low, e.ci_high) {
                (Some(lo), Some(hi)) => format!("{:.0} ({:.0}–{:.0})", e.mean, lo, hi),
                _ => format!("{:.0}", e.mean),
            },
            None => "-".into(),
        };
        let errors = mean(Metric::ErrorRate).map_or("-".into(), |x| format!("{x:.2}%"));
        let busiest = v
            .server
            .as_ref()
            .and_then(|s| {
                let top = s.threads.first()?;
                Some(format!(
                    "{:.0}% of a core, {:.0}% of {} threads",
                    top.cpu_pct,
                    top.share_pct,
                    s.threads.len()
                ))
            })
            .unwrap_or_else(|| "-".into());
        let runs = format!("{}/{}", v.runs.len(), v.runs.len() + v.failures.len());
        let _ = writeln!(
            out,
            "{:<width$}  {:>4}  {:>26}  {:>8}  {:>8}  {:>7}  {:>11}  {:>10}  {:>8}  {:>9}  {}",
            v.name,
            runs,
            goodput,
            fixed(Metric::P50, 2),
            fixed(Metric::P99, 2),
            errors,
            fixed(Metric::CpuUsPerRequest, 1),
            fixed(Metric::WriteBytesPerRequest, 0),
            fixed(Metric::WriteSyscallsPerRequest, 2),
            fixed(Metric::CtxSwitchesPerRequest, 2),
            busiest
        );
    }
    for v in &doc.variants {
        if let Some(tcp) = v.server.as_ref().and_then(|s| s.client_tcp.as_ref()) {
            let words = crate::experiment_sweep_text::client_tcp_words(tcp);
            let _ = writeln!(out, "{}: {words}", v.name);
        }
    }
    for v in &doc.variants {
        for b in v.server.iter().flat_map(|s| &s.bottleneck) {
            let _ = writeln!(out, "{}: bottleneck: {}", v.name, b.cause);
        }
    }
    for v in &doc.variants {
        for failure in &v.failures {
            let _ = writeln!(
                out,
                "{} round {}: failed: {}",
                v.name,
                failure.round + 1,
                failure.reason
            );
            for line in &failure.stderr {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    let order = if doc.order_kind == "random" {
        format!("random, seed {}", doc.seed.unwrap_or_default())
    } else {
        doc.order_kind.clone()
    };
    let _ = writeln!(out, "order: {order}");
    if doc.interrupted {
        let _ = writeln!(
            out,
            "interrupted: the runs after the last one above are missing"
        );
    }
    let _ = writeln!(out);
    for line in verdict_lines(doc) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// One sentence per variant after the first: what changed against the
/// first, with the interval, and what did not.
pub fn verdict_lines(doc: &ExperimentDocument) -> Vec<String> {
    let confidence = (doc.confidence * 100.0).round();
    doc.variants
        .iter()
        .skip(1)
        .filter_map(|b| {
            let of_b: Vec<&ExperimentVerdict> =
                doc.verdicts.iter().filter(|v| v.b == b.name).collect();
            let a = &of_b.first()?.a;
            let mut changed = Vec::new();
            let mut same = Vec::new();
            let mut unknown = Vec::new();
            for metric in SPOKEN {
                let Some(v) = of_b.iter().find(|v| v.metric == metric) else {
                    continue;
                };
                match v.same {
                    Some(true) => same.push(metric.words()),
                    Some(false) => changed.push(change_words(v, confidence)),
                    None => unknown.push(change_words(v, confidence)),
                }
            }
            changed.extend(unknown);
            let mut line = format!("{} against {a}: ", b.name);
            if changed.is_empty() {
                line.push_str("no difference");
                if !same.is_empty() {
                    let _ = write!(line, " ({})", same.join(", "));
                }
            } else {
                line.push_str(&changed.join(", "));
                if !same.is_empty() {
                    let _ = write!(line, "; no difference in {}", same.join(", "));
                }
            }
            Some(line)
        })
        .collect()
}

/// "goodput +45.0% (95% CI +40.1 to +50.2%)", or for a cost in its unit
/// "written per request +118 B (95% CI +116 to +120 B)".
fn change_words(v: &ExperimentVerdict, confidence: f64) -> String {
    let name = v.metric.words();
    let absolute = matches!(
        v.metric,
        Metric::P50
            | Metric::P99
            | Metric::ErrorRate
            | Metric::WriteBytesPerRequest
            | Metric::WriteSyscallsPerRequest
            | Metric::CtxSwitchesPerRequest
    );
    if absolute || v.change_pct.is_none() {
        let unit = match v.metric.unit() {
            "" => String::new(),
            "%" => " points".to_string(),
            u => format!(" {u}"),
        };
        let interval = match (v.ci_low, v.ci_high) {
            (Some(lo), Some(hi)) => {
                format!(" ({confidence}% CI {} to {}{unit})", signed(lo), signed(hi))
            }
            _ => " (one round: no interval)".to_string(),
        };
        return format!("{name} {}{unit}{interval}", signed(v.change));
    }
    let pct = v.change_pct.unwrap_or_default();
    let interval = match (v.ci_low_pct, v.ci_high_pct) {
        (Some(lo), Some(hi)) => format!(" ({confidence}% CI {lo:+.1} to {hi:+.1}%)"),
        _ => " (one round: no interval)".to_string(),
    };
    format!("{name} {pct:+.1}%{interval}")
}

/// A signed figure to three significant digits, no fewer whole digits:
/// +118, +1.02, +0.000312 (a small cost per request stays visible).
fn signed(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value:+}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let digits = (2 - magnitude).clamp(0, 9) as usize;
    format!("{value:+.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_analysis::{VariantResult, EXPERIMENT_SCHEMA};

    fn verdict(b: &str, metric: Metric, change: f64, low: f64, high: f64) -> ExperimentVerdict {
        ExperimentVerdict {
            a: "threads=1".into(),
            b: b.into(),
            metric,
            change,
            ci_low: Some(low),
            ci_high: Some(high),
            change_pct: Some(change / 10.0),
            ci_low_pct: Some(low / 10.0),
            ci_high_pct: Some(high / 10.0),
            same: Some(low <= 0.0 && 0.0 <= high),
        }
    }

    fn doc(verdicts: Vec<ExperimentVerdict>) -> ExperimentDocument {
        let variant = |name: &str| VariantResult {
            name: name.into(),
            ..VariantResult::default()
        };
        ExperimentDocument {
            schema: EXPERIMENT_SCHEMA.into(),
            server_template: "srv --threads {threads}".into(),
            load: vec![],
            repeat: 3,
            order_kind: "interleaved".into(),
            seed: None,
            order: vec![],
            variants: vec![variant("threads=1"), variant("threads=2")],
            verdicts,
            confidence: 0.95,
            interrupted: false,
            common_load: None,
        }
    }

    #[test]
    fn a_verdict_says_what_changed_and_what_did_not() {
        let lines = verdict_lines(&doc(vec![
            verdict("threads=2", Metric::Goodput, 450.0, 400.0, 500.0),
            verdict("threads=2", Metric::P99, -1.5, -2.0, 0.5),
            verdict(
                "threads=2",
                Metric::WriteBytesPerRequest,
                118.0,
                116.0,
                120.0,
            ),
        ]));
        assert_eq!(
            lines,
            vec![
                "threads=2 against threads=1: goodput +45.0% (95% CI +40.0 to +50.0%), \
                 written per request +118 B (95% CI +116 to +120 B); no difference in p99"
            ]
        );
    }

    #[test]
    fn small_costs_keep_three_digits() {
        assert_eq!(signed(118.4), "+118");
        assert_eq!(signed(-1.0234), "-1.02");
        assert_eq!(signed(0.000_312_4), "+0.000312");
        assert_eq!(signed(0.0), "+0");
    }

    #[test]
    fn no_change_is_no_difference() {
        let lines = verdict_lines(&doc(vec![verdict(
            "threads=2",
            Metric::Goodput,
            5.0,
            -10.0,
            20.0,
        )]));
        assert_eq!(
            lines,
            vec!["threads=2 against threads=1: no difference (goodput)"]
        );
        let text = render_experiment_text(&doc(vec![]));
        assert!(text.starts_with("variant"), "{text}");
        assert!(text.contains("order: interleaved"), "{text}");
    }
}
