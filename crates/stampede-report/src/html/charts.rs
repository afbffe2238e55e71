//! Chart building blocks shared by the run, sweep and compare pages: layouts
//! with the report's look, line and bar traces, and the HDR percentile
//! spectrum. Plotly draws everything; nothing here draws by hand.

use plotly::common::{Line, Mode, Title};
use plotly::layout::{Annotation, Axis, AxisType, HoverMode, Legend, Margin, RangeMode};
use plotly::{Bar, Layout, Plot, Scatter};
use stampede_metrics::LatencyHistogram;

/// Height of every chart, px (the container is styled to match).
pub const HEIGHT: usize = 370;

/// A layout with a title, axis titles, a unified hover and the legend on top.
pub fn layout(title: &str, x_title: &str, y_title: &str) -> Layout {
    Layout::new()
        .title(Title::with_text(title))
        .height(HEIGHT)
        .margin(Margin::new().left(64).right(24).top(78).bottom(48))
        .hover_mode(HoverMode::XUnified)
        // The legend sits between the title and the plot, clear of both.
        .legend(
            Legend::new()
                .orientation(plotly::common::Orientation::Horizontal)
                .x(0.0)
                .y(1.02)
                .y_anchor(plotly::common::Anchor::Bottom),
        )
        .x_axis(Axis::new().title(Title::with_text(x_title)))
        .y_axis(
            Axis::new()
                .title(Title::with_text(y_title))
                .range_mode(RangeMode::ToZero),
        )
}

/// A second y axis on the right, sharing the x axis.
pub fn right_axis(title: &str) -> Axis {
    Axis::new()
        .title(Title::with_text(title))
        .overlaying("y")
        .side(plotly::common::AxisSide::Right)
        .range_mode(RangeMode::ToZero)
        .show_grid(false)
}

/// A named line trace; with only a point or two (a one-second run) the
/// points are marked too, since a line alone would draw nothing visible.
pub fn line(name: &str, x: Vec<f64>, y: Vec<f64>) -> Box<Scatter<f64, f64>> {
    let mode = if x.len() < 3 {
        Mode::LinesMarkers
    } else {
        Mode::Lines
    };
    Scatter::new(x, y).name(name).mode(mode)
}

/// A named line trace with markers at the points (few points: sweeps).
pub fn line_markers(name: &str, x: Vec<f64>, y: Vec<f64>) -> Box<Scatter<f64, f64>> {
    Scatter::new(x, y).name(name).mode(Mode::LinesMarkers)
}

/// A dashed line, for fits and targets.
pub fn dashed(name: &str, x: Vec<f64>, y: Vec<f64>) -> Box<Scatter<f64, f64>> {
    Scatter::new(x, y)
        .name(name)
        .mode(Mode::Lines)
        .line(Line::new().dash(plotly::common::DashType::Dash))
}

/// A bar chart of labelled counts; says `empty` on the chart when there are none.
pub fn bars(title: &str, x_title: &str, counts: &[(String, u64)], empty: &str) -> Plot {
    let mut plot = Plot::new();
    let labels: Vec<String> = counts.iter().map(|(label, _)| label.clone()).collect();
    let values: Vec<u64> = counts.iter().map(|(_, n)| *n).collect();
    plot.add_trace(Bar::new(labels, values).name("count"));
    let mut layout = layout(title, x_title, "responses")
        .hover_mode(HoverMode::Closest)
        .x_axis(
            Axis::new()
                .title(Title::with_text(x_title))
                .type_(AxisType::Category),
        );
    if counts.is_empty() {
        layout = layout.annotations(vec![Annotation::new()
            .text(empty)
            .x_ref("paper")
            .y_ref("paper")
            .x(0.5)
            .y(0.5)
            .show_arrow(false)
            .font(plotly::common::Font::new().size(18))]);
    }
    plot.set_layout(layout);
    plot
}

/// Points of the percentile spectrum: x is 1/(1−q), which a log axis spreads
/// so that every "nine" (90%, 99%, 99.9%…) gets equal room, as HdrHistogram's
/// plotter does; y is the latency in ms.
pub fn spectrum_points(histogram: &LatencyHistogram) -> (Vec<f64>, Vec<f64>) {
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

/// The x axis of a percentile spectrum, labelled in percent.
pub fn spectrum_axis(points: usize) -> Axis {
    let nines = ((points.max(10) as f64).log10().ceil() as i32).clamp(2, 7);
    let values: Vec<f64> = (0..=nines).map(|n| 10f64.powi(n)).collect();
    let labels: Vec<String> = (0..=nines)
        .map(|n| match n {
            0 => "0%".to_string(),
            1 => "90%".to_string(),
            2 => "99%".to_string(),
            n => format!("99.{}%", "9".repeat(n as usize - 2)),
        })
        .collect();
    Axis::new()
        .title(Title::with_text("percentile"))
        .type_(AxisType::Log)
        .tick_values(values)
        .tick_text(labels)
}

/// A spectrum plot of several named histograms on the same axes.
pub fn spectrum_plot(title: &str, series: &[(String, &LatencyHistogram)]) -> Plot {
    let mut plot = Plot::new();
    let mut most = 0u64;
    for (name, histogram) in series {
        let (x, y) = spectrum_points(histogram);
        plot.add_trace(
            Scatter::new(x, y)
                .name(name)
                .mode(Mode::Lines)
                .hover_template("%{y:.3f} ms<extra>%{fullData.name}</extra>"),
        );
        most = most.max(histogram.len());
    }
    plot.set_layout(
        layout(title, "percentile", "latency (ms)")
            .hover_mode(HoverMode::Closest)
            .x_axis(spectrum_axis(most as usize)),
    );
    plot
}

/// Seconds of the run as chart x values (the middle of each interval).
pub fn seconds(points: &[stampede_metrics::SecondPoint]) -> Vec<f64> {
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
    }
}
