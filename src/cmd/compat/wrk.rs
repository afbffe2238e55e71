//! `stampede wrk`: wrk's command line (`-t4 -c500 -d10s --latency`, SI
//! suffixes like `-c1k`, wrk2's `-R` rate), translated into `stampede run`
//! words and printed in wrk's layout: Thread Stats (Latency, Req/Sec),
//! Latency Distribution, requests/bytes, socket errors, Requests/sec and
//! Transfer/sec, with wrk's own unit formatting.
//!
//! Deliberately not here: Lua scripting (`-s` is refused), the engine.

use super::getopt::{split, tokenize, OptSpec};
use super::{one_url, refuse, usage, Translated, STAMPEDE_JSON};
use stampede_metrics::RunResult;
use stampede_plan::parse_duration;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

const TOOL: &str = "wrk";

pub const HELP: &str = "\
Usage: stampede wrk <options> <url>
  Options:
    -c, --connections <N>  Connections to keep open (default 10)
    -d, --duration    <T>  Duration of test (default 10s)
    -t, --threads     <N>  Number of threads to use (default 2)

    -s, --script      <S>  Refused: Lua scripts are not supported
    -H, --header      <H>  Add header to request
    -L, --latency          Print latency statistics
    -T, --timeout     <T>  Socket/request timeout (default 2s)
    -R, --rate        <T>  wrk2: requests/sec in total (open model)
    -v, --version          Print version details
    -h, --help             This help
        --stampede-json <P>  stampede only: also write the full JSON result to P

  Numeric arguments may include a SI unit (1k, 1M, 1G)
  Time arguments may include a time unit (2s, 2m, 2h)

Example:
  stampede wrk -t4 -c1000 -d10s --latency http://localhost:8080/view";

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
            "script" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "Lua scripts are not supported; `stampede run` has -m, -H, -b for the request",
                ))
            }
            "header" => o.headers.push(value),
            "latency" => o.latency = true,
            "timeout" => o.timeout = parse_time(f, &value)?,
            "rate" => o.rate = Some(parse_metric(f, &value)?),
            "stampede-json" => o.stampede_json = Some(PathBuf::from(value)),
            other => return Err(usage(TOOL, format!("option {other} is not handled"))),
        }
    }
    o.url = one_url(TOOL, urls, "a URL is required")?;
    if o.connections < o.threads {
        return Err(usage(TOOL, "number of connections must be >= threads"));
    }
    Ok(Parsed::Run(o))
}

impl WrkOptions {
    /// wrk keeps every connection open (HTTP/1.1 keep-alive); its timeout
    /// covers connecting and responding alike.
    fn translate(&self) -> Translated {
        let timeout = stampede_plan::format_duration(self.timeout);
        let mut w = vec![
            self.url.clone(),
            "-c".into(),
            self.connections.to_string(),
            "-t".into(),
            self.threads.to_string(),
            "-d".into(),
            stampede_plan::format_duration(self.duration),
            "--timeout".into(),
            timeout.clone(),
            "--connect-timeout".into(),
            timeout,
        ];
        for header in &self.headers {
            w.push("-H".into());
            w.push(header.clone());
        }
        // wrk does not verify server certificates; neither does its front-end.
        if self.url.to_ascii_lowercase().starts_with("https://") {
            w.push("--insecure".into());
        }
        if let Some(rate) = self.rate {
            w.push("-r".into());
            w.push(rate.to_string());
        }
        Translated {
            tool: TOOL,
            run_words: w,
            stampede_json: self.stampede_json.clone(),
            quiet: false,
        }
    }
}

/// wrk's unit tables (units.c): a scale, the base unit and the larger ones.
struct Units {
    scale: f64,
    base: &'static str,
    units: &'static [&'static str],
}

