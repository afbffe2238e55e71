//! The text of a comparison: `figure  unit  A  B  Δ  CI  verdict  …`, every
//! column padded to its widest cell, then each group and step every file
//! has (its name on a line, its figures indented under it). One renderer for `stampede compare` and
//! `stampede report` of a saved comparison, so both print the same (the
//! golden files in tests/golden check it).

use stampede_analysis::{Comparison, Row};
use std::io::Write;

/// A figure for the table: whole numbers from 100 on (with thousands
/// separators), two decimals below.
fn number(v: f64) -> String {
    number_like(v, v)
}

/// `v` with the precision `number` gives `like`: a mean's half width is
/// shown to the mean's precision.
fn number_like(v: f64, like: f64) -> String {
    if like.abs() >= 100.0 {
        let rounded = v.round();
        let digits = crate::format_count(rounded.abs() as u64);
        if rounded < 0.0 {
            format!("-{digits}")
        } else {
            digits
        }
    } else {
        format!("{v:.2}")
    }
}

fn signed(v: f64) -> String {
    let text = number(v);
    if v >= 0.0 {
        format!("+{text}")
    } else {
        text
    }
}

/// Columns of the table: how each is aligned.
#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

/// The table as text: `figure  unit  A  B  Δ  CI  verdict  …`, every column
/// padded to its widest cell.
pub fn render_compare_text(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    if let Some(window) = &c.window {
        writeln!(
            out,
            "Window: the seconds {window} of each run (percentiles exact, from its per-second histograms)"
        )?;
    }
    let with_ci = c.has_rounds();
    let mut header = vec!["figure".to_string(), "unit".to_string()];
    let mut align = vec![Align::Left, Align::Left];
    for (i, label) in c.labels.iter().enumerate() {
        let rounds = c.rounds.get(i).copied().unwrap_or(1);
        header.push(if rounds >= 2 {
            format!("{label} ({rounds} rounds)")
        } else {
            label.clone()
        });
        align.push(Align::Right);
        if i > 0 {
            header.push("change".into());
            align.push(Align::Right);
            if with_ci {
                header.push(format!("{:.0}% CI of change", c.confidence * 100.0));
                align.push(Align::Right);
            }
            header.push(String::new());
            align.push(Align::Left);
        }
    }
    let mut grid = vec![header];
    grid.extend(c.rows.iter().map(|row| row_cells(row, "", with_ci)));
    for part in &c.parts {
        // A part's name on a line of its own, its figures indented below.
        grid.push(vec![part.part.clone()]);
        grid.extend(part.rows.iter().map(|row| row_cells(row, "  ", with_ci)));
    }
    write_grid(&grid, &align, out)?;
    if with_ci {
        let base = c.labels.first().map_or("", String::as_str);
        writeln!(
            out,
            "x ± h: the mean over a file's rounds and its {pct:.0}% confidence interval.\n\
             CI of change: the {pct:.0}% interval of the difference from '{base}' (Welch's t \
             between files of rounds,\n  a prediction interval between rounds and a single \
             run); one that contains zero is no significant difference.",
            pct = c.confidence * 100.0
        )?;
    }
    for warning in &c.warnings {
        writeln!(out, "WARNING: {warning}")?;
    }
    Ok(())
}

/// One figure's cells: name (after `indent`), unit, then per file its value,
/// and against the first its change, interval and verdict.
fn row_cells(row: &Row, indent: &str, with_ci: bool) -> Vec<String> {
    let mut cells = vec![format!("{indent}{}", row.name), row.unit.clone()];
    let base = row.values.first().copied().flatten();
    for (i, value) in row.values.iter().enumerate() {
        let half = row.half_widths.get(i).copied().flatten();
        cells.push(match (value, half) {
            (Some(v), Some(h)) => format!("{} ± {}", number(*v), number_like(h, *v)),
            (Some(v), None) => number(*v),
            (None, _) => "—".into(),
        });
        if i == 0 {
            continue;
        }
        cells.push(
            row.change_pct
                .get(i)
                .copied()
                .flatten()
                .map_or(String::new(), |p| format!("{p:+.1}%")),
        );
        if with_ci {
            let interval = row.intervals.get(i).copied().flatten();
            cells.push(match (interval, base) {
                (Some(ci), Some(b)) if b != 0.0 => format!(
                    "[{:+.1}%, {:+.1}%]",
                    100.0 * ci.low / b.abs(),
                    100.0 * ci.high / b.abs()
                ),
                (Some(ci), _) => format!("[{}, {}]", signed(ci.low), signed(ci.high)),
                (None, _) => String::new(),
            });
        }
        cells.push(
            row.verdicts
                .get(i)
                .map(|v| v.to_string())
                .unwrap_or_default(),
        );
    }
    cells
}

fn write_grid(grid: &[Vec<String>], align: &[Align], out: &mut dyn Write) -> std::io::Result<()> {
    let columns = align.len();
    let widths: Vec<usize> = (0..columns)
        .map(|col| {
            grid.iter()
                .filter_map(|r| r.get(col))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in grid {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            if col > 0 {
                line.push_str("  ");
            }
            let pad = widths[col].saturating_sub(cell.chars().count());
            match align[col] {
                Align::Left => {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
                Align::Right => {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}
