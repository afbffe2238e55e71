//! `--hlog PATH`: the run's HdrHistogram interval log, written while the
//! run goes (each interval as soon as every worker has left it, so a run
//! stopped or failed keeps every complete interval). Which tags a run
//! has, and the file's name for each sweep step or repeat round.

use stampede_metrics::{
    encode_tag, CheckName, HlogWriter, IntervalHistograms, IntervalSink, LatencyHistogram,
};
use stampede_plan::{Plan, Scheme};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// Parses `--hlog-interval`: whole milliseconds that divide a second, or
/// whole seconds (the per-second series and the intervals share the
/// workers' snapshots).
pub fn parse_hlog_interval(text: &str) -> Result<Duration, String> {
    let every = stampede_plan::parse_duration(text).map_err(|e| e.to_string())?;
    let ms = every.as_millis();
    let whole_ms = every == Duration::from_millis(ms as u64);
    let fits = ms > 0 && whole_ms && (1000 % ms == 0 || ms % 1000 == 0);
    if !fits {
        return Err(format!(
            "{text}: the interval must divide one second (e.g. 100ms, 250ms) or be whole seconds"
        ));
    }
    Ok(every)
}

/// Where one run's interval log goes and how long its intervals are.
#[derive(Debug, Clone)]
pub struct HlogTarget {
    pub path: PathBuf,
    pub interval: Duration,
}

impl HlogTarget {
    /// The same log for a sweep step or repeat round: `run.hlog` becomes
    /// `run.step3.hlog` (`part` = "step3").
    pub fn part(&self, part: &str) -> HlogTarget {
        let stem = self.path.file_stem().unwrap_or_default().to_string_lossy();
        let name = match self.path.extension() {
            Some(ext) => format!("{stem}.{part}.{}", ext.to_string_lossy()),
            None => format!("{stem}.{part}"),
        };
        HlogTarget {
            path: self.path.with_file_name(name),
            interval: self.interval,
        }
    }
}

/// The tags of a run: `latency`, `service`, `ttfb`, `connect`, `tls` on
/// https, `latency:NAME` per request of a mix or scenario step (`names`:
/// the step names, where a scenario gives them), and `latency:check:NAME`
/// per check (`checks`), holding the responses that failed it.
pub fn run_tags(plan: &Plan, names: &[Option<String>], checks: &[CheckName]) -> Vec<Tagged> {
    let mut tags = vec![
        Tagged::new("latency", Source::Latency),
        Tagged::new("service", Source::Service),
        Tagged::new("ttfb", Source::Ttfb),
        Tagged::new("connect", Source::Connect),
    ];
    if plan.target.scheme == Scheme::Https {
        tags.push(Tagged::new("tls", Source::Tls));
    }
    if plan.mix.len() > 1 {
        for (index, entry) in plan.mix.iter().enumerate() {
            let name = match names.get(index).cloned().flatten() {
                Some(name) => name,
                None => format!("{} {}", entry.request.method, entry.target.url),
            };
            let tag = format!("latency:{}", encode_tag(&name));
            tags.push(Tagged {
                tag,
                source: Source::Target(index),
            });
        }
    }
    for (index, tag) in check_tags(checks).into_iter().enumerate() {
        tags.push(Tagged {
            tag,
            source: Source::Check(index),
        });
    }
    tags
}

/// A tag per check, in the order of the result's `checks[]`:
/// `latency:check:EXPR`, `latency:check:STEP/EXPR` in a scenario step,
/// percent-encoded; a name seen before gets `#2`, `#3`… so that each check
/// has its own tag.
fn check_tags(checks: &[CheckName]) -> Vec<String> {
    let mut tags: Vec<String> = Vec::with_capacity(checks.len());
    for check in checks {
        let name = match &check.step {
            Some(step) => format!("{step}/{}", check.check),
            None => check.check.clone(),
        };
        let base = format!("latency:check:{}", encode_tag(&name));
        let mut tag = base.clone();
        let mut n = 1;
        while tags.contains(&tag) {
            n += 1;
            tag = format!("{base}#{n}");
        }
        tags.push(tag);
    }
    tags
}

/// Which histogram of a snapshot a tag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Latency,
    Service,
    Ttfb,
    Connect,
    Tls,
    Target(usize),
    /// The responses that failed check `n` (by its position in `checks[]`).
    Check(usize),
}

/// A tag and its histogram.
#[derive(Debug, Clone)]
pub struct Tagged {
    pub tag: String,
    pub source: Source,
}

impl Tagged {
    fn new(tag: &str, source: Source) -> Tagged {
        Tagged {
            tag: tag.to_string(),
            source,
        }
    }
}

struct State {
    path: PathBuf,
    file: Option<File>,
    writer: Option<HlogWriter<BufWriter<File>>>,
    tags: Vec<Tagged>,
    /// What a tag with nothing in an interval writes.
    empty: LatencyHistogram,
    error: Option<String>,
}

/// The interval log of one run: the engine's [`IntervalSink`], and the
/// handle that closes it once the run is over.
#[derive(Clone)]
pub struct HlogSink {
    state: Arc<Mutex<State>>,
}

