//! `stampede replay`'s command line, and the log it names made into a run:
//! the requests kept (window, filter, sample, method), their offsets
//! scaled by the speed and repeated by `--loop`, the rows a `unique`
//! feeder hands out in order (held in memory), one mix entry per (method,)
//! URI pattern with the entry of each line in order (the engine's
//! `mix_sequence`), and the `run` arguments that send them (`/{{path}}` on
//! the base URL, the logged host, user agent and referer). A HAR file
//! (`--format har`) is read by stampede-workload's `replay::har` into the
//! same requests, each with its recorded headers and body: a mix entry
//! sends the headers its requests recorded and `{{body}}`, each from the
//! request's row.

use crate::flags::count_arg::{count_usize, positive_u64};
use crate::flags::run_args::RunArgs;
use crate::process::exports::ExportArgs;
use crate::process::output::OutputFormat;
use stampede_plan::parse_duration;
use stampede_plan::{MixEntry, Plan};
use stampede_workload::replay::{self, Field, LogFormat, PatternRules, Selection};
use stampede_workload::{FeedData, FeedMode, Feeder};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const EXAMPLES: &str = "Examples:
  stampede replay access.log --base http://127.0.0.1:8080                # as recorded, the open model
  stampede replay access.log --base http://127.0.0.1:8080 --speed 2      # twice as fast
  stampede replay access.log --base http://127.0.0.1:8080 --speed max -c 50   # as fast as 50 connections go
  stampede replay access.log --base http://127.0.0.1:8080 --keep-order   # one connection, the log's order
  stampede replay access.log --base http://127.0.0.1:8080 --from 10m --to 20m --filter 'status<400' --sample 10%
  stampede replay session.har --base http://127.0.0.1:8080 --format har --speed 2
  stampede replay access.log --base http://127.0.0.1:8080 \\
      --format '$remote_addr [$time_local] \"$request\" $status $request_time' --json out.json";

/// How fast the log is replayed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// The recorded offsets divided by this.
    Factor(f64),
    /// As fast as the connections allow (the closed model).
    Max,
}

fn parse_speed(text: &str) -> Result<Speed, String> {
    if text == "max" {
        return Ok(Speed::Max);
    }
    text.trim_end_matches(['x', 'X'])
        .parse::<f64>()
        .ok()
        .filter(|k| k.is_finite() && *k > 0.0)
        .map(Speed::Factor)
        .ok_or_else(|| format!("{text:?}: give a factor above 0 (2, 0.5) or max"))
}

#[derive(Debug, Clone, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ReplayArgs {
    /// The access log (nginx or Apache), or a HAR file
    pub file: PathBuf,
    /// Where to send the log's requests: scheme, host and port (each
    /// request's path and query are the log's)
    #[arg(long, value_name = "URL")]
    pub base: String,
    /// The log's line format: combined, common, har (a HAR 1.2 file), or
    /// nginx's log_format string ($remote_addr, $time_local, $request,
    /// $status, $request_time, ...) [default: combined; a file whose first
    /// byte that is not a space is `{` is read as HAR]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Send at the recorded offsets divided by K (2: twice as fast), or max:
    /// as fast as -c connections allow
    #[arg(long, default_value = "1", value_parser = parse_speed, value_name = "K|max")]
    pub speed: Speed,
    /// With a speed factor, the most connections open at once [default: 1000];
    /// with --speed max, the connections [default: 50]
    #[arg(short = 'c', long, value_name = "N", value_parser = count_usize)]
    pub connections: Option<usize>,
    /// Worker threads; the instants are split among them exactly (worker w
    /// of N sends lines w, w + N, …), so requests due together may swap
    /// places
    #[arg(short = 't', long, default_value_t = 1, value_name = "N", value_parser = count_usize)]
    pub threads: usize,
    /// One connection sends the log's requests in the log's order
    #[arg(long)]
    pub keep_order: bool,
    /// Replay the log N times, each after the last
    #[arg(long = "loop", default_value_t = 1, value_name = "N", value_parser = positive_u64)]
    pub loops: u64,
    /// Only the log's requests from this offset from its first one
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub from: Option<Duration>,
    /// Only the log's requests before this offset from its first one
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub to: Option<Duration>,
    /// Only lines whose logged status passes, e.g. 'status<400'
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Only this share of the lines, evenly spread, e.g. 10%
    #[arg(long, value_name = "PCT")]
    pub sample: Option<String>,
    /// Only lines of this method
    #[arg(short = 'm', long, value_name = "METHOD")]
    pub method: Option<String>,
    /// Stop at the first line that does not parse (exit 2)
    #[arg(long)]
    pub strict: bool,
    /// A header on every request, 'Name: value' (repeatable); it replaces
    /// the logged one of that name (Host, User-Agent, Referer)
    #[arg(short = 'H', long = "header", value_parser = stampede_plan::parse_header, value_name = "HEADER")]
    pub headers: Vec<stampede_plan::Header>,
    /// Name paths the regex matches NAME in the per-pattern figures
    /// (repeatable; before the built-in folding of ids)
    #[arg(long, value_name = "REGEX=NAME")]
    pub pattern: Vec<String>,
    /// Time allowed for a complete response after sending
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DUR")]
    pub timeout: Duration,
    /// Write the full result as JSON (schema stampede.result/1) to PATH
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// What to print on stdout
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// No progress line: only the final summary
    #[arg(short = 'q', long)]
    pub quiet: bool,
    #[command(flatten)]
    pub exports: ExportArgs,
}

