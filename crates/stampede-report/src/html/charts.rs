//! Chart data shared by the run, sweep and compare pages: what one chart
//! shows (title, axes with units, named series) as a serializable [`Chart`]
//! that the page embeds as JSON, plus the builders that shape it (lines
//! over a shared x, category bars, the HDR percentile spectrum). Drawing is
//! not done here: the page's script (charts.js) turns each [`Chart`] into a
//! uPlot chart in the browser.

use serde::Serialize;
use stampede_metrics::{LatencyHistogram, SecondPoint};

/// How the browser lays out a chart's x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    /// Numbers on a linear x axis (seconds, connections, req/s offered).
    Lines,
    /// One bar per category; x is the category's index.
    Bars,
    /// x is 1/(1−q) on a log axis, labelled in percentiles.
    Spectrum,
}

/// How one series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Style {
    Line,
    /// A line with a marker at every point (few points: sweeps, short runs).
    Points,
    /// A dashed line, for fits and targets.
    Dashed,
    Bars,
}

/// An axis: its title (with the unit in it, as people read it) and the
/// unit and decimals the cursor's values are shown with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Axis {
    pub label: String,
    pub unit: String,
    pub decimals: u8,
}

impl Axis {
    pub(crate) fn new(label: &str, unit: &str, decimals: u8) -> Axis {
        Axis {
            label: label.to_string(),
            unit: unit.to_string(),
            decimals,
        }
    }

    pub(crate) fn seconds() -> Axis {
        Axis::new("time (s)", "s", 1)
    }

    pub(crate) fn latency_ms() -> Axis {
        Axis::new("latency (ms)", "ms", 3)
    }

    /// Rates: the series' names say what per second ("responses/s").
    pub(crate) fn rate() -> Axis {
        Axis::new("responses/s", "", 2)
    }
}

/// Which y axis a series is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Side {
    Left,
    Right,
}

/// One named series; `values[i]` belongs to the chart's `xs[i]`, `None`
/// where this series has no point there (the line spans the gap).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Series {
    pub name: String,
    pub style: Style,
    pub side: Side,
    /// For bars sharing one x: -1 left of it, 1 right of it, 0 centred.
    pub align: i8,
    pub values: Vec<Option<f64>>,
}

/// Everything the browser needs to draw one chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Chart {
    pub title: String,
    pub kind: Kind,
    pub x: Axis,
    pub y: Axis,
    /// The right-hand axis, when some series use it.
    pub y2: Option<Axis>,
    pub xs: Vec<f64>,
    /// Bar charts only: the label of each x index.
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    /// Said on the chart when it has no data at all.
    pub empty: String,
}

/// Most points a chart carries on its x axis. A longer series (a soak run
/// of hours) is merged into spans of several points, so every report stays
/// small (well under 500 KB) and quick to draw whatever the run's length.
pub(crate) const MAX_POINTS: usize = 1000;

/// How the points of one span merge when a series is longer than
/// [`MAX_POINTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reduce {
    /// Rates, counts, CPU: the span's average.
    Mean,
    /// Latencies, memory: the span's worst point, so no spike disappears.
    Max,
}

/// A series before alignment: its own x and y values.
pub(crate) struct Trace {
    pub name: String,
    pub style: Style,
    pub side: Side,
    pub align: i8,
    pub reduce: Reduce,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

impl Trace {
    pub(crate) fn new(name: &str, style: Style, x: Vec<f64>, y: Vec<f64>) -> Trace {
        Trace {
            name: name.to_string(),
            style,
            side: Side::Left,
            align: 0,
            reduce: Reduce::Mean,
            x,
            y,
        }
    }

    /// A line over time; with only a point or two (a one-second run) the
    /// points are marked too, since a line alone would draw nothing visible.
    pub(crate) fn line(name: &str, x: Vec<f64>, y: Vec<f64>) -> Trace {
        let style = if x.len() < 3 {
            Style::Points
        } else {
            Style::Line
        };
        Trace::new(name, style, x, y)
    }

    pub(crate) fn right(mut self) -> Trace {
        self.side = Side::Right;
        self
    }

    pub(crate) fn aligned(mut self, align: i8) -> Trace {
        self.align = align;
        self
    }

