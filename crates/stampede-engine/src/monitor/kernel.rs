//! The kernel's counters a bottleneck is named from, besides the accept
//! queue (netstat.rs): each CPU's softirq time (/proc/stat), the machine's
//! SYN retransmits (/proc/net/netstat TcpExt `TCPSynRetrans`) and
//! retransmitted segments (/proc/net/snmp Tcp `RetransSegs`), and how long
//! a process's threads ran and waited on a run queue
//! (/proc/PID/task/*/schedstat). All cumulative: read around a load.

use stampede_metrics::CpuTicks;
use std::fs;

/// The machine's counters at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineCounters {
    /// Each CPU's ticks from /proc/stat, in its order.
    pub cpus: Vec<CpuTicks>,
    /// TcpExt `TCPSynRetrans`: SYNs sent again.
    pub syn_retransmits: u64,
    /// Tcp `RetransSegs`: segments sent again.
    pub tcp_retransmits: u64,
}

/// Reads the machine's counters; a file that cannot be read leaves its
/// figures at zero (and empty for the CPUs).
pub fn read_machine_counters() -> MachineCounters {
    let read = |path: &str| fs::read_to_string(path).unwrap_or_default();
    MachineCounters {
        cpus: cpu_ticks(&read("/proc/stat")),
        syn_retransmits: pair_value(&read("/proc/net/netstat"), "TcpExt:", "TCPSynRetrans")
            .unwrap_or(0),
        tcp_retransmits: pair_value(&read("/proc/net/snmp"), "Tcp:", "RetransSegs").unwrap_or(0),
    }
}

/// The time a process's threads ran on a CPU and waited on a run queue,
/// ns, summed over its threads; `None` without schedstat (a kernel built
/// without CONFIG_SCHED_INFO).
pub fn read_run_queue(pid: u32) -> Option<(u64, u64)> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut any = false;
    let (mut run, mut wait) = (0, 0);
    for entry in tasks.flatten() {
        let path = entry.path().join("schedstat");
        if let Some((r, w)) = fs::read_to_string(path).ok().as_deref().and_then(schedstat) {
            any = true;
            run += r;
            wait += w;
        }
    }
    any.then_some((run, wait))
}

/// `cpuN` lines of /proc/stat: softirq is the seventh field after the
/// name (user nice system idle iowait irq softirq steal …); the total sums
/// the first eight (guest time is inside user already).
fn cpu_ticks(text: &str) -> Vec<CpuTicks> {
    text.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .filter_map(|line| {
            let fields: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .take(8)
                .map(|f| f.parse().ok())
                .collect::<Option<_>>()?;
            Some(CpuTicks {
                softirq: *fields.get(6)?,
                total: fields.iter().sum(),
            })
        })
        .collect()
}

/// schedstat: time on a CPU (ns), time waiting on a run queue (ns), slices.
pub(crate) fn schedstat(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

/// /proc/net/netstat and /proc/net/snmp hold pairs of lines: `PREFIX NAME…`
/// then `PREFIX VALUE…` in the same order.
fn pair_value(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let i = names.iter().position(|n| *n == name)?;
    values.get(i)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_softirq_per_cpu_not_the_total_line() {
        let text = "cpu  2456571 1018740 1022249 9537859 214560 0 81193 23129 0 0\n\
                    cpu0 1221972 497969 495266 4813737 97794 0 39042 11163 0 0\n\
                    cpu1 100 0 0 800 0 0 100 0 0 0\nintr 1 2 3\n";
        let cpus = cpu_ticks(text);
        assert_eq!(cpus.len(), 2);
        assert_eq!(cpus[0].softirq, 39042);
        assert_eq!(
            cpus[1],
            CpuTicks {
                softirq: 100,
                total: 1000
            }
        );
    }

    #[test]
    fn reads_the_second_field_of_schedstat_as_the_wait() {
        assert_eq!(schedstat("225306 2987139 2\n"), Some((225306, 2987139)));
        assert_eq!(schedstat("225306\n"), None);
    }

    #[test]
    fn finds_retransmits_by_name() {
        let snmp = "Ip: Forwarding\nIp: 1\nTcp: RtoAlgorithm RetransSegs InErrs\nTcp: 1 13512 0\n";
        assert_eq!(pair_value(snmp, "Tcp:", "RetransSegs"), Some(13512));
        let netstat = "TcpExt: SyncookiesSent TCPSynRetrans\nTcpExt: 0 42\n";
        assert_eq!(pair_value(netstat, "TcpExt:", "TCPSynRetrans"), Some(42));
        assert_eq!(pair_value(netstat, "TcpExt:", "Missing"), None);
    }

    #[test]
    fn reads_this_process_run_queue() {
        if !std::path::Path::new("/proc/self/schedstat").exists() {
            return;
        }
        let (run, _) = read_run_queue(std::process::id()).expect("schedstat");
        assert!(run > 0, "this test ran on a CPU");
    }
}
