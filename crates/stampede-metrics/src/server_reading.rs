//! One reading of a server's cumulative counters (`stampede experiment`):
//! CPU user and system, bytes and calls of write (/proc/PID/io `wchar`,
//! `syscw`), context switches, RSS, each thread's CPU, and the machine's
//! accept-queue counters, its softirq time per CPU (/proc/stat) and TCP
//! retransmits (/proc/net/snmp, /proc/net/netstat), and the time the
//! server's threads ran and waited on a run queue (schedstat). The engine's
//! monitor takes it; the difference of
//! two around a load, divided by the requests, is stampede-analysis' cost.

use serde::{Deserialize, Serialize};

/// A server's counters at one instant, CPU in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerReading {
    /// User CPU so far, µs.
    pub cpu_user_us: f64,
    /// System CPU so far, µs.
    pub cpu_system_us: f64,
    /// Bytes passed to write calls (`wchar`: counted on tmpfs too, where
    /// `write_bytes` stays 0).
    pub write_bytes: u64,
    /// Write calls (`syscw`).
    pub write_syscalls: u64,
    /// Voluntary context switches so far.
    pub ctx_voluntary: u64,
    /// Involuntary context switches so far.
    pub ctx_involuntary: u64,
    /// Resident memory, bytes.
    pub rss_bytes: u64,
    /// Each thread's CPU so far.
    pub threads: Vec<ThreadCpu>,
    /// The machine's TcpExt `ListenOverflows` and `ListenDrops`.
    pub listen_overflows: u64,
    /// See `listen_overflows`.
    pub listen_drops: u64,
    /// The machine's CPUs: each one's softirq and total ticks (/proc/stat).
    #[serde(default)]
    pub cpus: Vec<CpuTicks>,
    /// The server's threads: time on a CPU and time waiting on a run
    /// queue, ns (/proc/PID/task/*/schedstat, first and second fields).
    #[serde(default)]
    pub run_ns: u64,
    /// See `run_ns`.
    #[serde(default)]
    pub run_queue_wait_ns: u64,
    /// The machine's SYN retransmits (TcpExt `TCPSynRetrans`) and all
    /// retransmitted TCP segments (Tcp `RetransSegs`).
    #[serde(default)]
    pub syn_retransmits: u64,
    /// See `syn_retransmits`.
    #[serde(default)]
    pub tcp_retransmits: u64,
}

/// One CPU's time so far, in clock ticks (/proc/stat `cpuN`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTicks {
    /// Ticks spent in softirq.
    pub softirq: u64,
    /// Every field of its line summed (user … steal).
    pub total: u64,
}

/// One thread's CPU so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadCpu {
    /// The thread id.
    pub tid: u32,
    /// The thread's name (`comm`).
    pub name: String,
    /// User + system CPU so far, µs.
    pub cpu_us: f64,
}
