//! `stampede press`: the command line of kedao's/cinatra's press tool
//! (`-t 2 -c 40 -d 30s -H 'A: b && C: d'`), translated into typed
//! `stampede run` arguments and printed in its layout (latency avg/max/variation/stdev, requests,
//! bytes, errors, Requests/sec, Transfer/sec), with honest figures: the real
//! mean, variance and stdev of every response, not (min+max)/2 per batch.
//!
//! Deliberately not here: the engine; `-r` (read fixed-length responses) is
//! a client shortcut that stampede does not need and says so.

use super::getopt::{split, tokenize, OptSpec};
use super::{base_args, headers, one_url, usage, Translated, STAMPEDE_JSON};
use stampede_metrics::RunResult;
use stampede_plan::{parse_duration, Setting};
use stampede_report::compat::render_press;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

const TOOL: &str = "press";

pub const HELP: &str = "\
usage: stampede press --connections=int [options] ... url
options:
  -c, --connections    total number of HTTP connections to keep open with each thread handling N = connections/threads (int)
  -d, --duration       duration of the test, e.g. 2s, 2m, 2h (string [=15s])
  -t, --threads        total number of threads to use (int [=1])
  -H, --headers        HTTP headers to add to request, e.g. \"User-Agent: coro_http_press\"
                       add multiple http headers in a request need to be separated by ' && '
                       e.g. \"User-Agent: coro_http_press && x-frame-options: SAMEORIGIN\" (string [=])
  -r, --readfix        read fixed response (int [=0]); stampede parses every response anyway
  -?, --help           print this message
      --stampede-json  stampede only: also write the full JSON result to this path (string)

Example:
  stampede press -t 2 -c 40 -d 30s http://127.0.0.1/";

const SPECS: &[OptSpec] = &[
    OptSpec::both("connections", 'c', "connections", true),
    OptSpec::both("duration", 'd', "duration", true),
    OptSpec::both("threads", 't', "threads", true),
    OptSpec::both("headers", 'H', "headers", true),
    OptSpec::both("readfix", 'r', "readfix", true),
    OptSpec::both("help", '?', "help", false),
    STAMPEDE_JSON,
];

type Parsed = super::Parsed<PressOptions>;

#[derive(Debug, PartialEq)]
struct PressOptions {
    url: String,
    connections: u64,
    duration: Duration,
    threads: u64,
    headers: Vec<String>,
    readfix: u64,
    stampede_json: Option<PathBuf>,
}

fn whole(flag: &str, value: &str) -> anyhow::Result<u64> {
    value
        .trim()
        .parse()
        .map_err(|_| usage(TOOL, format!("option value is invalid: {flag}={value}")))
}

/// The press tool joins headers with ` && `; spaces around `&&` are optional here.
fn split_headers(text: &str) -> Vec<String> {
    text.split("&&")
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect()
}

fn parse(words: &[String]) -> anyhow::Result<Parsed> {
    let tokens = tokenize(SPECS, words).map_err(|e| usage(TOOL, e))?;
    let mut connections = None;
    let mut o = PressOptions {
        url: String::new(),
        connections: 0,
        duration: Duration::from_secs(15),
        threads: 1,
        headers: Vec::new(),
        readfix: 0,
        stampede_json: None,
    };
    let (options, urls) = split(tokens);
    for (key, spelled, value) in options {
        let f = spelled.as_str();
        match key {
            "help" => return Ok(Parsed::Help),
            "connections" => connections = Some(whole(f, &value)?),
            "duration" => {
                o.duration = match parse_duration(&value) {
                    Ok(d) if !d.is_zero() => d,
                    _ => return Err(usage(TOOL, format!("option value is invalid: {f}={value}"))),
                }
            }
            "threads" => o.threads = whole(f, &value)?,
            "headers" => o.headers.extend(split_headers(&value)),
            "readfix" => o.readfix = whole(f, &value)?,
            "stampede-json" => o.stampede_json = Some(PathBuf::from(value)),
            other => return Err(usage(TOOL, format!("option {other} is not handled"))),
        }
    }
    o.connections = connections.ok_or_else(|| usage(TOOL, "need option: connections"))?;
    o.url = one_url(TOOL, urls, "lack of url")?;
    if o.threads == 0 || o.connections == 0 {
        return Err(usage(TOOL, "connections and threads must be at least 1"));
    }
    if o.threads > o.connections {
        return Err(usage(TOOL, "number of connections must be >= threads"));
    }
    Ok(Parsed::Run(o))
}

/// press's flag for a plan setting, for errors.
fn press_flag(setting: Setting) -> Option<&'static str> {
    match setting {
        Setting::Connections => Some("-c"),
        Setting::Threads => Some("-t"),
        Setting::Duration => Some("-d"),
        _ => None,
    }
}

