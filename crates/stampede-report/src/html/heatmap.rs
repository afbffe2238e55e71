//! The latency heatmap of a run's HTML report and of the live page
//! (`--web`): time on x (one column per interval), latency on a log y axis
//! (8 rows per decade), each cell's count as colour; hovering a column shows
//! that interval's count and percentiles. Built from the run's interval log
//! (`--hlog`) when there is one, else from the seconds of its result
//! (`timeseries[].histograms`). The cells' counts go in as JSON and the
//! page's heatmap.js draws them on a canvas: a 10-minute run at 1 s is 600
//! columns of a few dozen numbers.

use stampede_metrics::{decode_histogram, HlogFile, LatencyHistogram, RunResult};
use std::fmt::Write as _;

/// The script that draws the heatmap, in every page after its content.
pub(crate) const HEATMAP_JS: &str = include_str!("heatmap.js");

/// Rows per decade of latency.
const ROWS_PER_DECADE: f64 = 8.0;

/// The row of `us` (row 0 starts at 1 µs).
fn row_of(us: u64) -> usize {
    ((us.max(1) as f64).log10() * ROWS_PER_DECADE).floor() as usize
}

fn column_json(h: &LatencyHistogram, first_row: usize, rows: usize) -> String {
    let mut counts = vec![0u64; rows];
    for v in h.iter_recorded() {
        let row = row_of(v.value_iterated_to()).saturating_sub(first_row);
        if let Some(cell) = counts.get_mut(row) {
            *cell += v.count_at_value();
        }
    }
    let q = |quantile: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(quantile)
        }
    };
    let max = if h.is_empty() { 0 } else { h.max() };
    let counts: Vec<String> = counts.iter().map(u64::to_string).collect();
    format!(
        "{},{},{},{},{},[{}]",
        h.len(),
        q(0.5),
        q(0.9),
        q(0.99),
        max,
        counts.join(",")
    )
}

/// One column: its start and length in seconds, and its histogram.
type Column<'a> = (f64, f64, &'a LatencyHistogram);

/// The most columns drawn, one per pixel of the canvas: a longer run's
/// neighbouring intervals are added up into one column, so that a report
/// stays small (an hour at 1 s is 3,600 intervals; drawn whole, over 600 KB).
const MAX_COLUMNS: usize = 960;

