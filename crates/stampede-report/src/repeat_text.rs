//! The text of repeated rounds (`run --repeat N`, `--until-stable`): the
//! rounds table, each figure's mean with its confidence interval, and the
//! stability verdict. `stampede run` prints it and `stampede report` of the
//! repeat file prints it again.

use crate::{format_latency_us, format_rate};
use stampede_analysis::{Figure, Interval, RepeatDocument};
use std::io::{self, Write};

/// The rounds table, then the mean of each figure over the completed rounds
/// with its interval (said once when there is none), then the stability
/// verdict of `--until-stable`.
pub fn render_repeat_text(document: &RepeatDocument, out: &mut dyn Write) -> io::Result<()> {
    let results = &document.runs;
    writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>10} {:>10} {:>8}",
        "round", "goodput/s", "rps", "p50", "p99", "errors"
    )?;
    for (i, r) in results.iter().enumerate() {
        writeln!(
            out,
            "{:>6} {:>12} {:>12} {:>10} {:>10} {:>7.2}%{}",
            i + 1,
            format_rate(r.goodput),
            format_rate(r.rps),
            format_latency_us(r.latency_us.p50 as f64),
            format_latency_us(r.latency_us.p99 as f64),
            r.error_rate_pct,
            if r.interrupted { "  (interrupted)" } else { "" }
        )?;
    }
    writeln!(out)?;
    let completed = document.rounds_completed;
    let not_counted = match results.iter().position(|r| r.interrupted) {
        Some(i) => format!(" (round {} was interrupted and is not counted)", i + 1),
        None => String::new(),
    };
    let pct = document.confidence * 100.0;
    match completed {
        0 => {
            writeln!(
                out,
                "No round ran to its end{not_counted}: nothing to average."
            )?;
            return Ok(());
        }
        1 => writeln!(
            out,
            "One completed round{not_counted}: its figures, with no confidence interval \
             (that needs at least 2 rounds):"
        )?,
        n => writeln!(
            out,
            "Mean over {n} completed rounds{not_counted}, with its {pct:.0}% confidence interval:"
        )?,
    }
    let lines: Vec<[String; 5]> = document
        .figures()
        .into_iter()
        .filter_map(|(figure, interval)| interval.map(|i| summary_line(figure, &i)))
        .collect();
    let width = |col: usize| {
        lines
            .iter()
            .map(|l| l[col].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2, w3) = (width(0), width(1), width(2), width(3));
    for [name, mean, half, unit, relative] in &lines {
        let plus_minus = if half.is_empty() { " " } else { "±" };
        let line =
            format!("  {name:<w0$} {mean:>w1$} {plus_minus} {half:>w2$} {unit:<w3$} {relative}");
        writeln!(out, "{}", line.trim_end())?;
    }
    if let Some(target) = document.until_stable {
        let interval = document
            .summary
            .get(target.figure.name())
            .copied()
            .flatten();
        match interval.filter(|_| document.stable) {
            Some(i) => writeln!(
                out,
                "Stable: {} within ±{} (target ±{}%) after {} rounds.",
                target.figure.name(),
                i.relative_pct.map_or("—".into(), |p| format!("{p:.1}%")),
                target.within_pct,
                i.rounds
            )?,
            None => writeln!(
                out,
                "NOT stable: {} did not get within ±{}% in {} rounds; run longer (-d) or accept the wider interval above.",
                target.figure.name(),
                target.within_pct,
                results.len()
            )?,
        }
    }
    Ok(())
}

/// `name`, `mean`, `half` (± half the interval), `unit`, `(±rel%)`. A zero mean with no spread
/// is `0 ± 0`: a relative width of a zero mean means nothing (not ±inf%).
fn summary_line(figure: Figure, i: &Interval) -> [String; 5] {
    let (mean, spread) = match i.half_width {
        Some(h) if i.mean == 0.0 && h == 0.0 => ("0".to_string(), "0".to_string()),
        Some(h) => (format_rate(i.mean), format_rate(h)),
        None => (format_rate(i.mean), String::new()),
    };
    let relative = i
        .relative_pct
        .map_or(String::new(), |p| format!("(±{p:.1}%)"));
    [
        figure.name().to_string(),
        mean,
        spread,
        figure.unit().to_string(),
        relative,
    ]
}
