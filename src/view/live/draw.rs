//! Draws one frame of the live view from a [`LiveState`]: progress, the
//! throughput figures, the responses-per-second chart over a time axis,
//! latency percentiles (last second and overall), a WebSocket run's
//! messages per second and round trip or streams' events per second and
//! gaps, status codes, error classes and connections. Layout only; the figures come from state.rs.
//! It fits 80×24: a figure too long for its panel is reworded shorter
//! (never cut mid-word), the progress label sits beside the bar, and the
//! status panels take only the rows they need so the chart keeps its room.

use super::state::{LiveState, Percentiles};
use crate::view::progress::glance_rate;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Row, Sparkline, Table};
use ratatui::Frame;
use stampede_report::{format_count, format_latency_us};

const ACCENT: Color = Color::Cyan;

fn block(title: &str) -> Block<'static> {
    Block::bordered().title(Span::styled(
        format!(" {title} "),
        Style::new().add_modifier(Modifier::BOLD),
    ))
}

/// Width of the figure labels ("status ≥ 400" and a space).
const LABEL: usize = 13;

/// Columns `text` takes (every character drawn here is one column wide).
fn columns(text: &str) -> usize {
    text.chars().count()
}

/// The first of `forms` that fits in `width` columns, else the shortest:
/// a narrow terminal gets a shorter wording, never a word cut in half.
fn fit(width: usize, forms: &[String]) -> String {
    forms
        .iter()
        .find(|form| columns(form) <= width)
        .or_else(|| forms.iter().min_by_key(|form| columns(form)))
        .cloned()
        .unwrap_or_default()
}

/// `text` shortened to `width` columns with an ellipsis in the middle, so
/// both ends of a long URL stay readable and the shortening is visible.
fn ellipsize(text: &str, width: usize) -> String {
    let n = columns(text);
    if n <= width {
        return text.to_string();
    }
    if width < 2 {
        return "…".chars().take(width).collect();
    }
    let keep = width - 1;
    let head: String = text.chars().take(keep - keep / 2).collect();
    let tail: String = text.chars().skip(n - keep / 2).collect();
    format!("{head}…{tail}")
}

/// Inner width of a bordered panel.
fn inner(area: Rect) -> usize {
    area.width.saturating_sub(2) as usize
}

