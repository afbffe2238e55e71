//! What `stampede report FILE.hlog` prints: an HdrHistogram interval log read back,
//! each tag's intervals in a time range (`--from`, `--to`) added up
//! exactly and summarized: count and percentiles, as text or JSON; the
//! JSON has each interval's count and percentiles too (`per_interval`), and
//! so has the text with `--per-interval`, a table per tag.

use crate::process::output::OutputFormat;
use stampede_metrics::{new_latency_histogram, HlogFile, LatencyHistogram};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// The percentiles reported, as in the text and JSON.
const PERCENTILES: [(&str, f64); 6] = [
    ("p50", 50.0),
    ("p90", 90.0),
    ("p99", 99.0),
    ("p99_9", 99.9),
    ("p99_99", 99.99),
    ("max", 100.0),
];

/// Which intervals count: those that start in `[from, to)` (seconds since
/// the log's start), of the tags asked for (all when empty); and whether
/// the text shows each interval, not only the totals.
#[derive(Debug, Clone, Default)]
pub struct HlogRange {
    pub from: Option<Duration>,
    pub to: Option<Duration>,
    pub tags: Vec<String>,
    pub per_interval: bool,
}

/// One tag over the range.
#[derive(Debug)]
pub struct TagTotal {
    pub tag: String,
    pub intervals: usize,
    pub histogram: LatencyHistogram,
    /// Each interval of the range on its own, in file order.
    pub each: Vec<IntervalFigures>,
}

/// One interval of a tag: when, how many, and its percentiles (µs, in
/// the order of `PERCENTILES`).
#[derive(Debug)]
pub struct IntervalFigures {
    pub start: Duration,
    pub length: Duration,
    pub count: u64,
    pub percentiles: [u64; PERCENTILES.len()],
}

