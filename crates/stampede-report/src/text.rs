//! The human summary: wrk's block (latency avg/stdev/max/+/- stdev,
//! requests/sec, transfer/sec), the percentile ladder, every request's fate,
//! status codes and every non-zero error class.

use crate::format::{counted, format_bytes, format_count, format_latency_us, format_rate};
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// Percentiles shown in the ladder, with their field in `latency_us`
/// (the text and the HTML report show the same ones).
pub(crate) fn percentiles(result: &RunResult) -> [(&'static str, u64); 10] {
    let l = &result.latency_us;
    [
        ("50%", l.p50),
        ("66%", l.p66),
        ("75%", l.p75),
        ("80%", l.p80),
        ("90%", l.p90),
        ("95%", l.p95),
        ("98%", l.p98),
        ("99%", l.p99),
        ("99.9%", l.p99_9),
        ("99.99%", l.p99_99),
    ]
}

/// Targets of a mix named in the first line; the table below has them all.
const TARGETS_NAMED: usize = 4;

/// `scheme://authority` of a URL, if it has one.
fn origin(url: &str) -> Option<&str> {
    let after_scheme = url.find("://")? + 3;
    let end = url[after_scheme..]
        .find('/')
        .map_or(url.len(), |i| after_scheme + i);
    Some(&url[..end])
}

/// The first line: the request, or every target of a mix with its weight
/// (the plan's URL is only the mix's first), the shared origin said once.
/// ` (run 0123456789abcdef)` after the header, to match the summary with
/// its file and `--metrics` series; nothing for files older than the id.
fn run_id_tag(result: &RunResult) -> String {
    if result.run_id.is_empty() {
        String::new()
    } else {
        format!("  (run {})", result.run_id)
    }
}

fn describe_requests(result: &RunResult) -> String {
    let targets = &result.targets;
    if let Some(script) = &result.plan.script {
        // The script built every request: its method and body, not the plan's.
        return format!("script {script} on {}", result.plan.url);
    }
    if targets.len() < 2 {
        return format!("{} {}", result.plan.method, result.plan.url);
    }
    let shared = origin(&targets[0].url).filter(|first| {
        targets
            .iter()
            .all(|t| origin(&t.url) == Some(*first) && t.url.len() > first.len())
    });
    let named: Vec<String> = targets
        .iter()
        .take(TARGETS_NAMED)
        .map(|t| {
            let url = shared.map_or(t.url.as_str(), |o| &t.url[o.len()..]);
            match &t.name {
                // A scenario's steps are walked in order, not weighted.
                Some(step) => format!("{step}: {} {url}", t.method),
                None => format!("{} {url} (weight {})", t.method, t.weight),
            }
        })
        .collect();
    if targets.iter().any(|t| t.name.is_some()) {
        let on = shared.map_or(String::new(), |o| format!(" on {o}"));
        let more = targets.len().saturating_sub(TARGETS_NAMED);
        let more = if more > 0 {
            format!(", … and {more} more")
        } else {
            String::new()
        };
        return format!(
            "scenario, {} steps{on}: {}{more}",
            targets.len(),
            named.join(", ")
        );
    }
    let more = targets.len().saturating_sub(TARGETS_NAMED);
    let more = if more > 0 {
        format!(", … and {more} more")
    } else {
        String::new()
    };
    let on = shared.map_or(String::new(), |o| format!(" on {o}"));
    format!("{} targets{on}: {}{more}", targets.len(), named.join(", "))
}

fn describe_plan(result: &RunResult) -> String {
    let plan = &result.plan;
    // A WebSocket run counts and paces messages on upgraded connections.
    let websocket = plan.websocket.is_some();
    let (unit, per_s) = if websocket {
        ("message", "msg/s")
    } else {
        ("request", "req/s")
    };
    let mut parts = Vec::new();
    if let Some(requests) = plan.requests {
        parts.push(counted(requests, unit));
    }
    match plan.duration_s {
        // The groups ended the run (their iterations or durations).
        Some(seconds) if result.stop_reason.as_deref() == Some("groups_done") => {
            parts.push(format!("until its groups were done (at most {seconds}s)"));
        }
        Some(seconds) => parts.push(format!("{seconds}s")),
        None => {}
    }
    // A scenario's groups (its transactions' rows are not groups).
    let groups: Vec<_> = result
        .groups
        .iter()
        .filter(|g| !g.is_transaction())
        .collect();
    if groups.len() > 1 {
        // Each group has its own load; the plan's model is the first one's.
        let loads: Vec<String> = groups
            .iter()
            .map(|g| format!("{}: {}", g.name, g.load))
            .collect();
        parts.push(format!(
            "{} ({})",
            counted(groups.len() as u64, "group"),
            loads.join("; ")
        ));
    } else if let Some(rate) = plan.rate {
        parts.push(format!(
            "{} {per_s} ({}) on at most {}",
            format_rate(rate),
            plan.arrival.as_deref().unwrap_or("uniform"),
            counted(plan.connections as u64, "connection")
        ));
    } else {
        parts.push(counted(plan.connections as u64, "connection"));
    }
    if !plan.stages.is_empty() && groups.len() <= 1 {
        let stages: Vec<String> = plan
            .stages
            .iter()
            .map(|s| format!("{}s:{}", s.duration_s, s.target))
            .collect();
        parts.push(format!("stages {}", stages.join(",")));
    }
    if let Some(warmup) = plan.warmup_s {
        parts.push(format!("{warmup}s warm-up"));
    }
    parts.push(counted(plan.threads as u64, "thread"));
    if websocket {
        parts.push("WebSocket".into());
    } else {
        parts.push(
            if plan.keepalive {
                "keep-alive"
            } else {
                "new connection per request"
            }
            .into(),
        );
        parts.push(format!("HTTP/{}", plan.http_version_number()));
    }
    if let Some(depth) = plan.pipeline {
        parts.push(format!("pipeline {depth}"));
    }
    if let Some(streams) = plan.streams {
        parts.push(counted(streams as u64, "stream") + " per connection");
    }
    // Which event loop drove the connections (absent in older result files).
    match plan.io.as_str() {
        "" => {}
        "uring" => parts.push("io_uring".into()),
        io => parts.push(io.into()),
    }
    if let Some(tls) = &plan.tls {
        parts.push(tls.describe());
    }
    parts.join(", ")
}

/// ab's "Connection Times" table: connect and TLS handshake (new connections
/// only; the count column says how many), waiting (time to first byte),
/// service (sent to done) and total (intended to done). The TLS row is there
/// when handshakes were timed: a plain run keeps ab's layout (ab folds the
/// handshake into Connect; stampede times it apart, so Connect + TLS +
/// Waiting is the cost of a request on a new connection).
fn render_breakdown(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let b = &result.breakdown;
    if b.total.count == 0 {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "  Connection Times {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "min", "mean", "[+/-sd]", "median", "max", "count"
    )?;
    let tls = (b.tls.count > 0).then_some(("TLS handshake:", &b.tls));
    // HTTP/3: the QUIC handshake is the whole opening (no TCP connect), and
    // 0-RTT resumptions are shown apart (their early data can be replayed).
    let quic = b.quic.count > 0 || b.zero_rtt.count > 0;
    let rows = [
        (!quic || b.connect.count > 0).then_some(("Connect:", &b.connect)),
        tls,
        (b.quic.count > 0).then_some(("QUIC handshake:", &b.quic)),
        (b.zero_rtt.count > 0).then_some(("0-RTT resumed:", &b.zero_rtt)),
        Some(("Waiting:", &b.waiting)),
        Some(("Service:", &b.service)),
        Some(("Total:", &b.total)),
    ];
    for (label, t) in rows.into_iter().flatten() {
        if t.count == 0 {
            // No new connection in the measured time (all opened during
            // warm-up, say): nothing to show, rather than a row of zeros.
            writeln!(
                out,
                "  {label:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
                "—", "—", "—", "—", "—", 0
            )?;
            continue;
        }
        writeln!(
            out,
            "  {label:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
            format_latency_us(t.min as f64),
            format_latency_us(t.mean),
            format_latency_us(t.stdev),
            format_latency_us(t.median as f64),
            format_latency_us(t.max as f64),
            format_count(t.count)
        )?;
    }
    if b.dns_us > 0 {
        writeln!(
            out,
            "  DNS lookup       {} (once per run)",
            format_latency_us(b.dns_us as f64)
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// The per-target table of a mix (`--targets`).
fn render_targets(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    if result.targets.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "  {:<40} {:>6} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
        "Target", "weight", "finished", "req/s", "failed", "errors", "p50", "p99"
    )?;
    for t in &result.targets {
        // A step by its name (the header line gives its request).
        let name = match &t.name {
            Some(step) => step.clone(),
            None => format!("{} {}", t.method, t.url),
        };
        let name = if name.chars().count() > 40 {
            let tail: String = name
                .chars()
                .rev()
                .take(39)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("…{tail}")
        } else {
            name
        };
        writeln!(
            out,
            "  {name:<40} {:>6} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
            t.weight,
            format_count(t.finished),
            format_rate(t.rps),
            // The totals' terms: failed statuses (a 503) and failed
            // checks apart from transport errors (no response at all).
            format_count(t.failed_status + t.check_failed),
            format_count(t.errors),
            format_latency_us(t.latency_us.p50 as f64),
            format_latency_us(t.latency_us.p99 as f64)
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// One line per monitored process: what `top` would have shown, summarized.
fn render_monitor(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(monitor) = &result.monitor else {
        return Ok(());
    };
    for process in &monitor.processes {
        let per_1k = process.cpu_s_per_1k_requests.map_or(String::new(), |s| {
            format!(", {:.2} CPU-ms per 1k requests", s * 1000.0)
        });
        writeln!(
            out,
            "  {:<13} pid {} ({}): CPU {:.0}% mean, {:.0}% max (user {:.2}s, sys {:.2}s{per_1k}); busiest thread {:.0}%; RSS {}; {}; {} fds; {} / {} ctx switches (vol/invol){}",
            if process.role == "client" { "Client" } else { "Server" },
            process.pid,
            process.name,
            process.cpu_pct_mean,
            process.cpu_pct_max,
            process.cpu_user_s,
            process.cpu_sys_s,
            process.busiest_thread_pct_max,
            format_bytes(process.rss_max_bytes as f64),
            counted(process.threads_max, "thread"),
            process.open_fds_max,
            format_count(process.ctx_voluntary),
            format_count(process.ctx_involuntary),
            if process.exited { " [exited during the run]" } else { "" }
        )?;
    }
    if let Some(last) = monitor.machine.last() {
        let mean_cpu =
            monitor.machine.iter().map(|m| m.cpu_pct).sum::<f64>() / monitor.machine.len() as f64;
        writeln!(
            out,
            "  Machine       {}, {mean_cpu:.0}% busy on average, load average {:.2}",
            counted(monitor.cpus as u64, "CPU"),
            last.load_1m
        )?;
    }
    Ok(())
}

/// Why no response completed, in one line (None when some did): the error
/// counts, and whether any connection was ever opened.
pub fn no_response_reason(result: &RunResult) -> Option<String> {
    let r = &result.requests;
    if r.completed > 0 {
        return None;
    }
    if result.stop_reason.as_deref() == Some("worker_stuck") {
        // Its requests were sent, but counted only up to its last
        // snapshot: "no request was sent" would be false.
        return Some(
            "no response counted: a worker was given up on and its figures after its last snapshot are lost (see the warning)"
                .into(),
        );
    }
    if r.sent == 0 {
        return Some("no request was sent".into());
    }
    let mut counts: Vec<String> = result
        .errors
        .iter()
        .map(|(class, n)| format!("{} {class}", format_count(*n)))
        .collect();
    if r.unfinished > 0 {
        counts.push(format!("{} unfinished", format_count(r.unfinished)));
    }
    let what = if result.connections.opened == 0 {
        "no connection could be opened"
    } else if (result.websocket.as_ref()).is_some_and(|ws| ws.connections == 0) {
        "no WebSocket connection was upgraded"
    } else {
        "no response completed"
    };
    Some(format!("{what}: {}", counts.join(", ")))
}

/// A latency figure, or "—" when no response completed (a zero would read
/// as a very fast server).
fn latency_or_dash(result: &RunResult, micros: f64) -> String {
    if result.requests.completed == 0 {
        "—".into()
    } else {
        format_latency_us(micros)
    }
}

/// Writes the summary a person reads after a run.
pub fn render_text(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let l = &result.latency_us;
    let r = &result.requests;
    if let Some(title) = crate::format::plan_title(result) {
        writeln!(out, "{title}")?;
    }
    writeln!(out, "{}{}", describe_requests(result), run_id_tag(result))?;
    writeln!(out, "  {}", describe_plan(result))?;
    if result.interrupted {
        writeln!(
            out,
            "  INTERRUPTED: partial result of what completed before the stop"
        )?;
    }
    for notice in &result.notices {
        writeln!(out, "  note: {notice}")?;
    }
    if let Some(reason) = no_response_reason(result) {
        writeln!(out, "  NO RESPONSES: {reason}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "  Latency     {:>10} {:>10} {:>10} {:>10}",
        "Avg", "Stdev", "Max", "+/- Stdev"
    )?;
    let within = if r.completed == 0 {
        "—".to_string()
    } else {
        format!("{:.2}%", l.within_stdev_pct)
    };
    writeln!(
        out,
        "              {:>10} {:>10} {:>10} {:>10}",
        latency_or_dash(result, l.mean),
        latency_or_dash(result, l.stdev),
        latency_or_dash(result, l.max as f64),
        within
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "  Latency percentiles (from intended send to complete response)"
    )?;
    for (label, micros) in percentiles(result) {
        writeln!(
            out,
            "    {label:>7}  {}",
            latency_or_dash(result, micros as f64)
        )?;
    }
    writeln!(
        out,
        "    {:>7}  {}",
        "max",
        latency_or_dash(result, l.max as f64)
    )?;
    writeln!(out)?;
    let check_failed = r.check_failed.map_or(String::new(), |n| {
        format!(", {} failed a check", format_count(n))
    });
    writeln!(
        out,
        "  Requests      {} sent in {:.2}s: {} ok, {} failed status{check_failed}, {}, {} unfinished",
        format_count(r.sent),
        result.elapsed_s,
        format_count(r.success),
        format_count(r.failed_status),
        counted(r.errors, "error"),
        format_count(r.unfinished)
    )?;
    writeln!(out, "  Requests/sec  {}", format_rate(result.rps))?;
    writeln!(
        out,
        "  Goodput       {} successful responses/sec (error rate {:.2}%; effective {} req/s)",
        format_rate(result.goodput),
        result.error_rate_pct,
        format_rate(result.effective_rps)
    )?;
    writeln!(
        out,
        "  Transfer/sec  {} ({} received, {} of it body)",
        format_bytes(result.throughput_bytes_per_s),
        format_bytes(result.bytes.received as f64),
        format_bytes(result.bytes.body as f64)
    )?;
    crate::compression_text::render_compression(result, out)?;
    crate::stream_text::render_streams(result, out)?;
    crate::websocket_text::render_websocket(result, out)?;
    let planned = match result.connections.planned_reconnects {
        0 => String::new(),
        n => format!(", {} planned (connection lifetime)", format_count(n)),
    };
    writeln!(
        out,
        "  Connections   {} opened, {}{planned}, {}",
        format_count(result.connections.opened),
        counted(result.connections.reconnects, "reconnect"),
        counted(result.connections.attempts, "attempt")
    )?;
    if let Some(hops) = result.redirects.filter(|h| h.followed + h.offsite > 0) {
        // Hops are not requests: per request is per first request completed.
        let per_request = hops.followed as f64 / result.requests.sent.max(1) as f64;
        writeln!(
            out,
            "  Redirects     {} followed ({per_request:.2} per request), {} not followed (to an origin this run cannot reach, or not http/https)",
            format_count(hops.followed),
            format_count(hops.offsite)
        )?;
    }
    if let Some(dns) = &result.dns {
        let spread: Vec<String> = dns
            .addresses
            .iter()
            .map(|a| format!("{} ({})", a.address, format_count(a.connections)))
            .collect();
        let again = match (dns.ttl_s, dns.failures) {
            (Some(_), 0) => format!(", resolved {} times", dns.resolutions),
            (Some(_), failed) => format!(", resolved {} times ({failed} failed)", dns.resolutions),
            (None, _) => String::new(),
        };
        writeln!(
            out,
            "  Addresses     {} ({}{again})",
            spread.join(", "),
            dns.mode
        )?;
    }
    crate::rendezvous_text::render_rendezvous(result, out)?;
    render_breakdown(result, out)?;
    if let Some(schedule) = &result.schedule {
        let not_sent = match schedule.not_sent {
            Some(n) if n > 0 => format!("{} due but not sent; ", format_count(n)),
            _ => String::new(),
        };
        writeln!(
            out,
            "  Schedule      {not_sent}{} (> 1 ms after the intended instant; p99 lag {}); send lateness p50 {}, p99 {}; service time p99 {} vs latency p99 {}",
            counted(schedule.late_sends, "late send"),
            format_latency_us(schedule.lag_p99_us as f64),
            format_latency_us(schedule.lateness_us.median as f64),
            format_latency_us(schedule.lateness_p99_us as f64),
            latency_or_dash(result, result.service_time_us.p99 as f64),
            latency_or_dash(result, l.p99 as f64)
        )?;
    }
    if !result.status.is_empty() {
        let codes: Vec<String> = result
            .status
            .iter()
            .map(|(code, n)| format!("{code}: {}", format_count(*n)))
            .collect();
        writeln!(out, "  Status codes  {}", codes.join(", "))?;
    }
    crate::checks_text::render_checks(result, out)?;
    crate::groups_text::render_groups(result, out)?;
    crate::replay_text::render_replay(result, out)?;
    render_targets(result, out)?;
    render_monitor(result, out)?;
    if !result.slo.is_empty() {
        writeln!(out)?;
        writeln!(out, "  SLO")?;
        for check in &result.slo {
            let measured = check.measured.map_or("not measured".to_string(), |v| {
                format!("{v:.2} {}", check.unit)
            });
            let verdict = if check.passed { "pass" } else { "FAIL" };
            writeln!(
                out,
                "    {:<24} {:>16}  {verdict}",
                check.condition, measured
            )?;
        }
    }
    for warning in &result.warnings {
        writeln!(out, "  WARNING: {warning}")?;
    }
    if !result.errors.is_empty() {
        let errors: Vec<String> = result
            .errors
            .iter()
            .map(|(class, n)| format!("{class}: {}", format_count(*n)))
            .collect();
        writeln!(out, "  Errors        {}", errors.join(", "))?;
        for (class, samples) in &result.error_samples {
            for sample in samples {
                writeln!(out, "    {class}: {sample}")?;
            }
        }
    }
    Ok(())
}