/// Draws the whole view into `frame`.
pub fn draw(frame: &mut Frame<'_>, state: &LiveState) {
    let banner_lines = state.banner.len().min(MAX_BANNER_LINES) as u16;
    // The status and error panels take the rows they need (up to five
    // lines), so a small terminal keeps room for the chart.
    let listed = state
        .status
        .len()
        .max(state.error_classes.len())
        .clamp(1, 5) as u16;
    let protocol_lines = state.websocket.is_some() as u16 + state.streams.is_some() as u16;
    let [banner, header, middle, protocols, spark, bottom, processes, footer] = Layout::vertical([
        Constraint::Length(banner_lines),
        Constraint::Length(3),
        Constraint::Length(8),
        Constraint::Length(protocol_lines),
        Constraint::Min(4),
        Constraint::Length(listed + 2),
        Constraint::Length(state.processes.len().min(3) as u16),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    draw_banner(frame, banner, state);
    draw_processes(frame, processes, state);
    draw_progress(frame, header, state);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(middle);
    draw_throughput(frame, left, state);
    draw_latency(frame, right, state);
    draw_protocols(frame, protocols, state);
    draw_chart(frame, spark, state);
    let [status, errors] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    draw_status(frame, status, state);
    draw_errors(frame, errors, state);
    let width = footer.width as usize;
    let hint = if state.stopping {
        let text = fit(
            width,
            &[
                " stopping: waiting for the workers, the summary follows…".into(),
                " stopping…".into(),
            ],
        );
        Span::styled(text, Style::new().fg(Color::Yellow))
    } else {
        Span::raw(fit(
            width,
            &[
                " q or Ctrl-C: stop early (the summary is still printed)".into(),
                " q or Ctrl-C: stop early".into(),
                " q: stop".into(),
            ],
        ))
    };
    frame.render_widget(Paragraph::new(Line::from(hint)), footer);
}

/// Most banner lines shown (a long sweep keeps its latest finished steps).
const MAX_BANNER_LINES: usize = 8;

/// The sweep step or repeat round, and the finished steps, above the view.
fn draw_banner(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    if state.banner.is_empty() {
        return;
    }
    let skip = state.banner.len().saturating_sub(MAX_BANNER_LINES);
    // The first line (what is running) always shows; older finished steps
    // make room for newer ones.
    let lines: Vec<Line<'_>> = std::iter::once(&state.banner[0])
        .chain(state.banner.iter().skip(1 + skip))
        .map(|text| Line::from(text.as_str()))
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// One line per monitored process: CPU and RSS of its latest second.
fn draw_processes(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let width = area.width as usize;
    let lines: Vec<Line<'_>> = state
        .processes
        .iter()
        .take(3)
        .map(|p| {
            let usage = format!(
                "CPU {:.0}% · RSS {}",
                p.cpu_pct,
                stampede_report::format_bytes(p.rss_bytes as f64)
            );
            Line::from(fit(
                width,
                &[
                    format!(" {} {} (pid {}): {usage}", p.role, p.name, p.pid),
                    format!(" {} {}: {usage}", p.role, p.name),
                    format!(" {}: {usage}", p.role),
                ],
            ))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// The title, the progress bar and, beside it (never over it), how far the
/// run is.
fn draw_progress(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let width = inner(area);
    let elapsed = state.elapsed.as_secs_f64();
    let labels: Vec<String> = match (state.request_budget, state.planned) {
        (Some(budget), _) => vec![
            format!(
                "{elapsed:.1}s · {} / {} requests sent",
                format_count(state.sent),
                format_count(budget)
            ),
            format!(
                "{elapsed:.1}s · {} / {}",
                format_count(state.sent),
                format_count(budget)
            ),
        ],
        (None, Some(planned)) => vec![format!("{elapsed:.1}s / {:.0}s", planned.as_secs_f64())],
        (None, None) => vec![format!("{elapsed:.1}s")],
    };
    // The bar keeps at least a third of the line; the label takes the rest.
    let label = fit(width - width / 3, &labels);
    // A space either side keeps the label off the bar and off the border.
    let bar_width = width.saturating_sub(columns(&label) + 2);
    let ratio = state.progress().unwrap_or(0.0).clamp(0.0, 1.0);
    let filled = ((ratio * bar_width as f64).round() as usize).min(bar_width);
    let line = Line::from(vec![
        Span::styled("█".repeat(filled), Style::new().fg(ACCENT)),
        Span::styled(
            "░".repeat(bar_width - filled),
            Style::new().fg(Color::DarkGray),
        ),
        Span::raw(format!(" {label} ")),
    ]);
    let title_width = width.saturating_sub(2);
    let title = fit(
        title_width,
        &[
            format!("stampede · {}", state.title),
            ellipsize(&format!("stampede · {}", state.title), title_width),
        ],
    );
    frame.render_widget(Paragraph::new(line).block(block(&title)), area);
}

/// One labelled figure, in the first wording of `forms` that fits `width`.
fn figure(label: &str, width: usize, forms: &[String]) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<LABEL$}"), Style::new().fg(Color::Gray)),
        Span::styled(
            fit(width.saturating_sub(LABEL), forms),
            Style::new().add_modifier(Modifier::BOLD),
        ),
    ])
}

fn draw_throughput(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let width = inner(area);
    let finished = state.completed + state.errors;
    let share = |n: u64| {
        if finished > 0 {
            100.0 * n as f64 / finished as f64
        } else {
            0.0
        }
    };
    let counted = |n: u64| {
        vec![
            format!("{} ({:.2}%)", format_count(n), share(n)),
            format_count(n),
        ]
    };
    let rate = |r: f64| vec![format!("{} req/s", glance_rate(r)), glance_rate(r)];
    let (open, busy) = (
        format_count(state.open_connections),
        format_count(state.in_flight),
    );
    let lines = vec![
        figure("now", width, &rate(state.current_rps)),
        figure("average", width, &rate(state.average_rps())),
        figure("responses", width, &[format_count(state.completed)]),
        figure("status ≥ 400", width, &counted(state.failed_status)),
        figure("errors", width, &counted(state.errors)),
        figure(
            "connections",
            width,
            &[
                format!("{open} open, {busy} in flight"),
                format!("{open} open, {busy} busy"),
                format!("{open} open"),
            ],
        ),
    ];
    frame.render_widget(Paragraph::new(lines).block(block("Throughput")), area);
}

/// A timing's p99 for the view: `-` before its first value.
fn p99_text(s: &stampede_metrics::StreamSummary) -> String {
    match s.count {
        0 => "-".to_string(),
        _ => format_latency_us(s.p99_us as f64),
    }
}

/// One line for a WebSocket run (messages per second each way, the round
/// trip's p99) and one for streams (events per second, the gaps' p99).
fn draw_protocols(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let width = area.width as usize;
    let mut lines = Vec::new();
    if let Some(ws) = &state.websocket {
        let (sent, received) = (glance_rate(ws.sent_per_s), glance_rate(ws.received_per_s));
        let rtt = p99_text(&ws.rtt);
        lines.push(Line::from(fit(
            width,
            &[
                format!(" WebSocket   {sent} msg/s sent · {received} msg/s received · round trip p99 {rtt}"),
                format!(" WebSocket   {sent} msg/s sent · {received} received · rtt p99 {rtt}"),
                format!(" WS {sent}/{received} msg/s · rtt p99 {rtt}"),
            ],
        )));
    }
    if let Some(streams) = &state.streams {
        let events = glance_rate(streams.events_per_s);
        let gap = p99_text(&streams.gap);
        lines.push(Line::from(fit(
            width,
            &[
                format!(" Streams     {events} events/s · gap between events p99 {gap}"),
                format!(" Streams     {events} events/s · gap p99 {gap}"),
                format!(" SSE {events} ev/s · gap p99 {gap}"),
            ],
        )));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// Reads one percentile.
type Pick = fn(&Percentiles) -> u64;

fn latency_cell(p: Option<Percentiles>, pick: Pick) -> String {
    p.map_or("-".to_string(), |p| format_latency_us(pick(&p) as f64))
}

fn draw_latency(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let rows: [(&str, Pick); 4] = [
        ("p50", |p| p.p50),
        ("p90", |p| p.p90),
        ("p99", |p| p.p99),
        ("max", |p| p.max),
    ];
    let rows = rows.into_iter().map(|(label, pick)| {
        Row::new(vec![
            label.to_string(),
            latency_cell(state.recent, pick),
            latency_cell(state.overall, pick),
        ])
    });
    // Two value columns share what the label column leaves; the headings
    // shorten before they would be cut.
    let column = (inner(area).saturating_sub(6 + 2) / 2).clamp(8, 14);
    let recent = fit(column, &["last second".into(), "last 1s".into()]);
    let table = Table::new(
        rows,
        [
            Constraint::Length(5),
            Constraint::Length(column as u16),
            Constraint::Length(column as u16),
        ],
    )
    .header(
        Row::new(vec![String::new(), recent, "overall".into()]).style(Style::new().fg(Color::Gray)),
    )
    .block(block("Latency"));
    frame.render_widget(table, area);
}

/// Columns between two labels of the time axis.
const AXIS_STEP: usize = 10;

/// A second of elapsed time as an axis label: `40s`, `2m`, `2m30s`.
fn axis_label(second: usize) -> String {
    match (second / 60, second % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s:02}s"),
    }
}

/// The time axis under the chart: column `i` is second `start + i` of the
/// run; a label every [`AXIS_STEP`] seconds, where it fits with a space to
/// spare before the border.
fn time_axis(start: usize, width: usize) -> String {
    let mut axis = vec![' '; width];
    let mut free_from = 0;
    for column in 0..width {
        let second = start + column;
        if !second.is_multiple_of(AXIS_STEP) && column != 0 {
            continue;
        }
        let label: Vec<char> = axis_label(second).chars().collect();
        if column < free_from || column + label.len() >= width {
            continue;
        }
        axis[column..column + label.len()].copy_from_slice(&label);
        free_from = column + label.len() + 1;
    }
    axis.into_iter().collect()
}

/// Responses per second, one column per whole second, over a time axis.
fn draw_chart(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    // Whole seconds only: the current one is still filling.
    let done = state.per_second.len().saturating_sub(1);
    let width = inner(area);
    let start = done.saturating_sub(width);
    let data: Vec<u64> = state.per_second[start..done].to_vec();
    let peak = data.iter().copied().max().unwrap_or(0);
    let titles = [
        format!(
            "Responses per second (peak {}) over elapsed time",
            format_count(peak)
        ),
        format!("Responses per second (peak {})", format_count(peak)),
        format!("Responses/s (peak {})", format_count(peak)),
    ];
    let outer = block(&fit(width.saturating_sub(2), &titles));
    let body = outer.inner(area);
    frame.render_widget(outer, area);
    let [bars, axis] = if body.height >= 2 {
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(body)
    } else {
        [body, Rect::default()]
    };
    let sparkline = Sparkline::default()
        .style(Style::new().fg(ACCENT))
        .data(&data);
    frame.render_widget(sparkline, bars);
    let axis_line = Line::styled(time_axis(start, width), Style::new().fg(Color::Gray));
    frame.render_widget(Paragraph::new(axis_line), axis);
}

fn draw_status(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let lines: Vec<Line<'_>> = if state.status.is_empty() {
        vec![Line::from("no responses yet")]
    } else {
        state
            .status
            .iter()
            .map(|(code, n)| {
                let color = match code {
                    200..=399 => Color::Green,
                    400..=499 => Color::Yellow,
                    _ => Color::Red,
                };
                Line::from(vec![
                    Span::styled(format!("{code:<6}"), Style::new().fg(color)),
                    Span::raw(format_count(*n)),
                ])
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines).block(block("Status codes")), area);
}

fn draw_errors(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let lines: Vec<Line<'_>> = if state.error_classes.is_empty() {
        vec![Line::styled("none", Style::new().fg(Color::Green))]
    } else {
        state
            .error_classes
            .iter()
            .map(|(class, n)| {
                Line::from(vec![
                    Span::styled(format!("{class:<20}"), Style::new().fg(Color::Red)),
                    Span::raw(format_count(*n)),
                ])
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines).block(block("Errors by class")), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_reworded_or_marked_never_cut() {
        let forms = ["50 open, 50 in flight".to_string(), "50 open".to_string()];
        assert_eq!(fit(30, &forms), "50 open, 50 in flight");
        assert_eq!(fit(10, &forms), "50 open");
        assert_eq!(ellipsize("http://example.com/a/b", 12), "http:/…m/a/b");
        assert_eq!(ellipsize("short", 12), "short");
        assert_eq!(glance_rate(67_295.004), "67,295");
        assert_eq!(glance_rate(2.5), "2.5");
    }

    #[test]
    fn the_time_axis_labels_seconds_and_keeps_off_the_border() {
        assert_eq!(time_axis(0, 25), "0s        10s       20s  ");
        assert_eq!(time_axis(0, 23), "0s        10s          ");
        assert_eq!(time_axis(55, 12), "55s  1m     ");
        assert_eq!(axis_label(150), "2m30s");
    }
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use stampede_metrics::Snapshot;
    use std::time::Duration;

    #[test]
    fn draws_every_panel() {
        let mut state = LiveState::new("GET http://x/".into(), Some(Duration::from_secs(10)), None);
        let mut interval = Snapshot::default();
        interval.counters.success = 500;
        interval.counters.status.add(200, 500);
        interval.latency.record_n(1500, 500).unwrap();
        state.update(Duration::from_millis(1300), &interval, &interval.clone());
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal.draw(|frame| draw(frame, &state)).unwrap();
        let text: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|cell| cell.symbol())
            .collect();
        for expected in [
            "stampede",
            "1.3s / 10s",
            "Throughput",
            "Latency",
            "p99",
            "1.50ms",
            "200",
            "none",
            "q or Ctrl-C",
        ] {
            assert!(text.contains(expected), "{expected} missing from the frame");
        }
        assert!(!text.contains("WebSocket") && !text.contains("Streams"));
    }

    /// The frame's rows as text.
    fn frame_rows(state: &LiveState, columns: u16, rows: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(columns, rows)).unwrap();
        terminal.draw(|frame| draw(frame, state)).unwrap();
        let buffer = terminal.backend().buffer();
        (0..rows)
            .map(|y| {
                (0..columns)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn websocket_and_stream_lines_show_their_rates_and_p99s_at_any_width() {
        let mut state = LiveState::new("GET ws://x/".into(), Some(Duration::from_secs(10)), None);
        state.websocket = Some(super::super::state::LiveWebSocket {
            sent_per_s: 1234.0,
            received_per_s: 1200.0,
            rtt: stampede_metrics::StreamSummary {
                count: 10,
                p50_us: 900,
                p99_us: 2_500,
                max_us: 9_000,
            },
        });
        state.streams = Some(super::super::state::LiveStreams {
            events_per_s: 40.0,
            gap: stampede_metrics::StreamSummary {
                count: 5,
                p50_us: 50_000,
                p99_us: 51_000,
                max_us: 60_000,
            },
        });
        let wide = frame_rows(&state, 120, 34).join("\n");
        assert!(
            wide.contains("1,234 msg/s sent · 1,200 msg/s received · round trip p99 2.50ms"),
            "{wide}"
        );
        assert!(
            wide.contains("40.0 events/s · gap between events p99 51.00ms"),
            "{wide}"
        );
        let narrow = frame_rows(&state, 40, 24);
        let ws = narrow
            .iter()
            .find(|r| r.contains("msg/s"))
            .expect("a WebSocket line");
        assert!(ws.contains("rtt p99 2.50ms"), "{ws}");
        let sse = narrow
            .iter()
            .find(|r| r.contains("ev/s"))
            .expect("a streams line");
        assert!(sse.contains("gap p99 51.00ms"), "{sse}");
    }
}