/// A log made into a run.
pub struct ReplayRun {
    /// The run's arguments (URL template, the feeder of the log's rows,
    /// headers, load).
    pub args: RunArgs,
    /// The open model's offsets; `None` for --speed max.
    pub offsets: Option<Arc<[Duration]>>,
    /// The result's `replay` object.
    pub summary: stampede_metrics::ReplayResult,
    pub notices: Vec<String>,
    /// With figures per URI pattern: the run's mix, one entry per pattern.
    pub patterns: Option<PatternMix>,
}

/// One mix entry per (method,) URI pattern, so that each has its own
/// latency, and the entry each request of the log is.
pub struct PatternMix {
    /// Each entry's method and name (its pattern), in mix order.
    pub entries: Vec<(String, String)>,
    /// Each entry's recorded headers (values from the row) and whether it
    /// sends the row's body, in mix order.
    pub recorded: Vec<Recorded>,
    /// The mix entry each request is, line by line, loops included (the
    /// engine's `mix_sequence`).
    pub sequence: Arc<[u16]>,
}

impl PatternMix {
    /// The plan's mix: each entry sends the plan's URL template and
    /// request (its headers) with the entry's method.
    pub fn mix(&self, plan: &Plan) -> Vec<MixEntry> {
        self.entries
            .iter()
            .zip(&self.recorded)
            .map(|((method, _), recorded)| {
                let mut request = stampede_plan::RequestSpec {
                    method: method.clone(),
                    ..plan.request.clone()
                };
                request.headers.extend(recorded.headers.iter().cloned());
                if recorded.body {
                    request.body = BODY_SLOT.as_bytes().to_vec();
                }
                MixEntry {
                    target: plan.target.clone(),
                    request,
                    weight: 1,
                }
            })
            .collect()
    }

    /// The entries' names (patterns), in mix order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(_, name)| name.as_str())
    }
}

/// What a mix entry sends of its requests' recorded headers and body (a
/// HAR's; none for a log).
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// `Name: {{hdrN}}` for each header a request of the entry recorded.
    pub headers: Vec<stampede_plan::Header>,
    /// True when a request of the entry recorded a body: `{{body}}`.
    pub body: bool,
}

/// The body's slot in a mix entry that sends recorded bodies.
const BODY_SLOT: &str = "{{body}}";

/// The feeder column of recorded header `index`.
fn header_column(index: usize) -> String {
    format!("hdr{index}")
}

impl ReplayArgs {
    /// `--base`, which names where the requests go and nothing of what
    /// they ask: a path or a query would be prepended to every logged one
    /// (or swallow it), so either is refused in one line.
    fn base_target(&self) -> anyhow::Result<stampede_plan::Target> {
        let base = stampede_plan::Target::parse(&self.base)?;
        if !matches!(base.path_and_query.as_str(), "" | "/") {
            anyhow::bail!(
                "--base {}: give a scheme, host and port only (such as http://{}); each request's path and query are the log's, not '{}'",
                self.base,
                base.authority,
                base.path_and_query
            );
        }
        Ok(base)
    }