    /// Merged spans keep their worst point rather than their mean.
    pub(crate) fn worst(mut self) -> Trace {
        self.reduce = Reduce::Max;
        self
    }
}

/// Rounds to `decimals` places, so the page carries no 17-digit noise.
pub(crate) fn round(value: f64, decimals: u8) -> f64 {
    let scale = 10f64.powi(i32::from(decimals));
    (value * scale).round() / scale
}

/// Puts traces with their own x values on one shared, sorted x (uPlot's
/// data model): each series gets `None` where it has no point. Values that
/// are not finite (a rate over a zero-length interval) become gaps too.
pub(crate) fn align(traces: &[Trace]) -> (Vec<f64>, Vec<Vec<Option<f64>>>) {
    let mut xs: Vec<f64> = traces
        .iter()
        .flat_map(|t| t.x.iter().copied())
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let columns = traces
        .iter()
        .map(|trace| {
            let mut column = vec![None; xs.len()];
            for (x, y) in trace.x.iter().zip(&trace.y) {
                if let Ok(i) = xs.binary_search_by(|probe| probe.total_cmp(x)) {
                    column[i] = y.is_finite().then_some(*y);
                }
            }
            column
        })
        .collect();
    (xs, columns)
}

/// Merges runs of `span` consecutive points: x becomes the span's mean,
/// each column its mean or maximum over the points it has (a span where a
/// series has none stays a gap).
pub(crate) fn merge_spans(
    xs: &[f64],
    columns: &[Vec<Option<f64>>],
    reduce: &[Reduce],
    span: usize,
) -> (Vec<f64>, Vec<Vec<Option<f64>>>) {
    let span = span.max(1);
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    let merged_xs = xs.chunks(span).map(mean).collect();
    let merged = columns
        .iter()
        .zip(reduce)
        .map(|(column, reduce)| {
            column
                .chunks(span)
                .map(|chunk| {
                    let present: Vec<f64> = chunk.iter().flatten().copied().collect();
                    if present.is_empty() {
                        return None;
                    }
                    Some(match reduce {
                        Reduce::Mean => mean(&present),
                        Reduce::Max => present.iter().copied().fold(f64::MIN, f64::max),
                    })
                })
                .collect()
        })
        .collect();
    (merged_xs, merged)
}

impl Chart {
    /// A chart of lines (and bars) against a numeric x.
    pub(crate) fn lines(title: &str, x: Axis, y: Axis, traces: Vec<Trace>) -> Chart {
        Chart::assemble(title, Kind::Lines, x, y, traces)
    }

    fn assemble(title: &str, kind: Kind, x: Axis, y: Axis, traces: Vec<Trace>) -> Chart {
        let (mut xs, mut columns) = align(&traces);
        let mut title = title.to_string();
        let mut traces = traces;
        if kind == Kind::Lines && xs.len() > MAX_POINTS {
            let span = xs.len().div_ceil(MAX_POINTS);
            let reduce: Vec<Reduce> = traces.iter().map(|t| t.reduce).collect();
            (xs, columns) = merge_spans(&xs, &columns, &reduce, span);
            title = format!("{title} (one point per {span} {})", x.unit);
            for trace in &mut traces {
                if trace.reduce == Reduce::Max {
                    trace.name = format!("{} (worst of {span})", trace.name);
                }
            }
        }
        let series = traces
            .into_iter()
            .zip(columns)
            .map(|(trace, values)| {
                // Milliseconds to the µs the histograms resolve, rates to
                // a thousandth: finer than any axis or cursor shows.
                let decimals = 3;
                Series {
                    name: trace.name,
                    style: trace.style,
                    side: trace.side,
                    align: trace.align,
                    values: values
                        .into_iter()
                        .map(|v| v.map(|v| round(v, decimals)))
                        .collect(),
                }
            })
            .collect();
        let x_decimals = x.decimals;
        Chart {
            title,
            kind,
            x,
            y,
            y2: None,
            xs: xs
                .into_iter()
                .map(|v| round(v, x_decimals.max(3)))
                .collect(),
            categories: Vec::new(),
            series,
            empty: "no data".to_string(),
        }
    }

    /// Adds the right-hand axis for the series marked [`Trace::right`].
    pub(crate) fn with_right_axis(mut self, axis: Axis) -> Chart {
        self.y2 = Some(axis);
        self
    }

