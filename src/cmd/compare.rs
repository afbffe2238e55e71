//! `stampede compare A.json B.json [C.json…]`: one table, a column per file
//! and a row per figure, with the change against the first file and a verdict
//! per row. A file of repeated runs (`--repeat`) contributes the mean of its
//! completed rounds with its 95% confidence interval (the same figures as its
//! own `summary`), and wherever either side has rounds the verdict comes
//! from the interval of the difference (Welch's t, or a prediction interval
//! against a single run): "no significant difference" when it includes zero.
//! Different plans are named as warnings, once per file.
//!
//! The table's renderer is shared with `stampede report` of a saved
//! comparison, so both print the same text.

use crate::exports::write_file;
use crate::result_file::{self, ResultFile};
use anyhow::bail;
use stampede_analysis::{
    compare_samples, CompareDocument, CompareOptions, Comparison, RunFigures, Sample,
};
use stampede_metrics::RunResult;
use stampede_report::{render_compare_html, Deltas, LabeledRun};
use std::io::Write;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "Examples:
  stampede compare before.json after.json
  stampede compare threads1.json threads2.json threads4.json
  stampede compare logs-on.json logs-off.json --json delta.json   # files from `run --repeat 5` get confidence intervals
  stampede report delta.json                                      # the saved comparison's table again";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct CompareArgs {
    /// Result files (stampede.result/1 or stampede.repeat/1); the first is the baseline
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    /// Relative changes within this band count as "same" (percent)
    #[arg(long, default_value_t = CompareOptions::default().noise_pct, value_name = "PCT")]
    pub noise: f64,
    /// Write the comparison (stampede.compare/1) as JSON to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report: the runs overlaid on the same axes
    /// and the deltas table
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

/// One file: a single run, or the completed rounds of a repeat file.
pub struct Side {
    pub label: String,
    pub runs: Vec<RunResult>,
}

/// Reads a result or repeat file; of a repeat file, the rounds that ran to
/// their end (what its summary averages).
pub fn read_side(path: &Path) -> anyhow::Result<Side> {
    let label = result_file::label(path);
    let runs = match result_file::read(path)? {
        ResultFile::Run(run) => vec![*run],
        ResultFile::Repeat(repeat) => {
            let completed: Vec<RunResult> = repeat.completed().cloned().collect();
            if completed.is_empty() {
                bail!(
                    "{}: no round ran to its end (round 1 was interrupted): nothing to compare",
                    path.display()
                );
            }
            completed
        }
        other => return Err(other.refuse(path, "a run's result or a file of repeated rounds")),
    };
    Ok(Side { label, runs })
}

fn figures(label: &str, run: &RunResult) -> RunFigures {
    let mut figures = RunFigures::of(label, run);
    figures.server_cpu_s_per_1k = run.monitor.as_ref().and_then(|m| {
        m.servers()
            .filter_map(|s| s.cpu_s_per_1k_requests)
            .reduce(|a, b| a + b)
    });
    figures
}

/// The round drawn for a file of rounds in the HTML overlays: the one whose
/// goodput is nearest the mean, so the curve is a typical round, not the last.
fn representative(side: &Side) -> &RunResult {
    let mean = side.runs.iter().map(|r| r.goodput).sum::<f64>() / side.runs.len() as f64;
    side.runs
        .iter()
        .min_by(|a, b| {
            (a.goodput - mean)
                .abs()
                .total_cmp(&(b.goodput - mean).abs())
        })
        .expect("read_side returns at least one run")
}

pub fn execute(args: CompareArgs) -> anyhow::Result<i32> {
    let sides: Vec<Side> = args
        .files
        .iter()
        .map(|p| read_side(p))
        .collect::<anyhow::Result<_>>()?;
    let options = CompareOptions {
        noise_pct: args.noise,
        ..CompareOptions::default()
    };
    let samples: Vec<Sample> = sides
        .iter()
        .map(|s| Sample {
            label: s.label.clone(),
            runs: s.runs.iter().map(|r| figures(&s.label, r)).collect(),
        })
        .collect();
    let comparison = compare_samples(&samples, &options)?;
    let document = CompareDocument::new(comparison);
    // Saved before printing, as a run's result is: the table is printed
    // even when a file cannot be written.
    let saved = args
        .json
        .as_ref()
        .map(|path| crate::output::write_json_value(&serde_json::to_value(&document)?, path))
        .transpose();
    let html = args.html.as_ref().map(|path| {
        let shown: Vec<LabeledRun<'_>> = sides
            .iter()
            .map(|s| LabeledRun {
                label: &s.label,
                result: representative(s),
            })
            .collect();
        write_file(path, |out| {
            render_compare_html(&shown, Deltas::Runs(&document.comparison), out)
        })
    });
    let on_stderr = args.json.as_deref().is_some_and(crate::output::is_stdout);
    print(&document.comparison, on_stderr)?;
    saved?;
    html.transpose()?;
    Ok(crate::exit::OK)
}

/// Prints the table on stdout (on stderr when the JSON itself goes to stdout).
pub fn print(comparison: &Comparison, on_stderr: bool) -> anyhow::Result<()> {
    let mut out = crate::output::text_out(on_stderr);
    render(comparison, &mut out)?;
    out.flush()?;
    Ok(())
}

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
        let digits = stampede_report::format_count(rounded.abs() as u64);
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
pub fn render(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
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
    for row in &c.rows {
        let mut cells = vec![row.name.clone(), row.unit.clone()];
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
        grid.push(cells);
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
