//! One reading of a server's cumulative counters (`stampede experiment`):
//! CPU user and system, bytes and calls of write (/proc/PID/io `wchar`,
//! `syscw`), context switches, RSS, each thread's CPU, and the machine's
//! accept-queue counters. The engine's monitor takes it; the difference of
//! two around a load, divided by the requests, is stampede-analysis' cost.

use serde::{Deserialize, Serialize};

/// A server's counters at one instant, CPU in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerReading {
    pub cpu_user_us: f64,
    pub cpu_system_us: f64,
    /// Bytes passed to write calls (`wchar`: counted on tmpfs too, where
    /// `write_bytes` stays 0).
    pub write_bytes: u64,
    /// Write calls (`syscw`).
    pub write_syscalls: u64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
    pub rss_bytes: u64,
    /// Each thread's CPU so far.
    pub threads: Vec<ThreadCpu>,
    /// The machine's TcpExt `ListenOverflows` and `ListenDrops`.
    pub listen_overflows: u64,
    pub listen_drops: u64,
}

/// One thread's CPU so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadCpu {
    pub tid: u32,
    pub name: String,
    pub cpu_us: f64,
}