impl PressOptions {
    /// Keep-alive GETs on every connection, as the press tool's clients send.
    fn translate(&self) -> anyhow::Result<Translated> {
        let mut args = base_args(TOOL, &self.url)?;
        args.connections = Some(usize::try_from(self.connections).unwrap_or(usize::MAX));
        args.threads = Some(usize::try_from(self.threads).unwrap_or(usize::MAX));
        args.duration = Some(self.duration);
        args.headers = headers(TOOL, "-H", &self.headers)?;
        Ok(Translated {
            tool: TOOL,
            args,
            flags: press_flag,
            stampede_json: self.stampede_json.clone(),
            quiet: false,
        })
    }
}

/// The lines before the run: the press tool opens every connection first
/// and says so, then starts the clock. stampede's engine opens them as the
/// run starts, so the first line waits until that many are open (the
/// snapshot stream says when; src/compat/watch.rs prints them).
fn header_lines(o: &PressOptions) -> Vec<String> {
    vec![
        format!("create {} connections successfully", o.connections),
        format!(
            "Running {} test @ {}",
            stampede_plan::format_duration(o.duration),
            o.url
        ),
        format!("  {} threads and {} connections", o.threads, o.connections),
    ]
}

/// The header, when the run ended before all connections were open: no
/// claim of success, but how many could be opened.
fn late_header(o: &PressOptions, watch: &mut super::Watch, out: &mut dyn Write) -> io::Result<()> {
    let mut lines = watch.pending_lines();
    if lines.is_empty() {
        return Ok(());
    }
    lines[0] = format!(
        "create connections failed: {} of {} opened",
        watch.opened(),
        o.connections
    );
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// `stampede press WORDS...`.
pub fn execute(words: Vec<String>) -> anyhow::Result<i32> {
    super::execute(parse(&words)?, HELP, "press")
}

impl super::FrontEnd for PressOptions {
    fn notes(&self) -> Vec<String> {
        if self.readfix == 0 {
            return Vec::new();
        }
        vec![format!(
            "-r {}: stampede parses every response whatever its length, so the fixed-length shortcut is not needed",
            self.readfix
        )]
    }
    fn translate(&self) -> anyhow::Result<Translated> {
        PressOptions::translate(self)
    }
    fn watch(&self) -> super::WatchSpec {
        super::WatchSpec {
            on_connected: Some((self.connections, header_lines(self))),
            ..super::WatchSpec::default()
        }
    }
    fn write_header(&self, _out: &mut dyn Write) -> anyhow::Result<()> {
        // Printed by the watcher once the connections are open.
        Ok(())
    }
    fn write_report(
        &self,
        result: &RunResult,
        watch: &mut super::Watch,
        closing: &str,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        late_header(self, watch, out)?;
        Ok(render_press(result, closing, out)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_seed_line_translates_with_joined_headers() {
        let line = words(&[
            "-t",
            "2",
            "-c",
            "40",
            "-d",
            "30s",
            "-H",
            "User-Agent: coro_http_press && x-frame-options: SAMEORIGIN",
            "http://127.0.0.1",
        ]);
        let Parsed::Run(o) = parse(&line).unwrap() else {
            panic!("not a run")
        };
        let args = o.translate().unwrap().args;
        crate::flags::run_words::tests::assert_faithful(&args);
        assert_eq!(
            crate::flags::run_words::run_words(&args),
            words(&[
                "http://127.0.0.1",
                "-c",
                "40",
                "-t",
                "2",
                "-d",
                "30s",
                "-H",
                "User-Agent: coro_http_press",
                "-H",
                "x-frame-options: SAMEORIGIN"
            ])
        );
    }

    #[test]
    fn headers_split_on_double_ampersand() {
        assert_eq!(
            split_headers("A: 1 && B: 2&&C: 3"),
            vec!["A: 1", "B: 2", "C: 3"]
        );
        assert_eq!(split_headers(""), Vec::<String>::new());
    }

    #[test]
    fn required_connections_and_thread_limits() {
        let err = |line: &[&str]| parse(&words(line)).unwrap_err().to_string();
        assert!(err(&["http://h/"]).contains("need option: connections"));
        assert!(
            err(&["-c", "2", "-t", "4", "http://h/"]).contains("connections must be >= threads")
        );
        assert!(err(&["-c", "2"]).contains("lack of url"));
        assert!(err(&["-c", "x", "http://h/"]).contains("option value is invalid: -c=x"));
        assert_eq!(parse(&words(&["-?"])).unwrap(), Parsed::Help);
        let Parsed::Run(o) = parse(&words(&["--connections=4", "-r1", "http://h/"])).unwrap()
        else {
            panic!("not a run")
        };
        assert_eq!(
            (o.connections, o.readfix, o.duration),
            (4, 1, Duration::from_secs(15))
        );
    }
}