    pub(crate) fn when_empty(mut self, text: &str) -> Chart {
        self.empty = text.to_string();
        self
    }

    /// A bar chart of labelled counts; says `empty` on the chart when there are none.
    pub(crate) fn bars(title: &str, x_label: &str, counts: &[(String, u64)], empty: &str) -> Chart {
        let values: Vec<(String, f64)> = counts
            .iter()
            .map(|(label, n)| (label.clone(), *n as f64))
            .collect();
        Chart::category_bars(
            title,
            x_label,
            Axis::new("responses", "", 0),
            "count",
            &values,
        )
        .when_empty(empty)
    }

    /// One bar per labelled value, on the y axis `y`; the series is `name`.
    pub(crate) fn category_bars(
        title: &str,
        x_label: &str,
        y: Axis,
        name: &str,
        values: &[(String, f64)],
    ) -> Chart {
        let xs: Vec<f64> = (0..values.len()).map(|i| i as f64).collect();
        let ys = values.iter().map(|(_, v)| *v).collect();
        let mut chart = Chart::assemble(
            title,
            Kind::Bars,
            Axis::new(x_label, "", 0),
            y,
            vec![Trace::new(name, Style::Bars, xs, ys)],
        );
        chart.categories = values.iter().map(|(label, _)| label.clone()).collect();
        chart
    }

