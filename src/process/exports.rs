//! Files written from a run besides `--json`: the HTML report, ab's `-e` CSV,
//! the per-second CSV (from the finished result), and the per-request
//! outputs, ab's `-g` gnuplot TSV and the request log (written during the
//! run by the engine's background writer through a bounded buffer).
//! Flattened into the arguments of every subcommand that runs a load.

use anyhow::Context;
use stampede_engine::{LoggedRequest, RequestLogOptions, RequestLogReport, RequestSink, RunClock};
use stampede_metrics::RunResult;
use stampede_plan::Plan;
use stampede_report::{GnuplotRow, RequestLine};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Export options shared by `run` and the commands built on it.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// Write an HTML report (one self-contained file, interactive charts, works offline)
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write ab's -e table: percent served (0..100) and time in milliseconds, as CSV
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the per-second series (throughput, errors, latency percentiles, connections) as CSV
    #[arg(long, value_name = "PATH")]
    pub csv_timeseries: Option<PathBuf>,
    /// Write ab's -g per-request TSV (starttime seconds ctime dtime ttime wait, in ms)
    #[arg(long, value_name = "PATH")]
    pub gnuplot: Option<PathBuf>,
    /// With --gnuplot: keep every Nth request, so long runs do not fill the disk
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub gnuplot_sample: u64,
    /// Log every request (time, status, latency, bytes, error, target) to PATH; lines
    /// the disk cannot keep up with are dropped and counted, never waited for
    #[arg(long, value_name = "PATH")]
    pub log_requests: Option<PathBuf>,
    /// Write an HdrHistogram interval log (format 1.3, values in µs): one
    /// histogram per interval per tag (latency, service, ttfb, connect,
    /// tls, latency:TARGET), written as the run goes; read it back with
    /// `stampede report PATH`, merge agents' logs with `stampede merge`
    #[arg(long, value_name = "PATH")]
    pub hlog: Option<PathBuf>,
    /// With --hlog: the length of one interval (it divides a second, or is whole seconds)
    #[arg(long, value_name = "DUR", default_value = "1s", requires = "hlog", value_parser = crate::process::hlog_file::parse_hlog_interval)]
    pub hlog_interval: std::time::Duration,
}

impl ExportArgs {
    /// `--hlog` with its interval, when given.
    pub fn hlog_target(&self) -> Option<crate::process::hlog_file::HlogTarget> {
        (self.hlog.as_ref()).map(|path| crate::process::hlog_file::HlogTarget {
            path: path.clone(),
            interval: self.hlog_interval,
        })
    }

    /// Every file flag given, with its path, for [`crate::process::output::preflight`].
    pub fn outputs(&self) -> Vec<(&'static str, &Path)> {
        [
            ("--html", &self.html),
            ("--csv", &self.csv),
            ("--csv-timeseries", &self.csv_timeseries),
            ("--gnuplot", &self.gnuplot),
            ("--log-requests", &self.log_requests),
            ("--hlog", &self.hlog),
        ]
        .into_iter()
        .filter_map(|(flag, path)| path.as_deref().map(|path| (flag, path)))
        .collect()
    }
}

impl Default for ExportArgs {
    fn default() -> Self {
        ExportArgs {
            html: None,
            csv: None,
            csv_timeseries: None,
            gnuplot: None,
            gnuplot_sample: 1,
            log_requests: None,
            hlog: None,
            hlog_interval: std::time::Duration::from_secs(1),
        }
    }
}

/// Writes a file through a buffer, atomically, with the path in any error.
pub fn write_file(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    crate::process::output::write_atomically(path, render)
}

/// Writes every export made from a finished result; tries them all and
/// reports the first failure.
pub fn write_exports(result: &RunResult, args: &ExportArgs) -> anyhow::Result<()> {
    let mut outcomes = Vec::new();
    if let Some(path) = &args.html {
        // With --hlog, the report has the latency heatmap of its intervals
        // (the log is complete by now: it was closed with the run).
        let log = (args.hlog.as_deref()).and_then(|hlog| {
            let bytes = std::fs::read(hlog).ok()?;
            stampede_metrics::read_hlog(&bytes).ok()
        });
        outcomes.push(write_file(path, |out| match &log {
            Some(log) => stampede_report::render_html_with_heatmap(result, log, out),
            None => stampede_report::render_html(result, out),
        }));
    }
    if let Some(path) = &args.csv {
        outcomes.push(write_file(path, |out| {
            stampede_report::render_csv(result, out)
        }));
    }
    if let Some(path) = &args.csv_timeseries {
        outcomes.push(write_file(path, |out| {
            stampede_report::render_csv_timeseries(result, out)
        }));
    }
    outcomes.into_iter().collect()
}

/// Where a per-request file goes: a file, or stdout for `-`.
type Sink = BufWriter<Box<dyn Write + Send>>;

/// The per-request files created before a run, removed again if the run
/// fails before measuring anything (they would hold only a header).
#[derive(Debug, Default)]
pub struct CreatedFiles(Vec<PathBuf>);

