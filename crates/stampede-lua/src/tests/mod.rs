//! The whole flow (load, prepare, a worker's hooks, done), a worker
//! simulated by calling the hooks as the engine would: `examples` runs
//! scripts in the style of wrk's own (its scripts/ directory), `failures`
//! the errors a script can make. This file holds what both use.

mod examples;
mod failures;
mod reads;
mod returns;

use crate::{LoadedScript, LuaScript, ScriptConfig};
use stampede_metrics::{encode_histogram, new_latency_histogram, RunResult};
use stampede_workload::{ResponseView, ScriptThread};
use std::time::Duration;

pub(super) const ADDR: &str = "127.0.0.1:8080";

pub(super) fn config(args: &[&str]) -> ScriptConfig {
    ScriptConfig {
        path: "test.lua".into(),
        url: "http://127.0.0.1:8080/base".into(),
        request: crate::RequestDefaults {
            headers: vec!["X-Seed: 1".into()],
            ..crate::RequestDefaults::default()
        },
        args: args.iter().map(|a| a.to_string()).collect(),
    }
}

pub(super) fn prepared(code: &str, threads: usize) -> LuaScript {
    LoadedScript::from_code(&config(&["one", "two"]), code.as_bytes().to_vec())
        .unwrap()
        .prepare(threads, ADDR.parse().unwrap())
        .unwrap()
}

pub(super) fn next_request(thread: &mut dyn ScriptThread) -> (String, usize) {
    let mut out = Vec::new();
    let count = thread.request(&mut out).unwrap();
    (String::from_utf8(out).unwrap(), count)
}

pub(super) fn respond(
    thread: &mut dyn ScriptThread,
    status: u16,
    headers: &[(&[u8], &[u8])],
    body: &[u8],
) {
    thread
        .response(&ResponseView::new(status, headers, body, Duration::ZERO))
        .unwrap();
}

/// A finished run's result: `latencies` µs, 2 threads, 3 seconds.
pub(super) fn result(latencies: &[u64]) -> RunResult {
    let mut histogram = new_latency_histogram();
    for &v in latencies {
        histogram.record(v).unwrap();
    }
    let point = |second: u64, rps: f64| {
        serde_json::json!({
            "second": second, "duration_s": 1.0, "completed": rps as u64, "success": rps as u64,
            "errors": {}, "bytes_received": 0, "rps": rps, "in_flight": 0, "open_connections": 2,
            "p50_us": 0, "p90_us": 0, "p99_us": 0, "max_us": 0, "target": 2.0
        })
    };
    let json = serde_json::json!({
        "schema": stampede_metrics::RESULT_SCHEMA, "version": "test",
        "plan": {
            "url": "http://127.0.0.1:8080/", "method": "GET", "connections": 2, "threads": 2,
            "duration_s": 3.0, "keepalive": true, "http_version": "1.1",
            "connect_timeout_s": 3.0, "timeout_s": 10.0, "body_bytes": 0
        },
        "started_at": "2026-12-01T00:00:00.000Z", "elapsed_s": 3.0000004, "interrupted": false,
        "requests": { "sent": 12, "completed": 10, "success": 7, "failed_status": 3, "errors": 2, "unfinished": 0 },
        "rps": 3.3, "goodput": 2.3, "error_rate_pct": 41.0, "throughput_bytes_per_s": 0.0,
        "errors": { "connect_refused": 1, "reset": 1 },
        "status": { "200": 7, "503": 3 },
        "bytes": { "received": 4096, "body": 100 },
        "connections": { "opened": 2, "reconnects": 0 },
        "latency_us": stampede_metrics::LatencySummary::of(&histogram),
        "histogram": encode_histogram(&histogram),
        "timeseries": [point(0, 100.0), point(1, 300.0), point(2, 200.0)],
        "notices": [],
        "environment": stampede_metrics::Environment::default(),
    });
    serde_json::from_value(json).unwrap()
}
