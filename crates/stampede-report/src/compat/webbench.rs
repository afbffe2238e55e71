//! WebBench 1.5's report filled from a stampede result: "Speed=N
//! pages/min, M bytes/sec. Requests: X susceed, Y failed."

use stampede_metrics::RunResult;
use std::io::{self, Write};

/// webbench's two result lines. "susceed" (sic, webbench's spelling) counts
/// complete responses of any status; "failed" counts requests that got none.
/// Speed counts only complete responses over the measured time (webbench
/// adds the failed ones and divides by the planned time).
pub fn render_webbench(result: &RunResult, closing: &str, out: &mut dyn Write) -> io::Result<()> {
    let r = &result.requests;
    if result.interrupted {
        writeln!(
            out,
            "INTERRUPTED: the figures cover what completed before the stop"
        )?;
    }
    writeln!(
        out,
        "\nSpeed={} pages/min, {} bytes/sec.",
        (result.rps * 60.0) as u64,
        result.throughput_bytes_per_s as u64
    )?;
    writeln!(
        out,
        "Requests: {} susceed, {} failed.",
        r.completed, r.errors
    )?;
    writeln!(out, "{closing}")
}