impl IntervalFigures {
    fn of(start: Duration, length: Duration, histogram: &LatencyHistogram) -> IntervalFigures {
        IntervalFigures {
            start,
            length,
            count: histogram.len(),
            percentiles: PERCENTILES.map(|(_, p)| quantile(histogram, p)),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        let mut entry = serde_json::Map::new();
        entry.insert("start_s".into(), self.start.as_secs_f64().into());
        entry.insert("length_s".into(), self.length.as_secs_f64().into());
        entry.insert("count".into(), self.count.into());
        for ((name, _), value) in PERCENTILES.iter().zip(self.percentiles) {
            entry.insert(format!("{name}_us"), value.into());
        }
        entry.into()
    }
}

/// Each tag's intervals in `range`, added up, in the file's tag order.
pub fn totals(file: &HlogFile, range: &HlogRange) -> anyhow::Result<Vec<TagTotal>> {
    let span = |d: Option<Duration>, none: &str| {
        d.map_or(none.to_string(), |d| format!("{:.3} s", d.as_secs_f64()))
    };
    if let (Some(from), Some(to)) = (range.from, range.to) {
        if to <= from {
            anyhow::bail!(
                "--to must be after --from (the window is {} to {})",
                span(range.from, ""),
                span(range.to, "")
            );
        }
    }
    let tags = file.tags();
    if tags.is_empty() {
        anyhow::bail!(
            "the log has no complete interval (a run stopped before its first interval ended \
             writes only the headers)"
        );
    }
    // A tag is asked for as the log writes it (`latency:GET%20%2Fa`) or
    // as named (`latency:GET /a`).
    let mut asked = Vec::with_capacity(range.tags.len());
    for name in &range.tags {
        let encoded = stampede_metrics::encode_tag(name);
        match [name.clone(), encoded]
            .into_iter()
            .find(|t| tags.contains(t))
        {
            Some(tag) => asked.push(tag),
            None => anyhow::bail!(
                "--tag {name}: no such tag in the log (it has {})",
                tags.join(", ")
            ),
        }
    }
    let within = |start: Duration| {
        range.from.is_none_or(|from| start >= from) && range.to.is_none_or(|to| start < to)
    };
    if !file.intervals.iter().any(|i| within(i.start)) {
        let first = file.intervals.iter().map(|i| i.start).min();
        let last = file.intervals.iter().map(|i| i.start).max();
        anyhow::bail!(
            "no interval starts in the window {} to {}: the log's intervals start from {} to {}",
            span(range.from, "the start"),
            span(range.to, "the end"),
            span(first, "?"),
            span(last, "?")
        );
    }
    let mut totals: Vec<TagTotal> = tags
        .into_iter()
        .filter(|t| asked.is_empty() || asked.contains(t))
        .map(|tag| TagTotal {
            tag,
            intervals: 0,
            histogram: new_latency_histogram(),
            each: Vec::new(),
        })
        .collect();
    for interval in file.intervals.iter().filter(|i| within(i.start)) {
        if let Some(total) = totals.iter_mut().find(|t| t.tag == interval.tag) {
            total.intervals += 1;
            total
                .histogram
                .add(&interval.histogram)
                .map_err(|e| anyhow::anyhow!("line {}: {e:?}", interval.line))?;
            total.each.push(IntervalFigures::of(
                interval.start,
                interval.length,
                &interval.histogram,
            ));
        }
    }
    Ok(totals)
}

fn quantile(histogram: &LatencyHistogram, percentile: f64) -> u64 {
    if histogram.is_empty() {
        0
    } else {
        histogram.value_at_percentile(percentile)
    }
}

/// Prints the totals as text or JSON.
pub fn print(
    path: &Path,
    cut_at_line: Option<usize>,
    range: &HlogRange,
    totals: &[TagTotal],
    format: OutputFormat,
) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match format {
        OutputFormat::Json => {
            let mut tags = serde_json::Map::new();
            for total in totals {
                let h = &total.histogram;
                let mut entry = serde_json::Map::new();
                entry.insert("count".into(), h.len().into());
                entry.insert("intervals".into(), total.intervals.into());
                entry.insert(
                    "min_us".into(),
                    (if h.is_empty() { 0 } else { h.min() }).into(),
                );
                entry.insert(
                    "mean_us".into(),
                    (if h.is_empty() { 0.0 } else { h.mean() }).into(),
                );
                for (name, p) in PERCENTILES {
                    entry.insert(format!("{name}_us"), quantile(h, p).into());
                }
                let each: Vec<serde_json::Value> =
                    total.each.iter().map(IntervalFigures::to_json).collect();
                entry.insert("per_interval".into(), each.into());
                tags.insert(total.tag.clone(), entry.into());
            }
            let seconds = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
            let document = serde_json::json!({
                "file": path.display().to_string(),
                "from_s": seconds(range.from),
                "to_s": seconds(range.to),
                "cut_at_line": cut_at_line,
                "unit": "us",
                "tags": tags,
            });
            serde_json::to_writer_pretty(&mut out, &document)?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            let from = range.from.map_or("the start".to_string(), |d| {
                format!("{:.3} s", d.as_secs_f64())
            });
            let to = range.to.map_or("the end".to_string(), |d| {
                format!("{:.3} s", d.as_secs_f64())
            });
            let starts = totals.iter().flat_map(|t| t.each.iter());
            let covered = starts
                .map(|i| (i.start, i.start + i.length))
                .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
            let covered = covered.map_or(String::new(), |(first, end)| {
                format!(
                    ", covering {:.3} s to {:.3} s",
                    first.as_secs_f64(),
                    end.as_secs_f64()
                )
            });
            writeln!(
                out,
                "{}: intervals starting from {from} to {to}{covered} (latencies in ms)",
                path.display()
            )?;
            let width = totals.iter().map(|t| t.tag.len()).max().unwrap_or(3).max(3);
            write_header(&mut out, "tag", width, "intervals")?;
            for total in totals {
                let h = &total.histogram;
                write!(
                    out,
                    "  {:<width$} {:>9} {:>10}",
                    total.tag,
                    total.intervals,
                    h.len()
                )?;
                write_percentiles(&mut out, PERCENTILES.map(|(_, p)| quantile(h, p)))?;
            }
            if range.per_interval {
                for total in totals {
                    writeln!(out)?;
                    writeln!(out, "  {} per interval (start and length in s):", total.tag)?;
                    write_header(&mut out, "start", 9, "length")?;
                    for interval in &total.each {
                        write!(
                            out,
                            "  {:>9.3} {:>9.3} {:>10}",
                            interval.start.as_secs_f64(),
                            interval.length.as_secs_f64(),
                            interval.count
                        )?;
                        write_percentiles(&mut out, interval.percentiles)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// A table's header: the first column (`width` wide), a second one, the
/// count and the percentiles' names.
fn write_header(
    out: &mut impl Write,
    first: &str,
    width: usize,
    second: &str,
) -> std::io::Result<()> {
    write!(out, "  {first:<width$} {second:>9} {:>10}", "count")?;
    for (name, _) in PERCENTILES {
        let label = name.replace('_', ".");
        write!(out, " {label:>9}")?;
    }
    writeln!(out)
}

/// The percentiles of a row, µs printed as ms, and the line's end.
fn write_percentiles(
    out: &mut impl Write,
    values: [u64; PERCENTILES.len()],
) -> std::io::Result<()> {
    for value in values {
        write!(out, " {:>9.3}", value as f64 / 1000.0)?;
    }
    writeln!(out)
}