    /// Reads the log and builds the run that replays it.
    pub fn build(&self) -> anyhow::Result<ReplayRun> {
        let bytes = std::fs::read(&self.file)
            .map_err(|e| anyhow::anyhow!("{}: {e}", self.file.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        let har = match self.format.as_deref() {
            Some("har") => true,
            Some(_) => false,
            None => replay::har::looks_like_har(&text),
        };
        let format = match self.format.as_deref() {
            Some(text) if !har => Some(LogFormat::parse(text)?),
            None if !har => Some(LogFormat::parse("combined")?),
            _ => None,
        };
        if har && self.strict {
            anyhow::bail!(
                "--strict is for log lines: a HAR entry that cannot be read is already an error"
            );
        }
        let log = match &format {
            Some(format) => replay::read(&text, format, self.strict),
            None => replay::har::read(&text),
        }
        .map_err(|e| anyhow::anyhow!("{}: {e}", self.file.display()))?;
        let logs = |field: &Field| format.as_ref().is_some_and(|f| f.logs(field));
        let mut notices = log.notes.clone();
        for bad in &log.bad {
            notices.push(format!("line {} skipped: {}", bad.line, bad.why));
        }
        if log.lines_skipped > log.bad.len() as u64 {
            notices.push(format!("{} lines skipped in all", log.lines_skipped));
        }
        let selection = Selection {
            from: self.from,
            to: self.to,
            filter: self
                .filter
                .as_deref()
                .map(replay::select::StatusFilter::parse)
                .transpose()?,
            sample: self
                .sample
                .as_deref()
                .map(replay::select::parse_sample)
                .transpose()?,
        };
        let mut kept = selection.apply(&log.requests);
        if let Some(method) = &self.method {
            kept.retain(|(_, r)| r.method.eq_ignore_ascii_case(method));
        }
        if kept.is_empty() {
            anyhow::bail!(
                "{}: no request is left to send after --from, --to, --filter, --sample and --method",
                self.file.display()
            );
        }
        let rules = PatternRules::new(&self.pattern)?;
        let mut methods: Vec<&str> = kept.iter().map(|(_, r)| r.method.as_str()).collect();
        methods.sort_unstable();
        methods.dedup();
        let several_methods = methods.len() > 1;
        // Each (method, pattern) is an entry of the run's mix, so that its
        // latency is its own; line k sends entry sequence[k].
        let key = |r: &replay::LoggedRequest| {
            let pattern = rules.pattern(&r.target);
            if several_methods {
                format!("{} {pattern}", r.method)
            } else {
                pattern
            }
        };
        // Each recorded header name (case aside) is a column of the rows;
        // one given with -H replaces it.
        let mut header_names: Vec<String> = Vec::new();
        for (_, request) in &kept {
            for (name, _) in &request.headers {
                let given = self
                    .headers
                    .iter()
                    .any(|h| h.name.eq_ignore_ascii_case(name));
                if !given && !header_names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
                    header_names.push(name.clone());
                }
            }
        }
        let column_of = |name: &str| {
            header_names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(name))
        };
        let mut recorded: Vec<Recorded> = Vec::new();
        let mut entries: Vec<(String, String)> = Vec::new();
        let mut index: std::collections::HashMap<String, u16> = std::collections::HashMap::new();
        let mut per_line = Vec::with_capacity(kept.len());
        let mut over = false;
        for (_, request) in &kept {
            let name = key(request);
            let next = entries.len();
            let at = match index.get(&name) {
                Some(at) => *at,
                None if next < MAX_PATTERNS => {
                    index.insert(name.clone(), next as u16);
                    entries.push((request.method.clone(), name));
                    recorded.push(Recorded::default());
                    next as u16
                }
                None => {
                    over = true;
                    0
                }
            };
            per_line.push(at);
            if let Some(entry) = recorded.get_mut(at as usize) {
                for (name, _) in &request.headers {
                    let Some(column) = column_of(name) else {
                        continue;
                    };
                    let header = stampede_plan::Header {
                        name: header_names[column].clone(),
                        value: format!("{{{{{}}}}}", header_column(column)),
                    };
                    if !entry.headers.contains(&header) {
                        entry.headers.push(header);
                    }
                }
                entry.body |= !request.body.is_empty();
            }
        }
        // A mix even of one pattern: its order is what splits the lines
        // among the workers (the engine's listed `mix_sequence`).
        let per_pattern = !over;
        if several_methods && over {
            anyhow::bail!(
                "the log's requests have several methods ({}): over {MAX_PATTERNS} patterns a replay sends one; choose it with --method",
                methods.join(", ")
            );
        }
        let method = methods[0].to_string();
        let offsets = self.schedule(&kept);
        let base_host = self.base_target()?.authority;
        // Listed rows go with the listed mix; past the patterns' cap, the
        // workers claim the rows as they send (the count stays exact).
        let mode = match per_pattern {
            true => FeedMode::Listed,
            false => FeedMode::Unique,
        };
        let (feeder, bad_hosts) = self.rows_feeder(&kept, &base_host, &header_names, mode)?;
        if bad_hosts > 0 {
            notices.push(format!(
                "{} logged a host that is no header value (a control byte or a space): sent with the base's, {base_host}",
                stampede_report::counted(bad_hosts, "line")
            ));
        }
        let summary = summarize(&log, &kept, self.loops, &key, self.speed);
        let span = offsets.last().copied().unwrap_or_default();
        let logs_host = logs(&Field::Host) || kept.iter().any(|(_, r)| r.host.is_some());
        let logged = [
            (Column::Host, logs_host),
            (Column::UserAgent, logs(&Field::UserAgent)),
            (Column::Referer, logs(&Field::Referer)),
        ];
        let sent: Vec<Column> = logged
            .into_iter()
            .filter(|(column, logged)| {
                *logged
                    && !self
                        .headers
                        .iter()
                        .any(|h| h.name.eq_ignore_ascii_case(column.header()))
            })
            .map(|(column, _)| column)
            .collect();
        let mut args = self.run_args(&method, &sent, feeder, offsets.len() as u64, span)?;
        if !per_pattern {
            // No mix: every request sends every recorded header (empty where
            // it recorded none) and its row's body.
            for entry in &recorded {
                for header in &entry.headers {
                    if !args.headers.contains(header) {
                        args.headers.push(header.clone());
                    }
                }
            }
            if recorded.iter().any(|r| r.body) {
                args.body = Some(BODY_SLOT.to_string());
            }
        }
        let patterns = per_pattern.then(|| PatternMix {
            entries,
            recorded,
            sequence: (0..self.loops)
                .flat_map(|_| per_line.iter().copied())
                .collect(),
        });
        let offsets = match self.speed {
            Speed::Max => None,
            Speed::Factor(_) => Some(offsets.into()),
        };
        Ok(ReplayRun {
            args,
            offsets,
            summary,
            notices,
            patterns,
        })
    }

