//! ab's report layout, text and `-w` HTML, filled from a stampede result:
//! Server/Document/Concurrency lines, counts, Requests per second, Time per
//! request (mean, and across all concurrent requests), Transfer rate, the
//! Connection Times table and the percentage table, all in ab's units
//! (milliseconds rounded as ab rounds them).
//!
//! Deliberately not here: reading ab's options (ab.rs).

use stampede_metrics::{RunResult, TimingSummary};
use stampede_plan::Target;
use std::io::{self, Write};

/// How the report looks, from ab's options.
#[derive(Debug, Clone, PartialEq)]
pub struct AbView {
    /// -k: print Keep-Alive requests.
    pub keepalive: bool,
    /// Not -d: print the percentage table.
    pub percentiles: bool,
    /// Not -S: print sd and median in Connection Times.
    pub confidence: bool,
    /// -v: 2 and above add status and error counts.
    pub verbosity: u32,
    /// -x, -y, -z for -w.
    pub table_attrs: String,
    pub tr_attrs: String,
    pub td_attrs: String,
}

/// Microseconds to ab's milliseconds: ab rounds (`ap_round_ms`).
fn ms(us: u64) -> u64 {
    (us + 500) / 1000
}

/// The figures ab derives, computed once for both layouts.
struct Figures {
    /// ab's "Complete requests": every request that finished, failed or not.
    done: u64,
    failed: u64,
    /// Failed requests by ab's classes: connect, receive, length, exceptions.
    failed_by_class: [u64; 4],
    non_2xx: u64,
    keepalive_requests: u64,
    document_length: String,
    /// Complete responses per second (the result's `rps`).
    rps: f64,
    time_per_request_ms: f64,
    time_per_request_all_ms: f64,
    kbytes_per_s: f64,
    body_sent: u64,
}

fn figures(result: &RunResult) -> Figures {
    let r = &result.requests;
    let error = |kind: &str| result.errors.get(kind).copied().unwrap_or(0);
    let connect = error("connect_refused") + error("connect_timeout");
    let receive = error("reset") + error("closed_early") + error("timeout");
    let non_2xx = result
        .status
        .iter()
        .filter(|(code, _)| !code.starts_with('2'))
        .map(|(_, n)| n)
        .sum();
    let document_length = if r.completed > 0 && result.bytes.body.is_multiple_of(r.completed) {
        format!("{} bytes", result.bytes.body / r.completed)
    } else if r.completed > 0 {
        "Variable".into()
    } else {
        "0 bytes".into()
    };
    let per_response = |total_ms: f64| {
        if r.completed > 0 {
            total_ms / r.completed as f64
        } else {
            0.0
        }
    };
    let elapsed_ms = result.elapsed_s * 1000.0;
    Figures {
        done: r.completed + r.errors,
        failed: r.errors,
        failed_by_class: [
            connect,
            receive,
            0,
            r.errors.saturating_sub(connect + receive),
        ],
        non_2xx,
        // A reconnect is a connection the server closed after a response we
        // wanted to keep alive: that response was not a keep-alive one.
        keepalive_requests: r.completed.saturating_sub(result.connections.reconnects),
        document_length,
        rps: result.rps,
        time_per_request_ms: per_response(result.plan.connections as f64 * elapsed_ms),
        time_per_request_all_ms: per_response(elapsed_ms),
        kbytes_per_s: if result.elapsed_s > 0.0 {
            result.bytes.received as f64 / 1024.0 / result.elapsed_s
        } else {
            0.0
        },
        body_sent: result.plan.body_bytes as u64 * r.sent,
    }
}

/// The lines ab prints before it starts.
pub fn write_preamble(target: &Target, heartbeat: bool, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "This is stampede {}, reading ApacheBench's command line",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(
        out,
        "(ab's options and layout; stampede's engine, counts and latency)"
    )?;
    writeln!(out)?;
    // ab ends the line here when "Completed N requests" lines follow on
    // stderr, and otherwise prints "..done" on it when the run is over.
    let end = if heartbeat { "\n" } else { "..." };
    write!(out, "Benchmarking {} (be patient){end}", target.host)
}

