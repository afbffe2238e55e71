//! One reading of a server's cumulative counters, for what a request costs
//! it (`stampede experiment`): CPU user and system, bytes and calls of
//! write (/proc/PID/io `wchar`, `syscw`), context switches, RSS, each
//! thread's CPU and its threads' time on and waiting for a CPU (kernel.rs). Two readings around a load, and their difference divided by
//! the requests, are the cost; the division is stampede-analysis'.

use super::procfs::{read_io, read_process, thread_ticks, ticks_per_second};
use stampede_metrics::{ServerReading, ThreadCpu};

/// Reads process `pid`'s counters (the machine's accept-queue counters are
/// `read_listen_queue`'s); `None` once it has gone (or /proc/PID/io is not
/// readable).
pub fn read_cost(pid: u32) -> Option<ServerReading> {
    let process = read_process(pid)?;
    let (write_bytes, write_syscalls) = read_io(pid)?;
    let us_per_tick = 1e6 / ticks_per_second();
    let threads = thread_ticks(pid)
        .into_iter()
        .map(|(tid, ticks)| ThreadCpu {
            tid,
            name: std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
                .map(|name| name.trim().to_string())
                .unwrap_or_default(),
            cpu_us: ticks as f64 * us_per_tick,
        })
        .collect();
    let (run_ns, run_queue_wait_ns) = super::kernel::read_run_queue(pid).unwrap_or_default();
    Some(ServerReading {
        cpu_user_us: process.utime as f64 * us_per_tick,
        cpu_system_us: process.stime as f64 * us_per_tick,
        write_bytes,
        write_syscalls,
        ctx_voluntary: process.ctx_voluntary,
        ctx_involuntary: process.ctx_involuntary,
        rss_bytes: process.rss_bytes,
        threads,
        run_ns,
        run_queue_wait_ns,
        ..ServerReading::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_and_sees_its_writes() {
        let before = read_cost(std::process::id()).expect("own counters");
        assert!(!before.threads.is_empty());
        assert!(before.rss_bytes > 0);
        std::fs::write("/dev/null", b"a write").expect("a write to /dev/null");
        let after = read_cost(std::process::id()).expect("own counters");
        assert!(after.write_syscalls > before.write_syscalls);
        assert!(read_cost(u32::MAX).is_none());
    }
}