impl HlogSink {
    /// Creates the file at once (a path that cannot be written fails
    /// before the run).
    pub fn create(path: &Path, tags: Vec<Tagged>) -> anyhow::Result<HlogSink> {
        if crate::process::output::is_stdout(path) {
            anyhow::bail!("--hlog writes a file as the run goes: give a path, not '-'");
        }
        let file =
            File::create(path).map_err(|e| anyhow::anyhow!("--hlog {}: {e}", path.display()))?;
        Ok(HlogSink {
            state: Arc::new(Mutex::new(State {
                path: path.to_path_buf(),
                file: Some(file),
                writer: None,
                tags,
                empty: stampede_metrics::new_latency_histogram(),
                error: None,
            })),
        })
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Ends the log: the headers if the run never began measuring, the
    /// buffer flushed; the first write error, if any, naming the file.
    pub fn close(&self) -> anyhow::Result<()> {
        self.with(|state| {
            if state.writer.is_none() && state.error.is_none() {
                state.begin(SystemTime::now());
            }
            if let Some(writer) = state.writer.take() {
                if let Err(e) = writer.finish() {
                    state.error.get_or_insert(e.to_string());
                }
            }
            match state.error.take() {
                Some(error) => Err(anyhow::anyhow!("--hlog {}: {error}", state.path.display())),
                None => Ok(()),
            }
        })
    }
}

impl State {
    fn begin(&mut self, started_at: SystemTime) {
        let Some(file) = self.file.take() else {
            return;
        };
        let by = concat!("stampede ", env!("CARGO_PKG_VERSION"));
        match HlogWriter::begin(BufWriter::new(file), started_at, by) {
            Ok(writer) => self.writer = Some(writer),
            Err(e) => self.error = Some(e.to_string()),
        }
    }
}

impl IntervalSink for HlogSink {
    fn begin(&mut self, started_at: SystemTime) {
        self.with(|state| state.begin(started_at));
    }

    fn interval(&mut self, start: Duration, length: Duration, merged: &IntervalHistograms) {
        self.with(|state| {
            let Some(writer) = state.writer.as_mut() else {
                return;
            };
            let empty = &state.empty;
            for tagged in &state.tags {
                let histogram = match tagged.source {
                    Source::Latency => &merged.latency,
                    Source::Service => &merged.service,
                    Source::Ttfb => &merged.ttfb,
                    Source::Connect => &merged.connect,
                    Source::Tls => &merged.tls,
                    Source::Target(i) => merged.per_target.get(i).unwrap_or(empty),
                    Source::Check(i) => merged.check_failures.get(i).unwrap_or(empty),
                };
                if let Err(e) = writer.write(&tagged.tag, start, length, histogram) {
                    state.error.get_or_insert(e.to_string());
                    return;
                }
            }
            // Whole intervals reach the disk: a run killed later leaves
            // every interval written so far readable.
            if let Err(e) = std::io::Write::flush(writer.out_mut()) {
                state.error.get_or_insert(e.to_string());
            }
        });
    }
}

/// True for an interval log rather than a JSON file: named `.hlog`, or
/// starting as one does (a `#` header or comment, a `Tag=` line).
pub fn looks_like_hlog(path: &Path, bytes: &[u8]) -> bool {
    let ext = path.extension().is_some_and(|e| e == "hlog");
    let start = bytes.trim_ascii_start();
    ext || start.starts_with(b"#") || start.starts_with(b"Tag=")
}

/// Reads an interval log; a fault names the file and its line. A file
/// that ends inside a line is read up to its last complete one, and
/// stderr says so.
pub fn read_hlog_file(path: &Path) -> anyhow::Result<stampede_metrics::HlogFile> {
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    read_hlog_bytes(path, &bytes)
}

/// [`read_hlog_file`] of bytes already read.
pub fn read_hlog_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<stampede_metrics::HlogFile> {
    let file = stampede_metrics::read_hlog(bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if let Some(line) = file.cut_at_line {
        eprintln!(
            "stampede: note: {} ends inside line {line} (a run cut short?): read up to its last complete interval",
            path.display()
        );
    }
    Ok(file)
}

/// Writes merged intervals as an interval log starting at `started_at`.
pub fn write_merged(
    path: &Path,
    started_at: SystemTime,
    intervals: &[stampede_metrics::MergedInterval],
) -> anyhow::Result<()> {
    crate::process::output::write_atomically(path, |out| {
        let by = concat!("stampede ", env!("CARGO_PKG_VERSION"), " merge");
        let mut writer = HlogWriter::begin(out, started_at, by)?;
        for interval in intervals {
            writer.write(
                &interval.tag,
                interval.start,
                interval.length,
                &interval.histogram,
            )?;
        }
        writer.finish().map(|_| ())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_must_divide_a_second_or_be_whole_seconds() {
        assert_eq!(parse_hlog_interval("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_hlog_interval("2s"), Ok(Duration::from_secs(2)));
        assert!(parse_hlog_interval("300ms").is_err());
        assert!(parse_hlog_interval("1500ms").is_err());
        assert!(parse_hlog_interval("0s").is_err());
    }

    #[test]
    fn each_check_has_its_own_tag_without_commas_or_spaces() {
        let check = |check: &str, step: Option<&str>| CheckName {
            check: check.to_string(),
            step: step.map(str::to_string),
        };
        let tags = check_tags(&[
            check("status == 200", None),
            check("status == 200", Some("log in")),
            check("status == 200", None),
            check("extract token", Some("a,b")),
        ]);
        assert_eq!(
            tags,
            [
                "latency:check:status%20==%20200",
                "latency:check:log%20in/status%20==%20200",
                "latency:check:status%20==%20200#2",
                "latency:check:a%2Cb/extract%20token",
            ]
        );
    }

    #[test]
    fn each_step_gets_its_own_file() {
        let target = HlogTarget {
            path: PathBuf::from("/tmp/x/run.hlog"),
            interval: Duration::from_secs(1),
        };
        assert_eq!(
            target.part("step2").path,
            PathBuf::from("/tmp/x/run.step2.hlog")
        );
    }
}