/// ab's text report, then the closing stampede line.
pub fn render_text(
    result: &RunResult,
    target: &Target,
    view: &AbView,
    closing: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let f = figures(result);
    let b = &result.breakdown;
    if result.interrupted {
        writeln!(
            out,
            "INTERRUPTED: the figures cover what completed before the stop"
        )?;
    }
    writeln!(out, "\n")?;
    writeln!(out, "Server Software:        (not recorded by stampede)")?;
    writeln!(out, "Server Hostname:        {}", target.host)?;
    writeln!(out, "Server Port:            {}", target.port)?;
    writeln!(out)?;
    writeln!(out, "Document Path:          {}", target.path_and_query)?;
    writeln!(out, "Document Length:        {}", f.document_length)?;
    writeln!(out)?;
    writeln!(out, "Concurrency Level:      {}", result.plan.connections)?;
    writeln!(
        out,
        "Time taken for tests:   {:.3} seconds",
        result.elapsed_s
    )?;
    writeln!(out, "Complete requests:      {}", f.done)?;
    writeln!(out, "Failed requests:        {}", f.failed)?;
    if f.failed > 0 {
        let [c, r, l, e] = f.failed_by_class;
        writeln!(
            out,
            "   (Connect: {c}, Receive: {r}, Length: {l}, Exceptions: {e})"
        )?;
    }
    if f.non_2xx > 0 {
        writeln!(out, "Non-2xx responses:      {}", f.non_2xx)?;
    }
    if view.keepalive {
        writeln!(out, "Keep-Alive requests:    {}", f.keepalive_requests)?;
    }
    writeln!(
        out,
        "Total transferred:      {} bytes",
        result.bytes.received
    )?;
    if result.plan.body_bytes > 0 {
        writeln!(out, "Total body sent:        {}", f.body_sent)?;
    }
    writeln!(out, "HTML transferred:       {} bytes", result.bytes.body)?;
    writeln!(out, "Requests per second:    {:.2} [#/sec] (mean)", f.rps)?;
    writeln!(
        out,
        "Time per request:       {:.3} [ms] (mean)",
        f.time_per_request_ms
    )?;
    writeln!(
        out,
        "Time per request:       {:.3} [ms] (mean, across all concurrent requests)",
        f.time_per_request_all_ms
    )?;
    writeln!(
        out,
        "Transfer rate:          {:.2} [Kbytes/sec] received",
        f.kbytes_per_s
    )?;
    if b.total.count > 0 {
        writeln!(out, "\nConnection Times (ms)")?;
        let rows = [
            ("Connect:", &b.connect),
            ("Processing:", &b.service),
            ("Waiting:", &b.waiting),
            ("Total:", &b.total),
        ];
        if view.confidence {
            writeln!(out, "              min  mean[+/-sd] median   max")?;
            for (label, t) in rows {
                writeln!(
                    out,
                    "{label:<12}{:>5} {:>4} {:>5.1} {:>6} {:>7}",
                    ms(t.min),
                    ms(t.mean.round() as u64),
                    t.stdev / 1000.0,
                    ms(t.median),
                    ms(t.max)
                )?;
            }
        } else {
            writeln!(out, "              min   avg   max")?;
            for (label, t) in rows {
                writeln!(
                    out,
                    "{label:<12}{:>5} {:>4} {:>5}",
                    ms(t.min),
                    ms(t.mean.round() as u64),
                    ms(t.max)
                )?;
            }
        }
    }
    let l = &result.latency_us;
    if view.percentiles && result.requests.completed > 1 {
        writeln!(
            out,
            "\nPercentage of the requests served within a certain time (ms)"
        )?;
        let ladder = [
            (50, l.p50),
            (66, l.p66),
            (75, l.p75),
            (80, l.p80),
            (90, l.p90),
            (95, l.p95),
            (98, l.p98),
            (99, l.p99),
        ];
        for (pct, us) in ladder {
            writeln!(out, "  {pct}%  {:>5}", ms(us))?;
        }
        writeln!(out, " 100%  {:>5} (longest request)", ms(l.max))?;
    }
    if view.verbosity >= 2 {
        write_counts(result, out)?;
    }
    writeln!(out, "{closing}")
}

