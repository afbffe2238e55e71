//! Reading one process's counters (and the machine's) from /proc. Linux only;
//! a process that has gone away reads as `None`.

use std::fs;

/// Cumulative counters of one process at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ProcessCounters {
    /// CPU time in clock ticks.
    pub utime: u64,
    pub stime: u64,
    pub threads: u64,
    pub rss_bytes: u64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
    pub open_fds: u64,
}

/// The fields after `comm` in a /proc stat line (comm may contain spaces and
/// parentheses, so split at the last ')').
pub(crate) fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    let after = &stat[stat.rfind(')')? + 1..];
    Some(after.split_whitespace().collect())
}

/// utime and stime (ticks) from a /proc/.../stat line.
pub(crate) fn cpu_ticks(stat: &str) -> Option<(u64, u64)> {
    let fields = stat_fields(stat)?;
    // After the comm: state is field 3 of stat(5), so utime (14) is index 11.
    Some((fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?))
}

fn status_value(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find(|line| line.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Reads a process's counters.
pub(crate) fn read_process(pid: u32) -> Option<ProcessCounters> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (utime, stime) = cpu_ticks(&stat)?;
    let fields = stat_fields(&stat)?;
    let threads = fields.get(17)?.parse().ok()?;
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    // /proc/PID/status counts the main thread's switches only: sum every thread's.
    let (ctx_voluntary, ctx_involuntary) = thread_switches(pid).unwrap_or((
        status_value(&status, "voluntary_ctxt_switches:").unwrap_or(0),
        status_value(&status, "nonvoluntary_ctxt_switches:").unwrap_or(0),
    ));
    let open_fds = fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| dir.count() as u64)
        .unwrap_or(0);
    Some(ProcessCounters {
        utime,
        stime,
        threads,
        rss_bytes: status_value(&status, "VmRSS:").unwrap_or(0) * 1024,
        ctx_voluntary,
        ctx_involuntary,
        open_fds,
    })
}

/// Cumulative counters of one thread: what can be told apart per thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ThreadCounters {
    /// CPU time in clock ticks.
    pub utime: u64,
    pub stime: u64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}

impl ThreadCounters {
    /// The counters added since `start` (never negative).
    pub(crate) fn since(self, start: ThreadCounters) -> ThreadCounters {
        ThreadCounters {
            utime: self.utime.saturating_sub(start.utime),
            stime: self.stime.saturating_sub(start.stime),
            ctx_voluntary: self.ctx_voluntary.saturating_sub(start.ctx_voluntary),
            ctx_involuntary: self.ctx_involuntary.saturating_sub(start.ctx_involuntary),
        }
    }

    pub(crate) fn plus(self, other: ThreadCounters) -> ThreadCounters {
        ThreadCounters {
            utime: self.utime + other.utime,
            stime: self.stime + other.stime,
            ctx_voluntary: self.ctx_voluntary + other.ctx_voluntary,
            ctx_involuntary: self.ctx_involuntary + other.ctx_involuntary,
        }
    }

    /// Each counter at its highest of the two: counters only grow, so a
    /// read that raced the thread's end never takes one back.
    pub(crate) fn latest(self, other: ThreadCounters) -> ThreadCounters {
        ThreadCounters {
            utime: self.utime.max(other.utime),
            stime: self.stime.max(other.stime),
            ctx_voluntary: self.ctx_voluntary.max(other.ctx_voluntary),
            ctx_involuntary: self.ctx_involuntary.max(other.ctx_involuntary),
        }
    }
}

/// A thread's counters from its `/proc/self/task/<tid>/stat` and status texts
/// (same layout as a process's; the stat's times are that thread's alone).
pub(crate) fn thread_counters(stat: &str, status: &str) -> Option<ThreadCounters> {
    let (utime, stime) = cpu_ticks(stat)?;
    Some(ThreadCounters {
        utime,
        stime,
        ctx_voluntary: status_value(status, "voluntary_ctxt_switches:").unwrap_or(0),
        ctx_involuntary: status_value(status, "nonvoluntary_ctxt_switches:").unwrap_or(0),
    })
}

/// Reads one thread of this process; `None` once it has ended.
pub(crate) fn read_thread(tid: u32) -> Option<ThreadCounters> {
    let stat = fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    let status = fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap_or_default();
    thread_counters(&stat, &status)
}

