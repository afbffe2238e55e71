//! What the process monitor saw while the load ran: per process (the server
//! under test, and stampede itself) CPU, memory, threads, fds and context
//! switches once a second, plus the machine's load. Data only; the sampling
//! lives in the engine.

use serde::{Deserialize, Serialize};

/// One second of one process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    /// Seconds since monitoring started (end of the sampled interval).
    pub t_s: f64,
    /// CPU used in the interval, percent of one core (200 = two cores busy).
    pub cpu_user_pct: f64,
    /// System CPU used in the interval, percent of one core.
    pub cpu_sys_pct: f64,
    /// The busiest thread's CPU in the interval, percent of one core.
    pub busiest_thread_pct: f64,
    /// Resident memory at the sample, bytes.
    pub rss_bytes: u64,
    /// Threads at the sample.
    pub threads: u64,
    /// Open file descriptors at the sample.
    pub open_fds: u64,
    /// Context switches in the interval.
    pub ctx_voluntary: u64,
    /// Involuntary context switches in the interval.
    pub ctx_involuntary: u64,
}

/// Totals and peaks of one process over the whole monitored time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSummary {
    /// The process id.
    pub pid: u32,
    /// The process name (`/proc/PID/comm`).
    pub name: String,
    /// `"server"` for processes given with --pid/--spawn, `"client"` for stampede.
    pub role: String,
    /// User CPU over the monitored time, seconds.
    pub cpu_user_s: f64,
    /// System CPU over the monitored time, seconds.
    pub cpu_sys_s: f64,
    /// Mean CPU over the monitored time, percent of one core.
    pub cpu_pct_mean: f64,
    /// Highest CPU (user + system) of a sample, percent of one core.
    pub cpu_pct_max: f64,
    /// Highest busiest-thread CPU of a sample, percent of one core.
    pub busiest_thread_pct_max: f64,
    /// Highest resident memory of a sample, bytes.
    pub rss_max_bytes: u64,
    /// Most threads of a sample.
    pub threads_max: u64,
    /// Most open file descriptors of a sample.
    pub open_fds_max: u64,
    /// Voluntary context switches over the monitored time.
    pub ctx_voluntary: u64,
    /// Involuntary context switches over the monitored time.
    pub ctx_involuntary: u64,
    /// CPU seconds (user + system) per 1000 completed requests: the efficiency
    /// figure ("40% CPU at 671k pages/min").
    pub cpu_s_per_1k_requests: Option<f64>,
    /// True when the process ended while it was being monitored.
    pub exited: bool,
    /// One sample per interval, in order.
    pub samples: Vec<ProcessSample>,
}

/// The machine as a whole, once a second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineSample {
    /// Seconds since monitoring started.
    pub t_s: f64,
    /// 1-minute load average.
    pub load_1m: f64,
    /// All CPUs busy share in the interval, percent of the whole machine.
    pub cpu_pct: f64,
}

/// Everything the monitor recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonitorReport {
    /// Seconds between samples.
    pub interval_s: f64,
    /// The machine's online CPUs.
    pub cpus: usize,
    /// Each monitored process: the servers and stampede itself.
    pub processes: Vec<ProcessSummary>,
    /// The machine's load and CPU, once per interval.
    pub machine: Vec<MachineSample>,
}

impl MonitorReport {
    /// Fills in CPU seconds per 1000 requests for every process.
    pub fn set_requests(&mut self, completed: u64) {
        for process in &mut self.processes {
            process.cpu_s_per_1k_requests = (completed > 0)
                .then(|| (process.cpu_user_s + process.cpu_sys_s) * 1000.0 / completed as f64);
        }
    }

    /// The client's own summary, if it was monitored.
    pub fn client(&self) -> Option<&ProcessSummary> {
        self.processes.iter().find(|p| p.role == "client")
    }

    /// The servers' summaries.
    pub fn servers(&self) -> impl Iterator<Item = &ProcessSummary> {
        self.processes.iter().filter(|p| p.role == "server")
    }
}
