//! wrk's report layout, filled from a stampede result: Thread Stats
//! (Latency, Req/Sec per thread and 100 ms window), the Latency
//! Distribution, requests and bytes, socket errors, Requests/sec and
//! Transfer/sec, with wrk's own unit formatting (`2.01ms`, `49.39k`,
//! `243.36M`). The options and the translation to `stampede run` are the
//! binary's compat/wrk.rs.

use stampede_metrics::RunResult;
use std::io::{self, Write};
use std::time::Duration;

/// wrk's unit tables (units.c): a scale, the base unit and the larger ones.
pub struct Units {
    scale: f64,
    base: &'static str,
    units: &'static [&'static str],
}

/// wrk's `time_units_us`: microseconds, then ms and s.
const TIME_US: Units = Units {
    scale: 1000.0,
    base: "us",
    units: &["ms", "s"],
};
/// wrk's `time_units_s`: seconds, then minutes and hours (the run's
/// duration in its first line).
pub const TIME_S: Units = Units {
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
pub fn format_units(n: f64, units: &Units, precision: usize) -> String {
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
pub const RECORD_INTERVAL: Duration = Duration::from_millis(100);

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

/// wrk's report of a finished run; `rates` are one thread's requests per
/// second in each 100 ms window, `latency` is `--latency`.
pub fn render_wrk(
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

#[cfg(test)]
mod tests {
    use super::*;

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
