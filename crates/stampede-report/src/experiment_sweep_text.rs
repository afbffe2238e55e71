//! The sweep part of an experiment's text (`experiment -- sweep`): one row
//! per variant with its capacity (and interval over the rounds), its knee
//! and its USL fit; then each variant's steps, one line each with the
//! server's cost, the client's sockets' RTT and retransmits and the
//! bottleneck of that step; then the knee in words
//! with the bottleneck the counters name there.

use crate::format::format_count;
use crate::sweep_text::describe_load;
use stampede_analysis::{
    Bottleneck, ExperimentDocument, ExperimentMetric as Metric, KneeSummary, VariantResult,
};
use stampede_metrics::ClientTcp;
use std::fmt::Write;

/// The width of the variant column: the longest name, at least the header's.
pub(crate) fn variant_width(doc: &ExperimentDocument) -> usize {
    doc.variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(7)
        .max(7)
}

/// The sweep table, the step lines and the knee lines; empty when the
/// experiment's load was a fixed run.
pub fn render_sweep_part(doc: &ExperimentDocument) -> String {
    let mut out = String::new();
    let Some(common) = doc.common_load else {
        return out;
    };
    let width = variant_width(doc);
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>28}  {:>30}  {:>7}  {:>7}  {:>14}",
        "variant",
        "rounds",
        "capacity req/s (95% CI)",
        "knee req/s",
        "USL σ",
        "USL κ",
        "USL peak req/s"
    );
    for v in &doc.variants {
        let knee = v
            .knee
            .as_ref()
            .map(|k| {
                format!(
                    "{:.0} ({}, {}/{})",
                    k.goodput,
                    describe_load(k.load),
                    k.rounds,
                    k.of_rounds
                )
            })
            .unwrap_or_else(|| "-".into());
        let (sigma, kappa) = usl_means(v);
        let _ = writeln!(
            out,
            "{:<width$}  {:>6}  {:>28}  {:>30}  {:>7}  {:>7}  {:>14}",
            v.name,
            format!("{}/{}", v.sweeps.len(), v.sweeps.len() + v.failures.len()),
            with_interval(v, Metric::Capacity),
            knee,
            sigma.map_or("-".into(), |s| format!("{s:.4}")),
            kappa.map_or("-".into(), |k| format!("{k:.5}")),
            v.estimate(Metric::UslPeak)
                .map_or("-".into(), |e| format!("{:.0}", e.mean)),
        );
    }
    for v in &doc.variants {
        for step in &v.steps {
            let mut line = format!(
                "{}: {}: goodput {:.0} req/s, p99 {:.2} ms",
                v.name,
                describe_load(step.load),
                step.goodput,
                step.p99_ms
            );
            if let Some(server) = &step.server {
                let _ = write!(line, ", CPU {:.1} µs/req", server.cpu_us_per_request);
                if let Some(top) = server.threads.first() {
                    let _ = write!(line, ", busiest thread {:.0}% of a core", top.cpu_pct);
                }
                if let Some(tcp) = &server.client_tcp {
                    let _ = write!(line, ", {}", client_tcp_words(tcp));
                }
            }
            if !step.bottleneck.is_empty() {
                let _ = write!(line, "; bottleneck: {}", causes(&step.bottleneck));
            }
            let _ = writeln!(out, "{line}");
        }
        if !v.steps.is_empty() {
            let _ = writeln!(out, "{}: {}", v.name, knee_words(v.knee.as_ref()));
        }
    }
    let _ = writeln!(
        out,
        "at the common load, {} (the highest step every round reached):",
        describe_load(common)
    );
    out
}

/// "knee at 38,012 req/s (8 connections): the accept queue overflowed …",
/// or why there is none.
pub fn knee_words(knee: Option<&KneeSummary>) -> String {
    let Some(knee) = knee else {
        return "no knee within the steps: goodput kept growing (add higher steps)".to_string();
    };
    let at = format!(
        "knee at {} req/s ({})",
        format_count(knee.goodput.round() as u64),
        describe_load(knee.load)
    );
    if knee.bottleneck.is_empty() {
        format!("{at}: no counter names a cause")
    } else {
        format!("{at}: {}", causes(&knee.bottleneck))
    }
}

/// "client RTT median 0.42 ms, p99 0.61 ms over 8 sockets, 0 retransmitted"
/// (means over rounds, rounded as printed).
pub(crate) fn client_tcp_words(tcp: &ClientTcp) -> String {
    let sockets = format!("{:.0}", tcp.sockets);
    let plural = if sockets == "1" { "" } else { "s" };
    format!(
        "client RTT median {:.2} ms, p99 {:.2} ms over {sockets} socket{plural}, {:.0} retransmitted",
        tcp.rtt_us_median / 1000.0,
        tcp.rtt_us_p99 / 1000.0,
        tcp.retransmits
    )
}

fn causes(found: &[Bottleneck]) -> String {
    found
        .iter()
        .map(|b| b.cause.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

fn with_interval(v: &VariantResult, metric: Metric) -> String {
    match v.estimate(metric) {
        Some(e) => match (e.ci_low, e.ci_high) {
            (Some(lo), Some(hi)) => format!("{:.0} ({:.0}–{:.0})", e.mean, lo, hi),
            _ => format!("{:.0}", e.mean),
        },
        None => "-".into(),
    }
}

/// The mean σ and κ of the rounds whose sweep fitted the USL.
fn usl_means(v: &VariantResult) -> (Option<f64>, Option<f64>) {
    let fits: Vec<_> = v
        .sweeps
        .iter()
        .filter_map(|s| s.analysis.usl.as_ref())
        .collect();
    if fits.is_empty() {
        return (None, None);
    }
    let n = fits.len() as f64;
    (
        Some(fits.iter().map(|f| f.sigma).sum::<f64>() / n),
        Some(fits.iter().map(|f| f.kappa).sum::<f64>() / n),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_analysis::{Evidence, Load};

    #[test]
    fn the_knee_names_its_bottleneck_with_its_figure() {
        let knee = KneeSummary {
            load: Load::Connections(500),
            rounds: 2,
            of_rounds: 3,
            goodput: 38_012.4,
            bottleneck: vec![Bottleneck {
                cause: "the accept queue overflowed 12345 times: raise the listen backlog, or accept faster".into(),
                evidence: vec![Evidence {
                    counter: "TcpExt.ListenOverflows".into(),
                    value: 12345.0,
                }],
            }],
        };
        assert_eq!(
            knee_words(Some(&knee)),
            "knee at 38,012 req/s (500 connections): the accept queue overflowed 12345 times: raise the listen backlog, or accept faster"
        );
        assert!(knee_words(None).starts_with("no knee within the steps"));
        let bare = KneeSummary {
            bottleneck: vec![],
            ..knee
        };
        assert!(knee_words(Some(&bare)).ends_with("(500 connections): no counter names a cause"));
    }

    #[test]
    fn the_client_sockets_in_words() {
        let tcp = ClientTcp {
            sockets: 8.0,
            rtt_us_median: 420.0,
            rtt_us_p99: 3191.7,
            retransmits: 1229.3,
            ..ClientTcp::default()
        };
        assert_eq!(
            client_tcp_words(&tcp),
            "client RTT median 0.42 ms, p99 3.19 ms over 8 sockets, 1229 retransmitted"
        );
        let one = ClientTcp {
            sockets: 1.0,
            ..tcp
        };
        assert!(client_tcp_words(&one).contains("over 1 socket, "));
    }
}