    /// The feeder of the requests' rows (path, host, ua, referer),
    /// `--loop` times over, each handed out once in order (`Listed`: worker
    /// w of N takes rows w, w + N, …, as it takes instants and mix
    /// entries), and how many
    /// lines' logged host could not be sent. nginx logs a missing header
    /// as `-`; sent as `-`, it is logged as `-` again. A line with no host
    /// (or one no header may carry) goes with `base_host`.
    fn rows_feeder(
        &self,
        kept: &[(Duration, replay::LoggedRequest)],
        base_host: &str,
        header_names: &[String],
        mode: FeedMode,
    ) -> anyhow::Result<(Arc<Feeder>, u64)> {
        let field = |text: &str| text.as_bytes().to_vec().into_boxed_slice();
        let sendable = |host: &&String| host.bytes().all(|b| b.is_ascii_graphic());
        let bad_hosts = kept
            .iter()
            .filter(|(_, r)| r.host.as_ref().is_some_and(|h| !sendable(&h)))
            .count() as u64;
        let rows = (0..self.loops).flat_map(|_| {
            kept.iter().map(|(_, request)| {
                let host = request.host.as_ref().filter(sendable);
                let mut row = vec![
                    field(request.target.strip_prefix('/').unwrap_or(&request.target)),
                    field(host.map_or(base_host, String::as_str)),
                    field(request.user_agent.as_deref().unwrap_or("-")),
                    field(request.referer.as_deref().unwrap_or("-")),
                    field(&request.body),
                ];
                row.extend(header_names.iter().map(|name| {
                    let value = request
                        .headers
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(name));
                    field(value.map_or("", |(_, v)| v.as_str()))
                }));
                row
            })
        });
        let mut columns = ["path", "host", "ua", "referer", "body"]
            .map(String::from)
            .to_vec();
        columns.extend((0..header_names.len()).map(header_column));
        let data = FeedData::from_rows(&self.file.display().to_string(), columns, rows)?;
        Ok((Arc::new(Feeder::new(data, mode)), bad_hosts))
    }

    /// Every request's offset, looped and scaled: loop k starts one mean
    /// gap after loop k − 1's last request (one second for a single line).
    fn schedule(&self, kept: &[(Duration, replay::LoggedRequest)]) -> Vec<Duration> {
        let last = kept.last().map_or(Duration::ZERO, |(o, _)| *o);
        let gap = match kept.len() {
            0 | 1 => Duration::from_secs(1),
            n => last / (n as u32 - 1).max(1),
        };
        let period = last + gap.max(Duration::from_millis(1));
        let factor = match self.speed {
            Speed::Factor(k) => k,
            Speed::Max => 1.0,
        };
        (0..self.loops)
            .flat_map(|k| {
                kept.iter()
                    .map(move |(offset, _)| (*offset + period * k as u32).div_f64(factor))
            })
            .collect()
    }

    /// The `run` arguments that send `count` requests of the feed.
    fn run_args(
        &self,
        method: &str,
        sent: &[Column],
        feeder: Arc<Feeder>,
        count: u64,
        span: Duration,
    ) -> anyhow::Result<RunArgs> {
        let base = self.base.trim_end_matches('/');
        // `/{{path}}` with the path's own `/` left out: a URL needs its `/`
        // before a slot.
        let mut args = RunArgs::for_url(&format!("{base}/{{{{path}}}}"))?;
        args.method = method.to_string();
        args.workload.built_feeders = vec![feeder];
        args.headers = self.headers.clone();
        for column in sent {
            args.headers.push(stampede_plan::Header {
                name: column.header().to_string(),
                value: format!("{{{{{}}}}}", column.name()),
            });
        }
        args.requests = Some(count);
        args.timeout = self.timeout;
        args.json = self.json.clone();
        args.output = self.output;
        args.quiet = self.quiet;
        args.exports = self.exports.clone();
        args.threads = Some(self.threads);
        if self.keep_order {
            if self.connections.is_some_and(|c| c != 1) || self.threads != 1 {
                anyhow::bail!(
                    "--keep-order sends on one connection from one thread: drop -c and -t"
                );
            }
            args.connections = Some(1);
        } else {
            args.connections = self.connections;
        }
        if let Speed::Factor(_) = self.speed {
            // The open model at the offsets' average rate, shown in the
            // header; the engine sends at the listed offsets.
            args.rate = Some(average_rate(count, span));
        }
        Ok(args)
    }
}