/// `columns` with every `group` neighbours added up into one (their
/// histograms added, spanning from the first's start to the last's end),
/// `group` the fewest that leaves at most [`MAX_COLUMNS`].
fn coarsened(columns: &[Column<'_>]) -> (usize, Vec<(f64, f64, LatencyHistogram)>) {
    let group = columns.len().div_ceil(MAX_COLUMNS).max(1);
    let merged = columns
        .chunks(group)
        .map(|chunk| {
            let (start, _, first) = chunk[0];
            let (last_start, last_length, _) = chunk[chunk.len() - 1];
            let mut sum = LatencyHistogram::new_from(first);
            for (_, _, h) in chunk {
                // The same bounds: adding cannot fail.
                let _ = sum.add(*h);
            }
            (start, last_start + last_length - start, sum)
        })
        .collect();
    (group, merged)
}

/// The section of `columns`, each `one` ("one second of the run"); when
/// there are more than [`MAX_COLUMNS`], `group` of them per column, each
/// `many(group)`. Empty when no column holds a response.
fn heatmap(columns: &[Column<'_>], one: &str, many: impl Fn(usize) -> String) -> String {
    let data = if columns.len() > MAX_COLUMNS {
        let (group, merged) = coarsened(columns);
        let merged: Vec<Column<'_>> = merged.iter().map(|(s, l, h)| (*s, *l, h)).collect();
        heatmap_json(&merged).map(|data| (data, many(group)))
    } else {
        heatmap_json(columns).map(|data| (data, one.to_string()))
    };
    data.map_or_else(String::new, |(data, column)| section(&data, &column))
}

/// The cells as JSON (`first_row`, `per_decade`, `rows`, and per column
/// `[start, length, count, p50, p90, p99, max, [cells…]]`); `None` when no
/// column holds a response.
fn heatmap_json(columns: &[Column<'_>]) -> Option<String> {
    let recorded = columns.iter().filter(|c| !c.2.is_empty());
    let (low, high) = recorded.fold((u64::MAX, 0), |(lo, hi), c| {
        (lo.min(c.2.min()), hi.max(c.2.max()))
    });
    if columns.is_empty() || high == 0 {
        return None;
    }
    let first_row = row_of(low);
    let rows = row_of(high) - first_row + 1;
    let mut data = String::from("{\"first_row\":");
    let _ = write!(
        data,
        "{first_row},\"per_decade\":{ROWS_PER_DECADE},\"rows\":{rows},\"columns\":["
    );
    for (n, (start, length, histogram)) in columns.iter().enumerate() {
        if n > 0 {
            data.push(',');
        }
        let _ = write!(
            data,
            "[{start:.3},{length:.3},{}]",
            column_json(histogram, first_row, rows)
        );
    }
    data.push_str("]}");
    Some(data)
}

/// The section: a heading, a note saying what a column is, the canvas, its
/// tip line and the cells (heatmap.js draws them).
fn section(data: &str, column: &str) -> String {
    format!(
        r##"<h2>Latency heatmap</h2>
<p class="note">Each column is {column}, each row a band of latency (log scale); darker cells hold more responses. Hover a column for its percentiles.</p>
<div style="position:relative"><canvas id="latency-heatmap" width="960" height="320" style="width:100%;max-width:960px;border:1px solid #ddd"></canvas>
<div id="latency-heatmap-tip" style="font:12px monospace;min-height:1.4em"></div></div>
<script type="application/json" id="latency-heatmap-data">{data}</script>
"##
    )
}

/// The heatmap's HTML from the log's `latency` intervals; empty when there
/// are none.
pub fn heatmap_section(log: &HlogFile) -> String {
    let columns: Vec<Column<'_>> = log
        .intervals
        .iter()
        .filter(|i| i.tag == "latency")
        .map(|i| (i.start.as_secs_f64(), i.length.as_secs_f64(), &i.histogram))
        .collect();
    heatmap(
        &columns,
        "one interval of the run's interval log (--hlog)",
        |n| format!("{n} intervals of the run's interval log (--hlog) added up"),
    )
}

/// The heatmap's HTML from the result's seconds (`timeseries[].histograms`);
/// empty when it has none (a result written before they were kept, or a
/// merge of such) or no second holds a response.
pub(crate) fn result_heatmap_section(result: &RunResult) -> String {
    if !stampede_metrics::has_second_histograms(&result.timeseries) {
        return String::new();
    }
    let decoded: Vec<(f64, f64, LatencyHistogram)> = result
        .timeseries
        .iter()
        .filter_map(|p| {
            let text = p.histograms.get("latency")?;
            let histogram = decode_histogram(text).ok()?;
            Some((p.second as f64, p.duration_s, histogram))
        })
        .collect();
    let columns: Vec<Column<'_>> = decoded.iter().map(|(s, l, h)| (*s, *l, h)).collect();
    heatmap(&columns, "one second of the run", |n| {
        format!("{n} seconds of the run added up")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_metrics::HlogInterval;
    use std::time::Duration;

    #[test]
    fn a_stall_is_a_band_of_its_own() {
        let interval = |start: u64, values: &[u64]| {
            let mut h = stampede_metrics::new_latency_histogram();
            for &v in values {
                h.record(v).unwrap();
            }
            HlogInterval {
                tag: "latency".into(),
                start: Duration::from_secs(start),
                length: Duration::from_secs(1),
                histogram: h,
                line: 1,
            }
        };
        let log = HlogFile {
            start_time: None,
            cut_at_line: None,
            intervals: vec![interval(0, &[100, 110]), interval(1, &[1_000_000])],
        };
        let html = heatmap_section(&log);
        assert!(html.contains("id=\"latency-heatmap\""));
        // 100 µs is row 16, 1 s row 48: 33 rows from the first.
        assert!(html.contains("\"first_row\":16,"), "{html}");
        assert!(html.contains("\"rows\":33,"));
        let second = html.split("[1.000,1.000,").nth(1).unwrap();
        assert!(
            second.starts_with("1,"),
            "one response in the second column"
        );
        assert!(second.contains(",1]]"), "in the top row: {second}");
        assert!(heatmap_section(&HlogFile::default()).is_empty());
    }

    /// A run of `seconds` seconds, `per_second` responses each (latencies
    /// spread log-uniformly over 100 µs to 100 ms, so every second fills
    /// many buckets), built through the engine's own series builder.
    fn synthetic_run(seconds: u64, per_second: u64) -> RunResult {
        use stampede_metrics::{Environment, Recording, Snapshot, TimeseriesBuilder};
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut builder = TimeseriesBuilder::new(1);
        let mut total = Snapshot::default();
        let target = |_: f64| 50.0;
        for second in 0..seconds {
            let mut s = Snapshot::default();
            for _ in 0..per_second {
                let exponent = 2.0 + 3.0 * (next() % 10_000) as f64 / 10_000.0;
                s.latency.record(10f64.powf(exponent) as u64).unwrap();
            }
            s.counters.success = per_second;
            s.counters.status.add(200, per_second);
            builder.add(0, second, &s, &target);
            total.merge(&s);
        }
        let recording = Recording {
            timeseries: builder.finish(1.0, &target),
            ..Recording::of(
                std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
                Duration::from_secs(seconds),
                stampede_plan::EventLoop::Epoll,
                total,
            )
        };
        let plan = stampede_plan::Plan::minimal(
            stampede_plan::Target::parse("http://127.0.0.1:3000/").unwrap(),
        );
        RunResult::from_recording(&plan, &recording, Environment::default(), "test", vec![])
    }

    #[test]
    fn a_ten_minute_run_at_one_second_stays_under_500_kb() {
        let result = synthetic_run(600, 5_000);
        let mut html = Vec::new();
        crate::render_html(&result, &mut html).unwrap();
        let html = String::from_utf8(html).unwrap();
        let data = html
            .split("<script type=\"application/json\" id=\"latency-heatmap-data\">")
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .expect("the report has the heatmap's cells");
        let cells: serde_json::Value = serde_json::from_str(data).unwrap();
        assert_eq!(cells["columns"].as_array().unwrap().len(), 600);
        // 100 µs to 100 ms: three decades, 8 rows each.
        assert!(cells["rows"].as_u64() >= Some(24), "{}", cells["rows"]);
        assert!(
            html.len() < 500_000,
            "the report of 10 minutes is {} bytes",
            html.len()
        );
    }

    #[test]
    fn an_hours_run_is_drawn_in_added_up_columns_and_stays_under_500_kb() {
        let result = synthetic_run(3_600, 100);
        let mut html = Vec::new();
        crate::render_html(&result, &mut html).unwrap();
        let html = String::from_utf8(html).unwrap();
        let data = html
            .split("<script type=\"application/json\" id=\"latency-heatmap-data\">")
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .expect("the report has the heatmap's cells");
        let cells: serde_json::Value = serde_json::from_str(data).unwrap();
        // 3,600 seconds, 4 to a column: 900 columns of 4 s, every response kept.
        let columns = cells["columns"].as_array().unwrap();
        assert_eq!(columns.len(), 900);
        assert_eq!(columns[1][0].as_f64(), Some(4.0));
        assert_eq!(columns[1][1].as_f64(), Some(4.0));
        let counted: u64 = columns.iter().map(|c| c[2].as_u64().unwrap()).sum();
        assert_eq!(counted, 3_600 * 100);
        assert!(html.contains("Each column is 4 seconds of the run added up"));
        assert!(
            html.len() < 500_000,
            "an hour's report is {} bytes",
            html.len()
        );
    }

    #[test]
    fn without_per_second_histograms_there_is_no_heatmap() {
        let mut result = synthetic_run(3, 100);
        assert!(result_heatmap_section(&result).contains("id=\"latency-heatmap\""));
        result
            .timeseries
            .iter_mut()
            .for_each(|p| p.histograms.clear());
        assert_eq!(result_heatmap_section(&result), "");
    }
}