impl CreatedFiles {
    /// Removes the files (the run failed; nothing in them is worth keeping).
    pub fn remove(self) {
        for path in self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Opens the per-request outputs asked for (before the run, so a bad path
/// fails before any load is sent) as the engine's request-log options.
pub fn open_request_log(
    args: &ExportArgs,
    plan: &Plan,
) -> anyhow::Result<(Option<RequestLogOptions>, CreatedFiles)> {
    let mut created = CreatedFiles::default();
    let mut create = |path: &PathBuf| -> anyhow::Result<Sink> {
        let out: Box<dyn Write + Send> = if crate::process::output::is_stdout(path) {
            Box::new(io::stdout())
        } else {
            let existed = path.exists();
            let file =
                File::create(path).with_context(|| format!("creating {}", path.display()))?;
            if !existed {
                created.0.push(path.clone());
            }
            Box::new(file)
        };
        Ok(BufWriter::with_capacity(1 << 16, out))
    };
    let log = args.log_requests.as_ref().map(&mut create).transpose()?;
    let gnuplot = args.gnuplot.as_ref().map(&mut create).transpose()?;
    if log.is_none() && gnuplot.is_none() {
        return Ok((None, created));
    }
    // The engine samples for the gnuplot file alone; with the full log on it
    // passes every request and the gnuplot writer keeps every Nth itself.
    let (engine_every, gnuplot_every) = if log.is_some() {
        (1, args.gnuplot_sample)
    } else {
        (args.gnuplot_sample, 1)
    };
    // Outcomes name their target by its index in the mix (`--targets`).
    let targets = if plan.mix.is_empty() {
        vec![plan.target.url.clone()]
    } else {
        plan.mix
            .iter()
            .map(|entry| entry.target.url.clone())
            .collect()
    };
    let mut sink = ExportSink {
        targets,
        log,
        gnuplot,
        gnuplot_every,
        gnuplot_seen: 0,
    };
    sink.write_headers()
        .context("writing the per-request file headers")?;
    let mut options = RequestLogOptions::new(Box::new(sink));
    options.sample_every = engine_every;
    Ok((Some(options), created))
}

/// Folds the request log's report into the result: the counts, and a warning
/// for dropped lines or a failed write (the measurement itself stands, so a
/// log that could not be written does not discard the result).
pub fn apply_request_log(result: &mut RunResult, report: Option<RequestLogReport>) {
    let Some(report) = report else {
        return;
    };
    result.request_log = Some(report.summary);
    if report.summary.dropped > 0 {
        result.warnings.push(format!(
            "per-request log: {} of {} lines dropped because the disk could not keep up \
             (the load was not slowed)",
            report.summary.dropped,
            report.summary.dropped + report.summary.written
        ));
    }
    if let Some(error) = report.error {
        result.warnings.push(format!(
            "per-request log: writing failed ({error}); the file is incomplete"
        ));
    }
}

/// The checks a response failed, by their index in the result's
/// `checks[]`, `,`-separated (empty when none failed).
fn failed_checks(outcome: &stampede_metrics::Outcome) -> String {
    let Some(judged) = outcome.judged else {
        return String::new();
    };
    (0..u32::from(judged.count).min(64))
        .filter(|bit| judged.failed & (1u64 << bit) != 0)
        .map(|bit| (u32::from(judged.first) + bit).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Formats logged requests into the files asked for, on the writer thread.
struct ExportSink {
    /// URLs by target index; never empty.
    targets: Vec<String>,
    log: Option<Sink>,
    gnuplot: Option<Sink>,
    gnuplot_every: u64,
    gnuplot_seen: u64,
}

impl ExportSink {
    fn write_headers(&mut self) -> io::Result<()> {
        if let Some(out) = &mut self.log {
            stampede_report::render_request_log_header(out)?;
        }
        if let Some(out) = &mut self.gnuplot {
            stampede_report::render_gnuplot_header(out)?;
        }
        Ok(())
    }
}

impl RequestSink for ExportSink {
    fn write(&mut self, request: &LoggedRequest, clock: &RunClock) -> io::Result<()> {
        let o = &request.outcome;
        let latency = o.done.saturating_duration_since(o.intended);
        if let Some(out) = &mut self.log {
            let failed = failed_checks(o);
            // A failed status outranks a failed check (its class is the
            // status's), as in the result's counts.
            let check_failed = !failed.is_empty() && o.result.is_ok_and(|s| s < 400);
            let line = RequestLine {
                t_s: clock.offset(o.intended).as_secs_f64(),
                status: o.result.ok(),
                latency_us: latency.as_micros() as u64,
                bytes: o.bytes_received,
                error: match o.result {
                    Err(kind) => Some(kind.as_str()),
                    Ok(_) if check_failed => Some("check_failed"),
                    Ok(_) => None,
                },
                target: self
                    .targets
                    .get(usize::from(o.target))
                    .unwrap_or(&self.targets[0]),
                vu: request.user,
                check: (!failed.is_empty()).then_some(failed.as_str()),
            };
            stampede_report::render_request_line(&line, out)?;
        }
        // ab writes rows for complete responses only.
        if let (Some(out), Ok(_)) = (&mut self.gnuplot, o.result) {
            let keep = self.gnuplot_seen.is_multiple_of(self.gnuplot_every);
            self.gnuplot_seen += 1;
            if keep {
                let row = GnuplotRow {
                    start: clock.wall(o.intended),
                    connect: request.connect.unwrap_or_default(),
                    total: latency,
                    wait: o
                        .first_byte
                        .map_or(latency, |first| first.saturating_duration_since(o.sent)),
                };
                stampede_report::render_gnuplot_row(&row, out)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        for out in [&mut self.log, &mut self.gnuplot].into_iter().flatten() {
            out.flush()?;
        }
        Ok(())
    }
}
