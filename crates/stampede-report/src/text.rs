//! The human summary: wrk's block (latency avg/stdev/max/+/- stdev,
//! requests/sec, transfer/sec), the percentile ladder, every request's fate,
//! status codes and every non-zero error class.

use crate::format::{format_bytes, format_count, format_latency_us, format_rate};
use stampede_metrics::RunResult;
use std::io::{self, Write};

/// Percentiles shown in the ladder, with their field in `latency_us`.
fn percentiles(result: &RunResult) -> [(&'static str, u64); 10] {
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

fn describe_plan(result: &RunResult) -> String {
    let plan = &result.plan;
    let mut parts = Vec::new();
    if let Some(requests) = plan.requests {
        parts.push(format!("{} requests", format_count(requests)));
    }
    if let Some(seconds) = plan.duration_s {
        parts.push(format!("{seconds}s"));
    }
    if let Some(rate) = plan.rate {
        parts.push(format!(
            "{} req/s ({}) on at most {} connections",
            format_rate(rate),
            plan.arrival.as_deref().unwrap_or("uniform"),
            plan.connections
        ));
    } else {
        parts.push(format!("{} connections", plan.connections));
    }
    if !plan.stages.is_empty() {
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
    parts.push(format!("{} threads", plan.threads));
    parts.push(
        if plan.keepalive {
            "keep-alive"
        } else {
            "new connection per request"
        }
        .into(),
    );
    parts.push(format!("HTTP/{}", plan.http_version));
    // Which event loop drove the connections (absent in older result files).
    match plan.io.as_str() {
        "" => {}
        "uring" => parts.push("io_uring".into()),
        io => parts.push(io.into()),
    }
    parts.join(", ")
}

/// ab's "Connection Times" table: connect (new connections only), waiting
/// (time to first byte), service (sent to done) and total (intended to done).
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
    let rows = [
        ("Connect:", &b.connect),
        ("Waiting:", &b.waiting),
        ("Service:", &b.service),
        ("Total:", &b.total),
    ];
    for (label, t) in rows {
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
        "  {:<40} {:>6} {:>10} {:>12} {:>8} {:>10} {:>10}",
        "Target", "weight", "finished", "req/s", "errors", "p50", "p99"
    )?;
    for t in &result.targets {
        let name = format!("{} {}", t.method, t.url);
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
            "  {name:<40} {:>6} {:>10} {:>12} {:>7.2}% {:>10} {:>10}",
            t.weight,
            format_count(t.finished),
            format_rate(t.rps),
            t.error_rate_pct,
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
            "  {:<13} pid {} ({}): CPU {:.0}% mean, {:.0}% max (user {:.2}s, sys {:.2}s{per_1k}); busiest thread {:.0}%; RSS {}; {} threads; {} fds; {} / {} ctx switches (vol/invol){}",
            if process.role == "client" { "Client" } else { "Server" },
            process.pid,
            process.name,
            process.cpu_pct_mean,
            process.cpu_pct_max,
            process.cpu_user_s,
            process.cpu_sys_s,
            process.busiest_thread_pct_max,
            format_bytes(process.rss_max_bytes as f64),
            process.threads_max,
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
            "  Machine       {} CPUs, {mean_cpu:.0}% busy on average, load average {:.2}",
            monitor.cpus, last.load_1m
        )?;
    }
    Ok(())
}

/// Writes the summary a person reads after a run.
pub fn render_text(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let l = &result.latency_us;
    let r = &result.requests;
    writeln!(out, "{} {}", result.plan.method, result.plan.url)?;
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
    writeln!(out)?;
    writeln!(
        out,
        "  Latency     {:>10} {:>10} {:>10} {:>10}",
        "Avg", "Stdev", "Max", "+/- Stdev"
    )?;
    writeln!(
        out,
        "              {:>10} {:>10} {:>10} {:>9.2}%",
        format_latency_us(l.mean),
        format_latency_us(l.stdev),
        format_latency_us(l.max as f64),
        l.within_stdev_pct
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "  Latency percentiles (from intended send to complete response)"
    )?;
    for (label, micros) in percentiles(result) {
        writeln!(out, "    {label:>7}  {}", format_latency_us(micros as f64))?;
    }
    writeln!(out, "    {:>7}  {}", "max", format_latency_us(l.max as f64))?;
    writeln!(out)?;
    writeln!(
        out,
        "  Requests      {} sent in {:.2}s: {} ok, {} failed status, {} errors, {} unfinished",
        format_count(r.sent),
        result.elapsed_s,
        format_count(r.success),
        format_count(r.failed_status),
        format_count(r.errors),
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
    writeln!(
        out,
        "  Connections   {} opened, {} reconnects, {} attempts",
        format_count(result.connections.opened),
        format_count(result.connections.reconnects),
        format_count(result.connections.attempts)
    )?;
    render_breakdown(result, out)?;
    if let Some(schedule) = &result.schedule {
        writeln!(
            out,
            "  Schedule      {} late sends (> 1 ms after the intended instant; p99 lag {}); service time p99 {} vs latency p99 {}",
            format_count(schedule.late_sends),
            format_latency_us(schedule.lag_p99_us as f64),
            format_latency_us(result.service_time_us.p99 as f64),
            format_latency_us(l.p99 as f64)
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