/// -v 2 and 3: ab prints one warning per odd response; stampede counts them.
fn write_counts(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let join = |map: &std::collections::BTreeMap<String, u64>| {
        map.iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out)?;
    writeln!(out, "Status codes:           {}", join(&result.status))?;
    let errors = if result.errors.is_empty() {
        "none".to_string()
    } else {
        join(&result.errors)
    };
    writeln!(out, "Errors:                 {errors}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// ab's `-w` report: the same figures as HTML table rows, with the
/// `-x`/`-y`/`-z` attributes on table, tr and th/td.
pub fn render_html(
    result: &RunResult,
    target: &Target,
    view: &AbView,
    closing: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let f = figures(result);
    let (tr, td) = (&view.tr_attrs, &view.td_attrs);
    let row = |out: &mut dyn Write, label: &str, value: String| {
        writeln!(
            out,
            "<tr {tr}><th colspan=2 {td}>{label}</th><td colspan=2 {td}>{}</td></tr>",
            escape(&value)
        )
    };
    writeln!(out, "<p>")?;
    writeln!(
        out,
        " This is stampede {}, reading ApacheBench's command line<br>",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out, "</p>")?;
    writeln!(out, "<table {}>", view.table_attrs)?;
    row(out, "Server Software:", "(not recorded by stampede)".into())?;
    row(out, "Server Hostname:", target.host.clone())?;
    row(out, "Server Port:", target.port.to_string())?;
    row(out, "Document Path:", target.path_and_query.clone())?;
    row(out, "Document Length:", f.document_length.clone())?;
    row(
        out,
        "Concurrency Level:",
        result.plan.connections.to_string(),
    )?;
    row(
        out,
        "Time taken for tests:",
        format!("{:.3} seconds", result.elapsed_s),
    )?;
    row(out, "Complete requests:", f.done.to_string())?;
    row(out, "Failed requests:", f.failed.to_string())?;
    if f.failed > 0 {
        let [c, r, l, e] = f.failed_by_class;
        writeln!(
            out,
            "<tr {tr}><td colspan=4 {td}>   (Connect: {c}, Receive: {r}, Length: {l}, Exceptions: {e})</td></tr>"
        )?;
    }
    if f.non_2xx > 0 {
        row(out, "Non-2xx responses:", f.non_2xx.to_string())?;
    }
    if view.keepalive {
        row(
            out,
            "Keep-Alive requests:",
            f.keepalive_requests.to_string(),
        )?;
    }
    row(
        out,
        "Total transferred:",
        format!("{} bytes", result.bytes.received),
    )?;
    if result.plan.body_bytes > 0 {
        row(out, "Total body sent:", f.body_sent.to_string())?;
    }
    row(
        out,
        "HTML transferred:",
        format!("{} bytes", result.bytes.body),
    )?;
    row(out, "Requests per second:", format!("{:.2}", f.rps))?;
    row(
        out,
        "Transfer rate:",
        format!("{:.2} kb/s received", f.kbytes_per_s),
    )?;
    let b = &result.breakdown;
    if b.total.count > 0 {
        writeln!(
            out,
            "<tr {tr}><th {td}>&nbsp;</th> <th {td}>min</th>   <th {td}>avg</th>   <th {td}>max</th></tr>"
        )?;
        let timing = |out: &mut dyn Write, label: &str, t: &TimingSummary| {
            writeln!(
                out,
                "<tr {tr}><th {td}>{label}</th><td {td}>{:>5}</td><td {td}>{:>5}</td><td {td}>{:>5}</td></tr>",
                ms(t.min),
                ms(t.mean.round() as u64),
                ms(t.max)
            )
        };
        timing(out, "Connect:", &b.connect)?;
        timing(out, "Processing:", &b.service)?;
        timing(out, "Total:", &b.total)?;
    }
    writeln!(out, "</table>")?;
    writeln!(out, "<p>{}</p>", escape(closing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_round_like_ab() {
        assert_eq!(ms(0), 0);
        assert_eq!(ms(499), 0);
        assert_eq!(ms(500), 1);
        assert_eq!(ms(36_200), 36);
    }

    #[test]
    fn escapes_html() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }
}
