//! The sweep's answer in sentences: stable range, knee, ceiling, capacity,
//! where it only queues, where it is overloaded and what its error-inflated
//! throughput was really worth ("3111.7 req/s with 11.91% errors = 2741.1
//! req/s effective").
//!
//! Owns wording only; every number comes from `sweep`'s analysis.

use super::{queueing_from, Class, Load, StepAnalysis, SweepAnalysis, Thresholds};

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

/// `1000–2000 connections`, or `1000 connections` when both ends are equal.
fn range_text(from: Load, to: Load) -> String {
    if from == to {
        return from.to_string();
    }
    let to_text = to.to_string();
    let unit = to_text
        .split_once(' ')
        .map(|(_, unit)| unit)
        .unwrap_or_default();
    // f64's Display already drops a zero fraction ("500", "1500.5").
    let number = |l: Load| match l {
        Load::Connections(n) => n.to_string(),
        Load::Rate(r) => r.to_string(),
    };
    format!("{}–{} {unit}", number(from), number(to))
}

/// What the step's added load did, against the previous step.
fn change_text(steps: &[StepAnalysis], i: usize) -> String {
    let s = &steps[i];
    let (Some(dl), Some(dx), Some(dr)) = (
        s.load_change_pct,
        s.throughput_change_pct,
        s.latency_change_pct,
    ) else {
        return String::new();
    };
    let before = i.checked_sub(1).map(|j| steps[j].mean_ms).unwrap_or(0.0);
    format!(
        "{dl:+.0}% load gave {dx:+.1}% throughput while mean latency changed {dr:+.1}% ({} → {})",
        ms(before),
        ms(s.mean_ms)
    )
}

pub(crate) fn sentences(a: &SweepAnalysis, has_slo: bool, t: &Thresholds) -> Vec<String> {
    let steps = &a.steps;
    let Some(first) = steps.first() else {
        return vec!["No steps to analyse.".into()];
    };
    let mut out = Vec::new();

    out.push(match a.stable_range {
        Some(r) => format!("Stable range: {}.", range_text(r.from, r.to)),
        None => format!(
            "No stable step: already at {} the target is {}.",
            first.load,
            first.class.as_str()
        ),
    });

    match steps.iter().position(|s| s.class == Class::Saturated) {
        Some(0) => out.push(format!(
            "Knee at the first step ({}): {}.",
            first.load, first.rule
        )),
        Some(k) => out.push(format!(
            "Knee at {}: {}.",
            steps[k].load,
            change_text(steps, k)
        )),
        None if steps.iter().all(|s| s.class == Class::Healthy) => out.push(format!(
            "No knee in the tested range: throughput still scales at {}; sweep higher.",
            steps[steps.len() - 1].load
        )),
        None => out.push("No knee: errors began before throughput stopped scaling.".into()),
    }

    if let (Some(ceiling), Some(range)) = (a.ceiling, a.ceiling_range) {
        out.push(format!(
            "Throughput ceiling ≈ {ceiling:.0} req/s: goodput from the knee on stays within {:.1}–{:.1} req/s over {} steps.",
            range.low, range.high, range.steps
        ));
    } else if let (Some(at_least), Some(q)) = (a.ceiling_at_least, queueing_from(steps)) {
        // Throughput fell past the knee and only queues from q on: the
        // highest goodput was the peak, and a higher sweep would not raise it.
        out.push(format!(
            "Throughput peaked at {at_least:.1} req/s past the knee, with no plateau of two steps: from {} on, added load only queues.",
            steps[q].load
        ));
    } else if let (Some(at_least), Some(o)) = (a.ceiling_at_least, overloaded_from(steps)) {
        // Errors to the end: a higher sweep would only add errors; the
        // plateau, if any, lies between the last good step and the overload.
        out.push(format!(
            "Throughput ceiling not confirmed: at least {at_least:.1} req/s, but no second step past the knee confirms a plateau before the target is overloaded at {}; sweep in finer steps below it.",
            steps[o].load
        ));
    } else if let Some(at_least) = a.ceiling_at_least {
        out.push(format!(
            "Throughput ceiling not reached in the tested range: at least {at_least:.1} req/s, but no second step past the knee confirms a plateau; sweep higher."
        ));
    }

    let basis = if has_slo {
        "the highest goodput that meets the SLO".to_string()
    } else {
        format!(
            "the highest goodput with errors ≤ {}% and timeouts ≤ {}%",
            t.max_error_pct, t.max_timeout_pct
        )
    };
    out.push(match a.capacity {
        Some(c) if a.capacity_reached => format!(
            "Capacity: {:.1} req/s goodput at {} ({basis}).",
            c.goodput, c.load
        ),
        Some(c) => format!(
            "Capacity not reached: at least {:.1} req/s goodput at {}, the highest step tested ({basis}); sweep higher.",
            c.goodput, c.load
        ),
        None => format!(
            "No step qualifies as capacity ({basis}): capacity lies below {}.",
            first.load
        ),
    });

    if let Some(q) = steps.iter().position(|s| s.class == Class::Queueing) {
        let lead = if queueing_from(steps) == Some(q) {
            format!("From {} on, added load only queues", steps[q].load)
        } else {
            format!("At {} added load only queues", steps[q].load)
        };
        out.push(format!("{lead}: {}.", change_text(steps, q)));
    }

    if let Some(s) = steps.iter().find(|s| {
        s.server_saturation
            .as_deref()
            .is_some_and(|w| w.contains("pinned"))
    }) {
        let why = s.server_saturation.as_deref().unwrap_or_default();
        out.push(format!(
            "At {} {why}; more connections would only queue.",
            s.load
        ));
    }

    overload_sentences(a, &mut out);

    match &a.usl {
        Some(fit) => {
            let peak = match (fit.n_star, fit.x_max) {
                (Some(n), Some(x)) => format!("predicted peak {x:.1} req/s at N* ≈ {n:.0}"),
                _ => "no throughput peak predicted (κ ≈ 0 or σ ≥ 1)".into(),
            };
            out.push(format!(
                "USL fit: λ = {:.4} req/s per connection, σ = {:.4} (contention), κ = {:.3e} (coherency), R² = {:.3}; {peak}.",
                fit.lambda, fit.sigma, fit.kappa, fit.r2
            ));
        }
        None if first.load.is_closed() => {
            out.push("USL not fitted (see warnings).".into());
        }
        None => {}
    }
    out
}

