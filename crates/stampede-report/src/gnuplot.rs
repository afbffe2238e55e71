//! ab's `-g` per-request TSV ("gnuplot" file): `starttime seconds ctime
//! dtime ttime wait`, times in whole milliseconds, one row per request.
//! Owns the row format only; which requests reach it (sampling, the bounded
//! buffer) is decided by the engine's request log.

use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The header line ab writes.
pub(crate) const GNUPLOT_HEADER: &str = "starttime\tseconds\tctime\tdtime\tttime\twait";

/// One request, as ab's gnuplot file describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GnuplotRow {
    /// When the request was due (its latency counts from here).
    pub start: SystemTime,
    /// TCP connect time (zero on a reused connection).
    pub connect: Duration,
    /// From start to the complete response (ab's ttime).
    pub total: Duration,
    /// From the send to the first response byte (ab's wait).
    pub wait: Duration,
}

/// Writes ab's gnuplot header line (`starttime\tseconds\tctime\tdtime\tttime\twait`).
pub fn render_gnuplot_header(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{GNUPLOT_HEADER}")
}

/// Milliseconds rounded to the nearest whole one, as ab's `ap_round_ms`.
fn round_ms(duration: Duration) -> u128 {
    (duration.as_micros() + 500) / 1000
}

/// Writes one row; dtime is ttime − ctime, as ab computes it.
pub fn render_gnuplot_row(row: &GnuplotRow, out: &mut dyn Write) -> io::Result<()> {
    let since_epoch = row.start.duration_since(UNIX_EPOCH).unwrap_or_default();
    writeln!(
        out,
        "{}\t{}\t{}\t{}\t{}\t{}",
        ctime(row.start),
        since_epoch.as_secs(),
        round_ms(row.connect),
        round_ms(row.total.saturating_sub(row.connect)),
        round_ms(row.total),
        round_ms(row.wait)
    )
}

const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// C's `ctime` layout (`Sun Aug 23 06:16:30 2026`), in UTC. The calendar
/// date comes from humantime's RFC 3339 rendering; only the names are ours.
pub fn ctime(time: SystemTime) -> String {
    let rfc = humantime::format_rfc3339_seconds(time).to_string();
    // "YYYY-MM-DDTHH:MM:SSZ"
    let field = |range: std::ops::Range<usize>| rfc.get(range).unwrap_or("");
    let month = field(5..7).parse::<usize>().unwrap_or(1).clamp(1, 12);
    let days = time
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
        / 86_400;
    // 1970-01-01 was a Thursday.
    let weekday = WEEKDAYS[((days + 4) % 7) as usize];
    format!(
        "{weekday} {} {} {} {}",
        MONTHS[month - 1],
        field(8..10),
        field(11..19),
        field(0..4)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_ab() {
        // 2026-08-23T06:16:30Z, a Sunday.
        let start = UNIX_EPOCH + Duration::from_secs(1_787_465_790);
        assert_eq!(ctime(start), "Sun Aug 23 06:16:30 2026");
        let row = GnuplotRow {
            start,
            connect: Duration::from_micros(1_400),
            total: Duration::from_micros(12_600),
            wait: Duration::from_micros(9_499),
        };
        let mut out = Vec::new();
        render_gnuplot_row(&row, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Sun Aug 23 06:16:30 2026\t1787465790\t1\t11\t13\t9\n"
        );
    }
}
