//! Draws one frame of the live view from a [`LiveState`]: progress, the
//! throughput figures and sparkline, latency percentiles (last second and
//! overall), status codes, error classes and connections. Layout only; the
//! figures come from state.rs.

use super::state::{LiveState, Percentiles};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Gauge, Paragraph, Row, Sparkline, Table};
use ratatui::Frame;
use stampede_report::{format_count, format_latency_us, format_rate};

const ACCENT: Color = Color::Cyan;

fn block(title: &str) -> Block<'static> {
    Block::bordered().title(Span::styled(
        format!(" {title} "),
        Style::new().add_modifier(Modifier::BOLD),
    ))
}

/// Draws the whole view into `frame`.
pub fn draw(frame: &mut Frame<'_>, state: &LiveState) {
    let banner_lines = state.banner.len().min(MAX_BANNER_LINES) as u16;
    let [banner, header, middle, spark, bottom, processes, footer] = Layout::vertical([
        Constraint::Length(banner_lines),
        Constraint::Length(3),
        Constraint::Length(8),
        Constraint::Min(4),
        Constraint::Length(7),
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
    draw_sparkline(frame, spark, state);
    let [status, errors] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    draw_status(frame, status, state);
    draw_errors(frame, errors, state);
    let hint = if state.stopping {
        Span::styled(
            " stopping: waiting for the workers, the summary follows…",
            Style::new().fg(Color::Yellow),
        )
    } else {
        Span::raw(" q or Ctrl-C: stop early (the summary is still printed)")
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
    let lines: Vec<Line<'_>> = state
        .processes
        .iter()
        .take(3)
        .map(|p| {
            Line::from(format!(
                " {} {} (pid {}): CPU {:.0}% · RSS {}",
                p.role,
                p.name,
                p.pid,
                p.cpu_pct,
                stampede_report::format_bytes(p.rss_bytes as f64)
            ))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

fn draw_progress(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let elapsed = state.elapsed.as_secs_f64();
    let label = match (state.request_budget, state.planned) {
        (Some(budget), _) => format!(
            "{elapsed:.1}s · {} / {} requests sent",
            format_count(state.sent),
            format_count(budget)
        ),
        (None, Some(planned)) => format!("{elapsed:.1}s / {:.0}s", planned.as_secs_f64()),
        (None, None) => format!("{elapsed:.1}s"),
    };
    let gauge = Gauge::default()
        .block(block(&format!("stampede · {}", state.title)))
        .gauge_style(Style::new().fg(ACCENT).bg(Color::DarkGray))
        .ratio(state.progress().unwrap_or(0.0).clamp(0.0, 1.0))
        .label(label);
    frame.render_widget(gauge, area);
}

fn figure<'a>(label: &'a str, value: String) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("{label:<18}"), Style::new().fg(Color::Gray)),
        Span::styled(value, Style::new().add_modifier(Modifier::BOLD)),
    ])
}

fn draw_throughput(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    let finished = state.completed + state.errors;
    let failed = state.failed_status + state.errors;
    let error_pct = if finished > 0 {
        100.0 * failed as f64 / finished as f64
    } else {
        0.0
    };
    let lines = vec![
        figure("now", format!("{} req/s", format_rate(state.current_rps))),
        figure(
            "average",
            format!("{} req/s", format_rate(state.average_rps())),
        ),
        figure("responses", format_count(state.completed)),
        figure(
            "failed",
            format!(
                "{} status ≥ 400, {} errors ({error_pct:.2}%)",
                format_count(state.failed_status),
                format_count(state.errors)
            ),
        ),
        figure(
            "connections",
            format!(
                "{} open, {} in flight",
                format_count(state.open_connections),
                format_count(state.in_flight)
            ),
        ),
    ];
    frame.render_widget(Paragraph::new(lines).block(block("Throughput")), area);
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
    let table = Table::new(
        rows,
        [
            Constraint::Length(6),
            Constraint::Length(14),
            Constraint::Length(14),
        ],
    )
    .header(Row::new(vec!["", "last second", "overall"]).style(Style::new().fg(Color::Gray)))
    .block(block("Latency"));
    frame.render_widget(table, area);
}

fn draw_sparkline(frame: &mut Frame<'_>, area: Rect, state: &LiveState) {
    // Whole seconds only: the current one is still filling.
    let done = state.per_second.len().saturating_sub(1);
    let width = area.width.saturating_sub(2) as usize;
    let start = done.saturating_sub(width);
    let data: Vec<u64> = state.per_second[start..done].to_vec();
    let peak = data.iter().copied().max().unwrap_or(0);
    let title = format!("Responses per second (peak {})", format_count(peak));
    let sparkline = Sparkline::default()
        .block(block(&title))
        .style(Style::new().fg(ACCENT))
        .data(&data);
    frame.render_widget(sparkline, area);
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
    }
}