/// Where the target is past capacity, and what its throughput was worth.
fn overload_sentences(a: &SweepAnalysis, out: &mut Vec<String>) {
    let steps = &a.steps;
    if let Some(o) = steps.iter().position(|s| s.class == Class::Overloaded) {
        let all_after = steps[o..].iter().all(|s| s.class == Class::Overloaded);
        let rule = steps[o].rule.trim_end_matches(": overloaded");
        out.push(if all_after && o + 1 < steps.len() {
            format!(
                "From {} on the target is overloaded ({rule}): past capacity.",
                steps[o].load
            )
        } else {
            format!(
                "{} is overloaded ({rule}): past capacity.",
                capitalised(&steps[o].load.to_string())
            )
        });
    }
    for s in steps.iter().filter(|s| s.error_rate_pct > 0.0) {
        let mut sentence = format!(
            "{}: {:.1} req/s with {:.2}% errors = {:.1} req/s effective",
            capitalised(&s.load.to_string()),
            s.rps,
            s.error_rate_pct,
            s.effective_rps
        );
        if let Some(c) = a.capacity {
            if s.rps > c.goodput && s.effective_rps < c.goodput {
                sentence.push_str(&format!(
                    ", below the capacity of {:.1} req/s: the higher raw figure is not real",
                    c.goodput
                ));
            }
        }
        sentence.push('.');
        out.push(sentence);
    }
}

/// The first step of the overloaded run that ends the sweep, if it ends so.
fn overloaded_from(steps: &[StepAnalysis]) -> Option<usize> {
    let o = steps.iter().rposition(|s| s.class != Class::Overloaded)? + 1;
    (o < steps.len()).then_some(o)
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_wording() {
        assert_eq!(
            range_text(Load::Connections(1000), Load::Connections(2000)),
            "1000–2000 connections"
        );
        assert_eq!(
            range_text(Load::Rate(500.0), Load::Rate(1500.5)),
            "500–1500.5 req/s offered"
        );
        assert_eq!(
            range_text(Load::Rate(500.0), Load::Rate(500.0)),
            "500 req/s offered"
        );
        assert_eq!(capitalised("10000 connections"), "10000 connections");
        assert_eq!(capitalised("rate"), "Rate");
        assert_eq!(ms(1324.4), "1324 ms");
        assert_eq!(ms(2.25), "2.2 ms");
        assert_eq!(ms(100.0), "100 ms");
        assert_eq!(ms(99.94), "99.9 ms");
        assert_eq!(capitalised(""), "");
        assert_eq!(
            range_text(Load::Connections(7), Load::Connections(7)),
            "7 connections"
        );
        assert_eq!(
            range_text(Load::Rate(0.5), Load::Rate(2.0)),
            "0.5–2 req/s offered"
        );
    }
}
