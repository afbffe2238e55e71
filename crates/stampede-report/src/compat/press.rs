//! The press tool's report (kedao's/cinatra's coro_http_press) filled from
//! a stampede result: latency avg/max/variation/stdev, requests, bytes,
//! errors, Requests/sec, Transfer/sec, with honest figures: the real mean,
//! variance and stdev of every response, not (min+max)/2 per batch.

use stampede_metrics::RunResult;
use std::io::{self, Write};

/// The press tool's byte counts: 3 decimals, binary units.
fn bytes_to_string(bytes: f64) -> String {
    const KB: f64 = 1024.0;
    const MB: f64 = KB * 1024.0;
    const GB: f64 = MB * 1024.0;
    if bytes > GB {
        format!("{:.3}GB", bytes / GB)
    } else if bytes > MB {
        format!("{:.3}MB", bytes / MB)
    } else if bytes > KB {
        format!("{:.3}KB", bytes / KB)
    } else {
        format!("{bytes:.3}bytes")
    }
}

/// The press tool counts a request complete only on status 200; anything
/// else that finished is an error.
pub fn render_press(result: &RunResult, closing: &str, out: &mut dyn Write) -> io::Result<()> {
    let l = &result.latency_us;
    let r = &result.requests;
    let complete = result.status.get("200").copied().unwrap_or(0);
    let total = r.completed + r.errors;
    let per_second = |n: f64| {
        if result.elapsed_s > 0.0 {
            n / result.elapsed_s
        } else {
            0.0
        }
    };
    if result.interrupted {
        writeln!(
            out,
            "  INTERRUPTED: the figures cover what completed before the stop"
        )?;
    }
    writeln!(out, "  Thread Status   Avg   Max   Variation   Stdev")?;
    let stdev_ms = l.stdev / 1000.0;
    writeln!(
        out,
        "    Latency   {:.3}ms     {:.3}ms     {:.3}ms²     {:.3}ms",
        l.mean / 1000.0,
        l.max as f64 / 1000.0,
        stdev_ms * stdev_ms,
        stdev_ms
    )?;
    writeln!(
        out,
        "  {complete} requests in {:.3}s, {} read, total: {total}, errors: {}",
        result.elapsed_s,
        bytes_to_string(result.bytes.received as f64),
        total - complete
    )?;
    writeln!(out, "Requests/sec:     {:.3}", per_second(complete as f64))?;
    writeln!(
        out,
        "Transfer/sec:     {}",
        bytes_to_string(result.throughput_bytes_per_s)
    )?;
    writeln!(out, "{closing}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_like_the_press_tool() {
        assert_eq!(bytes_to_string(1023.0), "1023.000bytes");
        assert_eq!(bytes_to_string(3.0 * 1024.0 * 1024.0), "3.000MB");
        assert_eq!(bytes_to_string(4.024 * 1024.0 * 1024.0 * 1024.0), "4.024GB");
    }
}