const TIME_US: Units = Units {
    scale: 1000.0,
    base: "us",
    units: &["ms", "s"],
};
const TIME_S: Units = Units {
    scale: 60.0,
    base: "s",
    units: &["m", "h"],
};
const BINARY: Units = Units {
    scale: 1024.0,
    base: "",
    units: &["K", "M", "G", "T", "P"],
};
const METRIC: Units = Units {
    scale: 1000.0,
    base: "",
    units: &["k", "M", "G", "T", "P"],
};

/// wrk's `format_units`: moves up a unit from 85% of the scale on, never to
/// the last unit of the table (wrk's loop stops one short).
fn format_units(n: f64, units: &Units, precision: usize) -> String {
    let mut amount = n;
    let mut unit = units.base;
    let mut i = 0;
    while i + 1 < units.units.len() && amount >= units.scale * 0.85 {
        amount /= units.scale;
        unit = units.units[i];
        i += 1;
    }
    format!("{amount:.precision$}{unit}")
}

fn format_time_us(us: f64) -> String {
    if us >= 1_000_000.0 {
        format_units(us / 1_000_000.0, &TIME_S, 2)
    } else {
        format_units(us, &TIME_US, 2)
    }
}

fn format_binary(bytes: f64) -> String {
    format_units(bytes, &BINARY, 2)
}

fn format_metric(n: f64) -> String {
    format_units(n, &METRIC, 2)
}

/// wrk's `print_units`: right-aligned in `width`, with the padding shrunk by
/// one for each trailing unit letter so that numbers line up.
fn cell(text: &str, width: usize) -> String {
    let bytes = text.as_bytes();
    let mut pad = 2usize;
    for back in 1..=2 {
        if bytes.len() >= back && bytes[bytes.len() - back].is_ascii_alphabetic() {
            pad -= 1;
        }
    }
    let w = width - pad;
    format!("{text:>w$.w$}{}", &"  "[..pad])
}

/// One Thread Stats row: mean, stdev, max and the share within ±1 stdev.
fn stats_row(name: &str, stats: [f64; 4], fmt: fn(f64) -> String) -> String {
    let [mean, stdev, max, within] = stats;
    format!(
        "    {name:<10}{}{}{}{within:>8.2}%",
        cell(&fmt(mean), 8),
        cell(&fmt(stdev), 10),
        cell(&fmt(max), 9)
    )
}

/// wrk's `RECORD_INTERVAL_MS`: each thread records its rate this often.
const RECORD_INTERVAL: Duration = Duration::from_millis(100);

