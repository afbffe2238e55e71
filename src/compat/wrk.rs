//! `stampede wrk`: wrk's command line (`-t4 -c500 -d10s --latency`, SI
//! suffixes like `-c1k`, wrk2's `-R` rate), translated into typed `stampede
//! run` arguments and printed in wrk's layout: Thread Stats (Latency, Req/Sec),
//! Latency Distribution, requests/bytes, socket errors, Requests/sec and
//! Transfer/sec, with wrk's own unit formatting (that layout is stampede-report's compat/wrk.rs).
//!
//! `-s script.lua URL -- args` runs the script as `stampede run --script`
//! does (crates/stampede-lua). Deliberately not here: the engine.

use super::getopt::{split, tokenize, OptSpec};
use super::{base_args, headers, one_url, usage, Translated, STAMPEDE_JSON};
use stampede_metrics::RunResult;
use stampede_plan::{parse_duration, Setting};
use stampede_report::compat::{format_units, render_wrk, RECORD_INTERVAL, TIME_S};
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

const TOOL: &str = "wrk";

pub const HELP: &str = "\
Usage: stampede wrk <options> <url> [-- <script args>]
  Options:
    -c, --connections <N>  Connections to keep open (default 10)
    -d, --duration    <T>  Duration of test (default 10s)
    -t, --threads     <N>  Number of threads to use (default 2)

    -s, --script      <S>  Load Lua script file (wrk's API: docs/lua.md)
    -H, --header      <H>  Add header to request
    -L, --latency          Print latency statistics
    -T, --timeout     <T>  Socket/request timeout (default 2s)
    -R, --rate        <T>  wrk2: requests/sec in total (open model)
    -v, --version          Print version details
    -h, --help             This help
        --stampede-json <P>  stampede only: also write the full JSON result to P
        --capture-max <SIZE> stampede only: most of a body response() gets (default 64KiB)
        --hlog <P>           stampede only: write an HdrHistogram interval log to P
        --hlog-interval <T>  stampede only: its interval (default 1s)

  Numeric arguments may include a SI unit (1k, 1M, 1G)
  Time arguments may include a time unit (2s, 2m, 2h)

Example:
  stampede wrk -t4 -c1000 -d10s --latency http://localhost:8080/view
  stampede wrk -t2 -c10 -d10s -s counter.lua http://localhost:8080/ -- arg1";

const SPECS: &[OptSpec] = &[
    OptSpec::both("connections", 'c', "connections", true),
    OptSpec::both("duration", 'd', "duration", true),
    OptSpec::both("threads", 't', "threads", true),
    OptSpec::both("script", 's', "script", true),
    OptSpec::both("header", 'H', "header", true),
    OptSpec::both("latency", 'L', "latency", false),
    OptSpec::both("timeout", 'T', "timeout", true),
    OptSpec::both("rate", 'R', "rate", true),
    OptSpec::both("version", 'v', "version", false),
    OptSpec::both("help", 'h', "help", false),
    STAMPEDE_JSON,
    OptSpec::long("capture-max", "capture-max", true),
    OptSpec::long("hlog", "hlog", true),
    OptSpec::long("hlog-interval", "hlog-interval", true),
];

type Parsed = super::Parsed<WrkOptions>;

#[derive(Debug, PartialEq)]
struct WrkOptions {
    url: String,
    connections: u64,
    duration: Duration,
    threads: u64,
    headers: Vec<String>,
    latency: bool,
    timeout: Duration,
    rate: Option<u64>,
    stampede_json: Option<PathBuf>,
    /// stampede's `--hlog` and `--hlog-interval`.
    hlog: Option<PathBuf>,
    hlog_interval: Duration,
    /// stampede's `--capture-max`: the most of a body `response()` gets
    /// (wrk gives the whole body; stampede keeps 64 KiB unless told).
    capture_max: Option<usize>,
    script: Option<PathBuf>,
    /// The words after the URL (after `--`): the script's `init(args)`.
    script_args: Vec<String>,
}

/// wrk's `scan_metric`: a number with an optional k, M, G (powers of 1000).
fn parse_metric(flag: &str, text: &str) -> anyhow::Result<u64> {
    let bad = || usage(TOOL, format!("invalid value for {flag}: '{text}'"));
    let trimmed = text.trim();
    let (number, scale) = match trimmed.chars().last() {
        Some('k' | 'K') => (&trimmed[..trimmed.len() - 1], 1e3),
        Some('m' | 'M') => (&trimmed[..trimmed.len() - 1], 1e6),
        Some('g' | 'G') => (&trimmed[..trimmed.len() - 1], 1e9),
        _ => (trimmed, 1.0),
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let scaled = (value * scale).round();
    if !(scaled.is_finite() && scaled >= 1.0 && scaled < u64::MAX as f64) {
        return Err(bad());
    }
    Ok(scaled as u64)
}

fn parse_time(flag: &str, text: &str) -> anyhow::Result<Duration> {
    match parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(usage(TOOL, format!("invalid value for {flag}: '{text}'"))),
    }
}

fn parse(words: &[String]) -> anyhow::Result<Parsed> {
    let tokens = tokenize(SPECS, words).map_err(|e| usage(TOOL, e))?;
    let mut o = WrkOptions {
        url: String::new(),
        connections: 10,
        duration: Duration::from_secs(10),
        threads: 2,
        headers: Vec::new(),
        latency: false,
        timeout: Duration::from_secs(2),
        rate: None,
        stampede_json: None,
        hlog: None,
        hlog_interval: Duration::from_secs(1),
        capture_max: None,
        script: None,
        script_args: Vec::new(),
    };
    let (options, urls) = split(tokens);
    for (key, spelled, value) in options {
        let f = spelled.as_str();
        match key {
            "help" => return Ok(Parsed::Help),
            "version" => return Ok(Parsed::Version),
            "connections" => o.connections = parse_metric(f, &value)?,
            "duration" => o.duration = parse_time(f, &value)?,
            "threads" => o.threads = parse_metric(f, &value)?,
            "script" => o.script = Some(PathBuf::from(value)),
            "header" => o.headers.push(value),
            "latency" => o.latency = true,
            "timeout" => o.timeout = parse_time(f, &value)?,
            "rate" => o.rate = Some(parse_metric(f, &value)?),
            "stampede-json" => o.stampede_json = Some(PathBuf::from(value)),
            "hlog" => o.hlog = Some(PathBuf::from(value)),
            "hlog-interval" => {
                o.hlog_interval = crate::process::hlog_file::parse_hlog_interval(&value)
                    .map_err(|e| usage(TOOL, format!("invalid value for {f}: {e}")))?;
            }
            "capture-max" => {
                let size = stampede_workload::parse_size(&value).filter(|&b| b >= 1.0);
                let bytes = size.ok_or_else(|| {
                    usage(
                        TOOL,
                        format!(
                            "invalid value for {f}: '{value}' (a size such as 64KiB, 1MiB or 4096)"
                        ),
                    )
                })?;
                o.capture_max = Some(bytes as usize);
            }
            other => return Err(usage(TOOL, format!("option {other} is not handled"))),
        }
    }
    let mut urls = urls;
    // With a script, the words after the URL are its arguments (wrk's `--`).
    if o.script.is_some() && urls.len() > 1 {
        o.script_args = urls.split_off(1);
    }
    o.url = one_url(TOOL, urls, "a URL is required")?;
    if o.connections < o.threads {
        return Err(usage(TOOL, "number of connections must be >= threads"));
    }
    Ok(Parsed::Run(o))
}

/// wrk's flag for a plan setting, for errors.
fn wrk_flag(setting: Setting) -> Option<&'static str> {
    match setting {
        Setting::Connections => Some("-c"),
        Setting::Threads => Some("-t"),
        Setting::Duration => Some("-d"),
        Setting::Timeouts => Some("-T"),
        Setting::Rate => Some("-R"),
        _ => None,
    }
}