/// The most URI patterns (times methods) with figures of their own: the
/// most requests of a mix.
const MAX_PATTERNS: usize = 1000;

/// Requests per second over the replay's span (at least a millisecond).
fn average_rate(count: u64, span: Duration) -> f64 {
    count as f64 / span.as_secs_f64().max(0.001)
}

/// A logged header the feeder's rows carry, sent again.
#[derive(Debug, Clone, Copy)]
enum Column {
    Host,
    UserAgent,
    Referer,
}

impl Column {
    /// Its column in the feeder.
    fn name(self) -> &'static str {
        match self {
            Column::Host => "host",
            Column::UserAgent => "ua",
            Column::Referer => "referer",
        }
    }

    /// The header it is sent as.
    fn header(self) -> &'static str {
        match self {
            Column::Host => "Host",
            Column::UserAgent => "User-Agent",
            Column::Referer => "Referer",
        }
    }
}

/// The result's `replay` object: lines, requests, and per URI pattern the
/// count and what the log recorded, most requests first.
fn summarize(
    log: &replay::AccessLog,
    kept: &[(Duration, replay::LoggedRequest)],
    loops: u64,
    key: &dyn Fn(&replay::LoggedRequest) -> String,
    speed: Speed,
) -> stampede_metrics::ReplayResult {
    use std::collections::BTreeMap;
    struct Tally {
        count: u64,
        status: BTreeMap<String, u64>,
        times: Vec<Duration>,
    }
    let mut groups: BTreeMap<String, Tally> = BTreeMap::new();
    for (_, request) in kept {
        let tally = groups.entry(key(request)).or_insert(Tally {
            count: 0,
            status: BTreeMap::new(),
            times: Vec::new(),
        });
        tally.count += loops;
        if let Some(status) = request.status {
            *tally.status.entry(status.to_string()).or_default() += loops;
        }
        tally.times.extend(request.request_time);
    }
    let mut groups: Vec<stampede_metrics::ReplayGroup> = groups
        .into_iter()
        .map(|(pattern, mut tally)| stampede_metrics::ReplayGroup {
            pattern,
            count: tally.count,
            recorded_status: tally.status,
            recorded: stampede_metrics::RecordedTimes::of(&mut tally.times),
            latency_us: None,
            status: BTreeMap::new(),
        })
        .collect();
    groups.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.pattern.cmp(&b.pattern))
    });
    stampede_metrics::ReplayResult {
        lines_read: log.lines_read,
        lines_skipped: log.lines_skipped,
        requests_sent: kept.len() as u64 * loops,
        speed: match speed {
            Speed::Factor(k) => Some(k),
            Speed::Max => None,
        },
        groups,
    }
}
