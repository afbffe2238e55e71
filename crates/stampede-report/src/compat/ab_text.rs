//! ab's text report filled from a stampede result: Server/Document/
//! Concurrency lines, counts, Requests per second, Time per request (mean,
//! and across all concurrent requests), Transfer rate, the Connection Times
//! table and the percentage table, all in ab's units. The preamble ab
//! prints before the run is here too.
//!
//! Deliberately not here: reading ab's options (the binary's compat/ab*.rs).

use super::ab_figures::{figures, ms, AbView};
use stampede_metrics::RunResult;
use stampede_plan::Target;
use std::io::{self, Write};

/// The lines ab prints before it starts.
pub fn write_ab_preamble(target: &Target, heartbeat: bool, out: &mut dyn Write) -> io::Result<()> {
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
pub fn render_ab_text(
    result: &RunResult,
    target: &Target,
    view: &AbView,
    closing: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let f = figures(result, view);
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
    if let Some(tls) = &result.plan.tls {
        // ab's line: protocol, OpenSSL's suite name, key bits twice.
        let bits = super::openssl_names::key_bits(&tls.cipher);
        writeln!(
            out,
            "SSL/TLS Protocol:       {},{},{bits},{bits}",
            tls.version,
            super::openssl_names::openssl_name(&tls.cipher)
        )?;
    }
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
            ("Connect:", super::ab_figures::ab_connect(b)),
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