impl WrkOptions {
    /// wrk keeps every connection open (HTTP/1.1 keep-alive); its timeout
    /// covers connecting and responding alike.
    fn translate(&self) -> anyhow::Result<Translated> {
        let mut args = base_args(TOOL, &self.url)?;
        args.connections = Some(usize::try_from(self.connections).unwrap_or(usize::MAX));
        args.threads = Some(usize::try_from(self.threads).unwrap_or(usize::MAX));
        args.duration = Some(self.duration);
        args.timeout = self.timeout;
        args.connect_timeout = self.timeout;
        args.headers = headers(TOOL, "-H", &self.headers)?;
        // wrk does not verify server certificates; neither does its front-end.
        args.transport.insecure = self.url.to_ascii_lowercase().starts_with("https://");
        args.rate = self.rate.map(|rate| rate as f64);
        args.script.script = self.script.clone();
        args.exports.hlog = self.hlog.clone();
        args.exports.hlog_interval = self.hlog_interval;
        args.script.script_args = self.script_args.clone();
        if let Some(bytes) = self.capture_max {
            args.workload.capture_max = bytes;
        }
        Ok(Translated {
            tool: TOOL,
            args,
            flags: wrk_flag,
            stampede_json: self.stampede_json.clone(),
            quiet: false,
        })
    }
}