/// Voluntary and involuntary context switches summed over all threads.
fn thread_switches(pid: u32) -> Option<(u64, u64)> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut totals = (0, 0);
    for entry in tasks.flatten() {
        let path = entry.path().join("status");
        if let Ok(status) = fs::read_to_string(path) {
            totals.0 += status_value(&status, "voluntary_ctxt_switches:").unwrap_or(0);
            totals.1 += status_value(&status, "nonvoluntary_ctxt_switches:").unwrap_or(0);
        }
    }
    Some(totals)
}

/// CPU ticks (user + system) of each thread of a process, by thread id.
pub(crate) fn thread_ticks(pid: u32) -> Vec<(u32, u64)> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|entry| {
            let tid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
            let (user, system) = cpu_ticks(&stat)?;
            Some((tid, user + system))
        })
        .collect()
}

/// `wchar` and `syscw` of /proc/PID/io: bytes passed to write calls and
/// the number of write calls, since the process started (all threads).
pub(crate) fn read_io(pid: u32) -> Option<(u64, u64)> {
    let io = fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    Some((status_value(&io, "wchar:")?, status_value(&io, "syscw:")?))
}

/// The process name.
pub(crate) fn process_name(pid: u32) -> String {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|name| name.trim().to_string())
        .unwrap_or_default()
}

/// (busy, total) jiffies of all CPUs, from the first line of /proc/stat.
pub(crate) fn machine_ticks() -> Option<(u64, u64)> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let total: u64 = values.iter().take(8).sum();
    // idle + iowait are not busy.
    let idle = values.get(3)? + values.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// The 1-minute load average.
pub(crate) fn load_average() -> f64 {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// Clock ticks per second for CPU times.
pub(crate) fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant and has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_a_hostile_comm() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 7 0 100 1000 50";
        assert_eq!(cpu_ticks(stat), Some((250, 75)));
        assert_eq!(stat_fields(stat).unwrap()[17], "7");
    }

    #[test]
    fn parses_a_thread_stat_and_status() {
        // /proc/self/task/<tid>/stat of a worker (comm truncated to 15 bytes).
        let stat = "4242 (stampede-worker) R 4100 4100 33 34816 4100 4194368 1719 0 0 0 \
                    1234 567 0 0 20 0 5 0 1774 1098321920 5120 18446744073709551615";
        let status = "Name:\tstampede-worker\nState:\tR (running)\nTgid:\t4100\n\
                      voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3456\n";
        assert_eq!(
            thread_counters(stat, status),
            Some(ThreadCounters {
                utime: 1234,
                stime: 567,
                ctx_voluntary: 12,
                ctx_involuntary: 3456,
            })
        );
        // A status that could not be read still gives the CPU times.
        assert_eq!(thread_counters(stat, "").map(|t| t.stime), Some(567));
        assert_eq!(thread_counters("4242 (truncated", status), None);
        let a = ThreadCounters {
            utime: 10,
            stime: 5,
            ctx_voluntary: 1,
            ctx_involuntary: 2,
        };
        let b = ThreadCounters {
            utime: 12,
            stime: 4,
            ..a
        };
        assert_eq!(b.since(a).utime, 2);
        assert_eq!(b.since(a).stime, 0, "never negative");
        assert_eq!(a.latest(b).stime, 5);
        assert_eq!(a.plus(b).utime, 22);
    }

    #[test]
    fn reads_this_thread() {
        // SAFETY: gettid takes no arguments and cannot fail.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
        assert!(read_thread(tid).is_some());
        assert!(read_thread(u32::MAX).is_none());
    }

    #[test]
    fn reads_this_process() {
        let me = read_process(std::process::id()).expect("own /proc entry");
        assert!(me.threads >= 1);
        assert!(me.rss_bytes > 0);
        assert!(me.open_fds >= 3);
        assert!(!thread_ticks(std::process::id()).is_empty());
        assert!(machine_ticks().is_some());
        let (wchar, _) = read_io(std::process::id()).expect("own /proc/PID/io");
        std::fs::write("/dev/null", b"0123456789").expect("a write to /dev/null");
        let (after, _) = read_io(std::process::id()).expect("own /proc/PID/io");
        assert!(after > wchar, "a write counts in wchar");
        assert!(read_process(u32::MAX).is_none());
    }
}