    /// Whether any series has a point to draw (the script asks the same).
    #[cfg(test)]
    pub(crate) fn has_data(&self) -> bool {
        self.series
            .iter()
            .any(|s| s.values.iter().any(Option::is_some))
    }
}

/// Points of the percentile spectrum: x is 1/(1−q), which a log axis spreads
/// so that every "nine" (90%, 99%, 99.9%…) gets equal room, as HdrHistogram's
/// plotter does; y is the latency in ms.
pub(crate) fn spectrum_points(histogram: &LatencyHistogram) -> (Vec<f64>, Vec<f64>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    if histogram.is_empty() {
        return (x, y);
    }
    for step in histogram.iter_quantiles(5) {
        let q = step.quantile_iterated_to();
        if q >= 1.0 {
            break;
        }
        x.push(1.0 / (1.0 - q));
        y.push(histogram.highest_equivalent(step.value_iterated_to()) as f64 / 1000.0);
    }
    // The last point is the maximum, placed one step past the highest
    // percentile reached so it stays visible on the log axis.
    let last = x.last().copied().unwrap_or(1.0);
    x.push(last * 2.0);
    y.push(histogram.max() as f64 / 1000.0);
    (x, y)
}

/// A spectrum chart of several named histograms on the same axes.
pub(crate) fn spectrum_chart(title: &str, series: &[(String, &LatencyHistogram)]) -> Chart {
    let traces = series
        .iter()
        .map(|(name, histogram)| {
            let (x, y) = spectrum_points(histogram);
            Trace::new(name, Style::Line, x, y)
        })
        .collect();
    Chart::assemble(
        title,
        Kind::Spectrum,
        // 1/(1−q) needs more than 3 decimals to tell 99.99% from 99.999%.
        Axis::new("percentile", "", 6),
        Axis::latency_ms(),
        traces,
    )
    .when_empty("no responses")
}

/// A final interval shorter than this is charted with the second before
/// it: a rate over the last few milliseconds of a run (a handful of
/// responses in 10 ms reads as 40,000/s) is noise, not a measurement.
pub(crate) const SHORTEST_CHARTED_S: f64 = 0.25;

/// The run's seconds as the over-time charts show them: as recorded, except
/// that a final partial interval shorter than [`SHORTEST_CHARTED_S`] is
/// merged into the one before (counts added, rates over the joint length,
/// latencies the worse of the two, gauges as at the end).
pub(crate) fn charted_seconds(points: &[SecondPoint]) -> Vec<SecondPoint> {
    let mut out = points.to_vec();
    let short_tail = out
        .last()
        .is_some_and(|last| last.duration_s < SHORTEST_CHARTED_S)
        && out.len() > 1;
    if !short_tail {
        return out;
    }
    let last = out.pop().expect("checked: at least two points");
    let into = out.last_mut().expect("checked: at least two points");
    into.duration_s += last.duration_s;
    into.completed += last.completed;
    into.success += last.success;
    into.bytes_received += last.bytes_received;
    for (class, n) in last.errors {
        *into.errors.entry(class).or_insert(0) += n;
    }
    into.rps = into.completed as f64 / into.duration_s;
    into.p50_us = into.p50_us.max(last.p50_us);
    into.p90_us = into.p90_us.max(last.p90_us);
    into.p99_us = into.p99_us.max(last.p99_us);
    into.max_us = into.max_us.max(last.max_us);
    into.in_flight = last.in_flight;
    into.open_connections = last.open_connections;
    into.target = last.target;
    out
}

/// A latency of one second in ms; a second in which no response completed
/// has no latency (a gap in the line, not a 0 ms point).
pub(crate) fn latency_ms(point: &SecondPoint, micros: u64) -> f64 {
    if point.completed == 0 {
        f64::NAN
    } else {
        micros as f64 / 1000.0
    }
}

/// Seconds of the run as chart x values (the middle of each interval).
pub(crate) fn seconds(points: &[SecondPoint]) -> Vec<f64> {
    points
        .iter()
        .map(|p| p.second as f64 + p.duration_s / 2.0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_ends_at_the_maximum_and_rises() {
        let mut h = stampede_metrics::new_latency_histogram();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let (x, y) = spectrum_points(&h);
        assert!(x.windows(2).all(|w| w[0] < w[1]), "x strictly increases");
        assert!(y.windows(2).all(|w| w[0] <= w[1]), "latency never falls");
        assert!((y.last().unwrap() - 10.0).abs() < 0.01, "ends at max 10 ms");
        assert!(*x.last().unwrap() > 1000.0, "reaches past 99.9%");
    }

    #[test]
    fn spectrum_of_nothing_is_empty() {
        let (x, y) = spectrum_points(&stampede_metrics::new_latency_histogram());
        assert!(x.is_empty() && y.is_empty());
        let chart = spectrum_chart("s", &[]);
        assert!(!chart.has_data());
        assert_eq!(chart.empty, "no responses");
    }

    #[test]
    fn spectrum_chart_is_on_the_log_kind_in_ms() {
        let mut h = stampede_metrics::new_latency_histogram();
        for v in [1_000u64, 2_000, 3_000, 40_000] {
            h.record(v).unwrap();
        }
        let chart = spectrum_chart("Latency", &[("latency".into(), &h)]);
        assert_eq!(chart.kind, Kind::Spectrum);
        assert_eq!(chart.y.unit, "ms");
        assert_eq!(chart.xs.first(), Some(&1.0), "starts at 0% = 1/(1-0)");
        let last = chart.series[0].values.last().unwrap().unwrap();
        assert!(
            (last - 40.0).abs() < 0.1,
            "ends at the 40 ms maximum: {last}"
        );
    }

    #[test]
    fn traces_with_their_own_x_share_one_sorted_x() {
        let a = Trace::new("a", Style::Line, vec![0.5, 1.5], vec![1.0, 2.0]);
        let b = Trace::new(
            "b",
            Style::Line,
            vec![1.5, 2.5, 3.0],
            vec![5.0, f64::NAN, 7.0],
        );
        let (xs, columns) = align(&[a, b]);
        assert_eq!(xs, vec![0.5, 1.5, 2.5, 3.0]);
        assert_eq!(columns[0], vec![Some(1.0), Some(2.0), None, None]);
        assert_eq!(columns[1], vec![None, Some(5.0), None, Some(7.0)]);
    }

    #[test]
    fn long_series_merge_into_spans_keeping_their_worst_latency() {
        let n = 3 * MAX_POINTS + 1;
        let x: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
        let rate: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
        let mut p99: Vec<f64> = vec![1.0; n];
        p99[7] = 250.0;
        let chart = Chart::lines(
            "Latency",
            Axis::seconds(),
            Axis::latency_ms(),
            vec![
                Trace::line("rate", x.clone(), rate),
                Trace::line("p99", x, p99).worst(),
            ],
        );
        assert!(chart.xs.len() <= MAX_POINTS, "{}", chart.xs.len());
        assert_eq!(chart.title, "Latency (one point per 4 s)");
        assert_eq!(chart.xs[0], 2.0, "the span's middle");
        assert_eq!(chart.series[0].values[0], Some(0.75), "rates averaged");
        assert_eq!(chart.series[1].name, "p99 (worst of 4)");
        assert_eq!(chart.series[1].values[1], Some(250.0), "the spike stays");
        assert_eq!(chart.series[1].values[0], Some(1.0));
        let short = Chart::lines(
            "t",
            Axis::seconds(),
            Axis::latency_ms(),
            vec![Trace::line("p99", vec![0.5, 1.5], vec![1.0, 2.0]).worst()],
        );
        assert_eq!((short.title.as_str(), short.xs.len()), ("t", 2));
    }

    #[test]
    fn a_final_sliver_of_a_second_is_charted_with_the_second_before() {
        let point = |second: u64, duration_s: f64, completed: u64, p99_us: u64| SecondPoint {
            second,
            duration_s,
            completed,
            success: completed,
            errors: [("timeout".to_string(), 1)].into_iter().collect(),
            bytes_received: 0,
            rps: completed as f64 / duration_s,
            in_flight: second,
            open_connections: 4,
            p50_us: 100,
            p90_us: 200,
            p99_us,
            max_us: p99_us,
            target: 4.0,
            histograms: Default::default(),
            websocket: None,
            stream_events: None,
        };
        let points = [
            point(0, 1.0, 1000, 900),
            point(1, 1.0, 1000, 800),
            point(2, 0.01, 400, 5000),
        ];
        let charted = charted_seconds(&points);
        assert_eq!(charted.len(), 2);
        let last = &charted[1];
        assert_eq!(
            (last.second, last.duration_s, last.completed),
            (1, 1.01, 1400)
        );
        assert!(
            (last.rps - 1400.0 / 1.01).abs() < 1e-9,
            "not 40,000/s: {}",
            last.rps
        );
        assert_eq!(last.p99_us, 5000, "the worse latency");
        assert_eq!(last.errors["timeout"], 2);
        assert_eq!(last.in_flight, 2, "gauges as at the end");
        assert_eq!(seconds(&charted), vec![0.5, 1.505]);
        // A long enough tail, or a run of one sliver, is charted as it is.
        let kept = [point(0, 1.0, 1000, 900), point(1, 0.3, 300, 800)];
        assert_eq!(charted_seconds(&kept), kept.to_vec());
        let alone = [point(0, 0.1, 10, 900)];
        assert_eq!(charted_seconds(&alone), alone.to_vec());
    }

    #[test]
    fn merged_spans_leave_gaps_where_a_series_has_nothing() {
        let (xs, columns) = merge_spans(
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            &[vec![Some(1.0), None, None, None, Some(4.0)]],
            &[Reduce::Mean],
            2,
        );
        assert_eq!(xs, vec![1.5, 3.5, 5.0]);
        assert_eq!(columns[0], vec![Some(1.0), None, Some(4.0)]);
    }

    #[test]
    fn bars_number_their_categories_and_say_when_empty() {
        let chart = Chart::bars(
            "Status codes",
            "status",
            &[("200".into(), 7), ("503".into(), 3)],
            "no responses",
        );
        assert_eq!(chart.kind, Kind::Bars);
        assert_eq!(chart.xs, vec![0.0, 1.0]);
        assert_eq!(chart.categories, vec!["200", "503"]);
        assert_eq!(chart.series[0].values, vec![Some(7.0), Some(3.0)]);
        let empty = Chart::bars("Errors", "class", &[], "no transport errors");
        assert!(!empty.has_data());
        assert_eq!(empty.empty, "no transport errors");
    }

    #[test]
    fn values_are_rounded_for_the_page() {
        let chart = Chart::lines(
            "t",
            Axis::seconds(),
            Axis::latency_ms(),
            vec![Trace::line("p50", vec![0.5], vec![1.234_567_89])],
        );
        assert_eq!(chart.series[0].values, vec![Some(1.235)]);
        assert_eq!(chart.series[0].style, Style::Points, "one point is marked");
        let json = serde_json::to_string(&chart).unwrap();
        assert!(json.contains("\"kind\":\"lines\""), "{json}");
        assert!(json.contains("\"values\":[1.235]"), "{json}");
    }
}