fn write_header(o: &WrkOptions, out: &mut dyn Write) -> io::Result<()> {
    let running = if o.duration.subsec_nanos() == 0 {
        format_units(o.duration.as_secs_f64(), &TIME_S, 0)
    } else {
        stampede_plan::format_duration(o.duration)
    };
    writeln!(out, "Running {running} test @ {}", o.url)?;
    writeln!(
        out,
        "  {} threads and {} connections",
        o.threads, o.connections
    )
}

/// `stampede wrk WORDS...`.
pub fn execute(words: Vec<String>) -> anyhow::Result<i32> {
    super::execute(parse(&words)?, HELP, "wrk")
}

impl super::FrontEnd for WrkOptions {
    fn translate(&self) -> anyhow::Result<Translated> {
        WrkOptions::translate(self)
    }
    fn watch(&self) -> super::WatchSpec {
        super::WatchSpec {
            rate_window: Some(RECORD_INTERVAL),
            ..super::WatchSpec::default()
        }
    }
    fn write_header(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        Ok(write_header(self, out)?)
    }
    /// wrk: "unable to connect to 127.0.0.1:1 Connection refused".
    fn unable_to_connect(&self, result: &RunResult) -> Option<String> {
        let target = stampede_plan::Target::parse(&result.plan.url).ok()?;
        let (reason, _) = super::first_error(result);
        Some(format!(
            "unable to connect to {}:{} {reason}",
            target.host, target.port
        ))
    }
    fn write_report(
        &self,
        result: &RunResult,
        watch: &mut super::Watch,
        closing: &str,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        Ok(render_wrk(
            result,
            &watch.rates,
            self.latency,
            closing,
            out,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(line: &str) -> WrkOptions {
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        match parse(&words).unwrap() {
            Parsed::Run(o) => o,
            other => panic!("{other:?}"),
        }
    }

    /// The rendered equivalent line, checked to read back the same.
    fn run_words(o: &WrkOptions) -> String {
        let args = o.translate().unwrap().args;
        crate::flags::run_words::tests::assert_faithful(&args);
        crate::flags::run_words::shell_words(&crate::flags::run_words::run_words(&args))
    }

    #[test]
    fn the_seed_line_translates() {
        let o = options("-t4 -c500 -d10s http://localhost:8080/view");
        assert_eq!(
            run_words(&o),
            "http://localhost:8080/view -c 500 -t 4 -d 10s --timeout 2s --connect-timeout 2s"
        );
        let o = options("-t4 -c1k -d 1m --latency -R 2k -H X:1 http://h/");
        assert_eq!((o.connections, o.rate, o.latency), (1000, Some(2000), true));
        assert!(
            run_words(&o).ends_with("-r 2000 -d 60s -H 'X: 1' --timeout 2s --connect-timeout 2s")
        );
        assert!(run_words(&options("https://h/")).ends_with(" --insecure"));
    }

    #[test]
    fn defaults_and_errors() {
        let o = options("http://h/");
        assert_eq!(
            (o.connections, o.threads, o.duration),
            (10, 2, Duration::from_secs(10))
        );
        let err = |line: &str| {
            let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            parse(&words).unwrap_err().to_string()
        };
        assert!(err("http://h/ extra").contains("one URL expected, got 2"));
        assert!(err("-t 8 -c 4 http://h/").contains("connections must be >= threads"));
        assert!(err("-c abc http://h/").contains("invalid value for -c"));
        assert!(err("-d 0 http://h/").contains("invalid value for -d"));
    }

    #[test]
    fn a_script_and_its_arguments_go_to_run() {
        let o = options("-s counter.lua -c 2 -t 1 http://h/ -- a b");
        assert_eq!(
            o.script.as_deref(),
            Some(std::path::Path::new("counter.lua"))
        );
        assert_eq!(o.script_args, ["a", "b"]);
        let words = run_words(&o);
        assert!(words.starts_with("http://h/ -c 2 -t 1 "), "{words}");
        assert!(words.ends_with(" --script counter.lua -- a b"), "{words}");
        let o = options("--script=post.lua http://h/");
        assert!(run_words(&o).ends_with("--script post.lua"));
    }

    #[test]
    fn hlog_goes_to_run() {
        let o = options("--hlog run.hlog --hlog-interval 100ms http://h/");
        let words = run_words(&o);
        assert!(
            words.contains("--hlog run.hlog --hlog-interval 100ms"),
            "{words}"
        );
    }

    #[test]
    fn capture_max_goes_to_run_and_reads_back() {
        let o = options("-s big.lua --capture-max 1MiB http://h/");
        assert_eq!(o.capture_max, Some(1024 * 1024));
        let words = run_words(&o);
        assert!(
            words.ends_with("--capture-max 1048576 --script big.lua"),
            "{words}"
        );
        let words: Vec<String> = ["--capture-max", "lots", "http://h/"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        let err = parse(&words).unwrap_err().to_string();
        assert!(err.contains("--capture-max"), "{err}");
    }
}