/// Req/Sec: mean, stdev, max and share within ±1 stdev of the samples, each
/// one thread's requests per second in one of its 100 ms windows (wrk's
/// `record_rate`). A run too short for a full window falls back to the
/// run's rate split over the threads.
fn req_per_thread(result: &RunResult, samples: &[f64]) -> [f64; 4] {
    let fallback = [result.rps / result.plan.threads.max(1) as f64];
    let samples = if samples.is_empty() {
        &fallback[..]
    } else {
        samples
    };
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let stdev = if samples.len() > 1 {
        (samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let max = samples.iter().copied().fold(0.0, f64::max);
    let within = samples
        .iter()
        .filter(|x| (*x - mean).abs() <= stdev)
        .count() as f64;
    [mean, stdev, max, 100.0 * within / n]
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

fn render(
    result: &RunResult,
    rates: &[f64],
    latency: bool,
    closing: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let l = &result.latency_us;
    if result.interrupted {
        writeln!(
            out,
            "  INTERRUPTED: the figures cover what completed before the stop"
        )?;
    }
    writeln!(
        out,
        "  Thread Stats{:>6}{:>11}{:>8}{:>12}",
        "Avg", "Stdev", "Max", "+/- Stdev"
    )?;
    let latency_stats = [l.mean, l.stdev, l.max as f64, l.within_stdev_pct];
    writeln!(
        out,
        "{}",
        stats_row("Latency", latency_stats, format_time_us)
    )?;
    writeln!(
        out,
        "{}",
        stats_row("Req/Sec", req_per_thread(result, rates), format_metric)
    )?;
    if latency {
        writeln!(out, "  Latency Distribution")?;
        for (pct, us) in [(50, l.p50), (75, l.p75), (90, l.p90), (99, l.p99)] {
            writeln!(out, "{pct:>7}%{}", cell(&format_time_us(us as f64), 10))?;
        }
    }
    writeln!(
        out,
        "  {} requests in {}, {}B read",
        result.requests.completed,
        format_time_us(result.elapsed_s * 1e6),
        format_binary(result.bytes.received as f64)
    )?;
    let error = |kind: &str| result.errors.get(kind).copied().unwrap_or(0);
    let connect = error("connect_refused") + error("connect_timeout");
    let timeout = error("timeout");
    let read = result.requests.errors.saturating_sub(connect + timeout);
    if connect + read + timeout > 0 {
        writeln!(
            out,
            "  Socket errors: connect {connect}, read {read}, write 0, timeout {timeout}"
        )?;
    }
    if result.requests.failed_status > 0 {
        writeln!(
            out,
            "  Non-2xx or 3xx responses: {}",
            result.requests.failed_status
        )?;
    }
    writeln!(out, "Requests/sec: {:>9.2}", result.rps)?;
    writeln!(
        out,
        "Transfer/sec: {:>10}B",
        format_binary(result.throughput_bytes_per_s)
    )?;
    writeln!(out, "{closing}")
}

/// `stampede wrk WORDS...`.
pub fn execute(words: Vec<String>) -> anyhow::Result<i32> {
    super::execute(parse(&words)?, HELP, "wrk")
}

impl super::FrontEnd for WrkOptions {
    fn translate(&self) -> Translated {
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
        Ok(render(result, &watch.rates, self.latency, closing, out)?)
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

    #[test]
    fn the_seed_line_translates() {
        let o = options("-t4 -c500 -d10s http://localhost:8080/view");
        assert_eq!(
            o.translate().run_words.join(" "),
            "http://localhost:8080/view -c 500 -t 4 -d 10s --timeout 2s --connect-timeout 2s"
        );
        let o = options("-t4 -c1k -d 1m --latency -R 2k -H X:1 http://h/");
        assert_eq!((o.connections, o.rate, o.latency), (1000, Some(2000), true));
        assert!(o
            .translate()
            .run_words
            .join(" ")
            .ends_with("-d 60s --timeout 2s --connect-timeout 2s -H X:1 -r 2000"));
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
        assert!(err("-s x.lua http://h/").starts_with("wrk -s: not supported"));
        assert!(err("-t 8 -c 4 http://h/").contains("connections must be >= threads"));
        assert!(err("-c abc http://h/").contains("invalid value for -c"));
        assert!(err("-d 0 http://h/").contains("invalid value for -d"));
    }

    #[test]
    fn units_format_like_wrk() {
        assert_eq!(format_time_us(2010.0), "2.01ms");
        assert_eq!(format_time_us(849.0), "849.00us");
        assert_eq!(format_time_us(850.0), "0.85ms");
        assert_eq!(format_time_us(10_090_000.0), "10.09s");
        assert_eq!(format_time_us(90_000_000.0), "1.50m");
        assert_eq!(format_binary(243.36 * 1024.0 * 1024.0), "243.36M");
        assert_eq!(format_binary(512.0), "512.00");
        assert_eq!(format_metric(49_390.0), "49.39k");
        assert_eq!(format_units(10.0, &TIME_S, 0), "10s");
    }

    #[test]
    fn rows_line_up_like_wrk() {
        assert_eq!(
            stats_row("Latency", [2010.0, 2470.0, 38220.0, 89.75], format_time_us),
            "    Latency     2.01ms    2.47ms  38.22ms   89.75%"
        );
        assert_eq!(
            stats_row(
                "Req/Sec",
                [49_390.0, 8_210.0, 68_270.0, 70.18],
                format_metric
            ),
            "    Req/Sec    49.39k     8.21k   68.27k    70.18%"
        );
    }
}
