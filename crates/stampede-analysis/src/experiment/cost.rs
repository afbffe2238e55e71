//! What a request cost the server: the difference of two readings of its
//! counters (before and after a load) divided by the requests completed in
//! between, and each thread's share of the CPU; the bottleneck's types
//! (bottleneck.rs names it). Pure arithmetic; the
//! readings come from the engine's monitor (`read_cost`).

use serde::{Deserialize, Serialize};
pub use stampede_metrics::{ClientTcp, ServerReading, ThreadWaits};

/// One thread's part of the server's CPU during a load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadShare {
    /// The thread's name (`comm`).
    pub name: String,
    /// Its share of all the server's threads' CPU, in percent.
    pub share_pct: f64,
    /// Its CPU over the load's wall time, in percent of one core (`top -H`).
    pub cpu_pct: f64,
}

/// One cause and what shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    /// In words, with what to do about it.
    pub cause: String,
    /// The counters that show it.
    pub evidence: Vec<Evidence>,
}

/// One counter's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The counter's name, e.g. `TcpExt.ListenDrops`.
    pub counter: String,
    /// Its value over the load.
    pub value: f64,
}

/// The server's cost per request over one load (or the mean of several).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCost {
    /// Server CPU time (user + system) per request, µs.
    pub cpu_us_per_request: f64,
    /// User CPU time per request, µs.
    pub cpu_user_us_per_request: f64,
    /// System CPU time per request, µs.
    pub cpu_system_us_per_request: f64,
    /// Bytes the server passed to write calls per request (`wchar`).
    pub write_bytes_per_request: f64,
    /// Write calls per request (`syscw`).
    pub write_syscalls_per_request: f64,
    /// Context switches (voluntary + involuntary) per request.
    pub ctx_switches_per_request: f64,
    /// Voluntary context switches per request (the thread waited).
    pub ctx_voluntary_per_request: f64,
    /// Involuntary context switches per request (the thread was preempted).
    pub ctx_involuntary_per_request: f64,
    /// RSS at the end of the load.
    pub rss_bytes: f64,
    /// Threads by CPU, busiest first.
    pub threads: Vec<ThreadShare>,
    /// Accept-queue overflows and drops during the load (the machine's).
    pub listen_overflows: f64,
    /// Accept-queue drops during the load (`TcpExt.ListenDrops`, the machine's).
    pub listen_drops: f64,
    /// The machine's CPU that spent the largest share of its time in
    /// softirq during the load (network packets), and that share in percent.
    #[serde(default)]
    pub softirq_cpu: Option<usize>,
    /// The share of that CPU's time spent in softirq, in percent.
    #[serde(default)]
    pub softirq_cpu_pct: f64,
    /// Of the time the server's threads were runnable, the share they
    /// waited on a run queue for a CPU, in percent (schedstat).
    #[serde(default)]
    pub run_queue_wait_pct: f64,
    /// The time the server's threads waited on a run queue, in percent of
    /// the load's wall time (100: one thread waiting the whole load). With
    /// one working thread, its CPU plus this is the share of the time it
    /// had work: saturated even when a busy host gave it half a core.
    #[serde(default)]
    pub run_queue_wait_pct_of_wall: f64,
    /// The machine's SYN retransmits and retransmitted TCP segments during
    /// the load.
    #[serde(default)]
    pub syn_retransmits: f64,
    /// Retransmitted TCP segments during the load (`Tcp.RetransSegs`, the machine's).
    #[serde(default)]
    pub tcp_retransmits: f64,
    /// The client's own sockets to the target during the load: their RTT
    /// and retransmits (`None`: sock_diag not readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_tcp: Option<ClientTcp>,
    /// Where the server's threads slept during the load (/proc/PID/task/*
    /// state and wchan, sampled beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_waits: Option<ThreadWaits>,
    /// What limited the server, each cause with its figure (filled by the
    /// experiment's summary: bottleneck.rs).
    pub bottleneck: Vec<Bottleneck>,
}

impl ServerCost {
    /// The cost of `requests` between `before` and `after`, `elapsed_s`
    /// apart. `None` without a request (a cost per nothing is no figure).
    pub fn between(
        before: &ServerReading,
        after: &ServerReading,
        requests: u64,
        elapsed_s: f64,
    ) -> Option<ServerCost> {
        if requests == 0 {
            return None;
        }
        let n = requests as f64;
        let per = |a: u64, b: u64| b.saturating_sub(a) as f64 / n;
        let (softirq_cpu, softirq_cpu_pct) =
            busiest_softirq(before, after).map_or((None, 0.0), |(cpu, pct)| (Some(cpu), pct));
        let user = (after.cpu_user_us - before.cpu_user_us).max(0.0);
        let system = (after.cpu_system_us - before.cpu_system_us).max(0.0);
        let voluntary = per(before.ctx_voluntary, after.ctx_voluntary);
        let involuntary = per(before.ctx_involuntary, after.ctx_involuntary);
        Some(ServerCost {
            cpu_us_per_request: (user + system) / n,
            cpu_user_us_per_request: user / n,
            cpu_system_us_per_request: system / n,
            write_bytes_per_request: per(before.write_bytes, after.write_bytes),
            write_syscalls_per_request: per(before.write_syscalls, after.write_syscalls),
            ctx_switches_per_request: voluntary + involuntary,
            ctx_voluntary_per_request: voluntary,
            ctx_involuntary_per_request: involuntary,
            rss_bytes: after.rss_bytes as f64,
            threads: thread_shares(before, after, elapsed_s),
            listen_overflows: after
                .listen_overflows
                .saturating_sub(before.listen_overflows) as f64,
            listen_drops: after.listen_drops.saturating_sub(before.listen_drops) as f64,
            softirq_cpu,
            softirq_cpu_pct,
            run_queue_wait_pct: run_queue_wait_pct(before, after),
            run_queue_wait_pct_of_wall: run_queue_wait_pct_of_wall(before, after, elapsed_s),
            syn_retransmits: after.syn_retransmits.saturating_sub(before.syn_retransmits) as f64,
            tcp_retransmits: after.tcp_retransmits.saturating_sub(before.tcp_retransmits) as f64,
            client_tcp: None,
            thread_waits: None,
            bottleneck: Vec::new(),
        })
    }

    /// The mean of several loads' costs; threads are averaged by rank
    /// (busiest with busiest), since thread ids change with each start.
    pub fn mean(costs: &[ServerCost]) -> Option<ServerCost> {
        if costs.is_empty() {
            return None;
        }
        let n = costs.len() as f64;
        let mean = |f: fn(&ServerCost) -> f64| costs.iter().map(f).sum::<f64>() / n;
        let ranks = costs.iter().map(|c| c.threads.len()).max().unwrap_or(0);
        let threads = (0..ranks)
            .map(|rank| {
                let at: Vec<&ThreadShare> =
                    costs.iter().filter_map(|c| c.threads.get(rank)).collect();
                let k = at.len() as f64;
                ThreadShare {
                    name: at.first().map(|t| t.name.clone()).unwrap_or_default(),
                    share_pct: at.iter().map(|t| t.share_pct).sum::<f64>() / k,
                    cpu_pct: at.iter().map(|t| t.cpu_pct).sum::<f64>() / k,
                }
            })
            .collect();
        Some(ServerCost {
            cpu_us_per_request: mean(|c| c.cpu_us_per_request),
            cpu_user_us_per_request: mean(|c| c.cpu_user_us_per_request),
            cpu_system_us_per_request: mean(|c| c.cpu_system_us_per_request),
            write_bytes_per_request: mean(|c| c.write_bytes_per_request),
            write_syscalls_per_request: mean(|c| c.write_syscalls_per_request),
            ctx_switches_per_request: mean(|c| c.ctx_switches_per_request),
            ctx_voluntary_per_request: mean(|c| c.ctx_voluntary_per_request),
            ctx_involuntary_per_request: mean(|c| c.ctx_involuntary_per_request),
            rss_bytes: mean(|c| c.rss_bytes),
            threads,
            listen_overflows: mean(|c| c.listen_overflows),
            listen_drops: mean(|c| c.listen_drops),
            // The busiest CPU of each load, averaged; the one named is the
            // busiest of the busiest.
            softirq_cpu: costs
                .iter()
                .max_by(|a, b| a.softirq_cpu_pct.total_cmp(&b.softirq_cpu_pct))
                .and_then(|c| c.softirq_cpu),
            softirq_cpu_pct: mean(|c| c.softirq_cpu_pct),
            run_queue_wait_pct: mean(|c| c.run_queue_wait_pct),
            run_queue_wait_pct_of_wall: mean(|c| c.run_queue_wait_pct_of_wall),
            syn_retransmits: mean(|c| c.syn_retransmits),
            tcp_retransmits: mean(|c| c.tcp_retransmits),
            client_tcp: ClientTcp::mean(
                &costs
                    .iter()
                    .filter_map(|c| c.client_tcp.clone())
                    .collect::<Vec<_>>(),
            ),
            thread_waits: ThreadWaits::mean(
                &costs
                    .iter()
                    .filter_map(|c| c.thread_waits.clone())
                    .collect::<Vec<_>>(),
            ),
            bottleneck: Vec::new(),
        })
    }
}

/// The CPU with the largest share of its ticks in softirq between the two
/// readings, and that share in percent.
fn busiest_softirq(before: &ServerReading, after: &ServerReading) -> Option<(usize, f64)> {
    before
        .cpus
        .iter()
        .zip(&after.cpus)
        .enumerate()
        .filter_map(|(i, (b, a))| {
            let total = a.total.checked_sub(b.total).filter(|t| *t > 0)?;
            let softirq = a.softirq.saturating_sub(b.softirq);
            Some((i, 100.0 * softirq as f64 / total as f64))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The share of the threads' runnable time spent waiting for a CPU.
fn run_queue_wait_pct(before: &ServerReading, after: &ServerReading) -> f64 {
    let run = after.run_ns.saturating_sub(before.run_ns) as f64;
    let wait = after
        .run_queue_wait_ns
        .saturating_sub(before.run_queue_wait_ns) as f64;
    if run + wait > 0.0 {
        100.0 * wait / (run + wait)
    } else {
        0.0
    }
}

/// The threads' wait on a run queue over the load's wall time, in percent.
fn run_queue_wait_pct_of_wall(
    before: &ServerReading,
    after: &ServerReading,
    elapsed_s: f64,
) -> f64 {
    let wait = after
        .run_queue_wait_ns
        .saturating_sub(before.run_queue_wait_ns) as f64;
    if elapsed_s > 0.0 {
        100.0 * wait / (elapsed_s * 1e9)
    } else {
        0.0
    }
}

/// Each thread's CPU during the load (threads matched by id; one born
/// during the load counts from zero), busiest first.
fn thread_shares(
    before: &ServerReading,
    after: &ServerReading,
    elapsed_s: f64,
) -> Vec<ThreadShare> {
    let used: Vec<(String, f64)> = after
        .threads
        .iter()
        .map(|thread| {
            let start = before
                .threads
                .iter()
                .find(|t| t.tid == thread.tid)
                .map_or(0.0, |t| t.cpu_us);
            (thread.name.clone(), (thread.cpu_us - start).max(0.0))
        })
        .collect();
    let total: f64 = used.iter().map(|(_, cpu)| cpu).sum();
    let mut shares: Vec<ThreadShare> = used
        .into_iter()
        .map(|(name, cpu)| ThreadShare {
            name,
            share_pct: if total > 0.0 {
                100.0 * cpu / total
            } else {
                0.0
            },
            cpu_pct: if elapsed_s > 0.0 {
                100.0 * cpu / (elapsed_s * 1e6)
            } else {
                0.0
            },
        })
        .collect();
    shares.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct));
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(user: f64, system: f64, wchar: u64, threads: &[(u32, f64)]) -> ServerReading {
        ServerReading {
            cpu_user_us: user,
            cpu_system_us: system,
            write_bytes: wchar,
            write_syscalls: wchar / 100,
            ctx_voluntary: wchar / 10,
            ctx_involuntary: wchar / 50,
            rss_bytes: 4096,
            listen_overflows: wchar,
            listen_drops: 0,
            cpus: vec![
                stampede_metrics::CpuTicks {
                    softirq: wchar / 1000,
                    total: wchar / 10,
                },
                stampede_metrics::CpuTicks {
                    softirq: 0,
                    total: wchar / 10,
                },
            ],
            run_ns: wchar * 3,
            run_queue_wait_ns: wchar,
            syn_retransmits: wchar / 10_000,
            tcp_retransmits: wchar / 1000,
            threads: threads
                .iter()
                .map(|(t, c)| stampede_metrics::ThreadCpu {
                    tid: *t,
                    name: format!("w{t}"),
                    cpu_us: *c,
                })
                .collect(),
        }
    }

    #[test]
    fn a_request_costs_the_difference_divided_by_the_requests() {
        let before = reading(1000.0, 500.0, 10_000, &[(1, 0.0), (2, 100.0)]);
        let after = reading(
            5000.0,
            2500.0,
            110_000,
            &[(1, 600_000.0), (2, 200_100.0), (3, 0.0)],
        );
        let cost = ServerCost::between(&before, &after, 1000, 1.0).unwrap();
        assert_eq!(cost.cpu_user_us_per_request, 4.0);
        assert_eq!(cost.cpu_system_us_per_request, 2.0);
        assert_eq!(cost.cpu_us_per_request, 6.0);
        assert_eq!(cost.write_bytes_per_request, 100.0);
        assert_eq!(cost.write_syscalls_per_request, 1.0);
        assert_eq!(cost.ctx_voluntary_per_request, 10.0);
        assert_eq!(cost.ctx_involuntary_per_request, 2.0);
        assert_eq!(cost.ctx_switches_per_request, 12.0);
        assert_eq!(cost.threads[0].name, "w1");
        assert_eq!(cost.threads[0].share_pct, 75.0);
        assert_eq!(cost.threads[0].cpu_pct, 60.0);
        assert_eq!(cost.threads[1].cpu_pct, 20.0);
        assert_eq!(cost.threads[2].share_pct, 0.0);
        assert_eq!(cost.listen_overflows, 100_000.0);
        // cpu0: 100 of 10,000 ticks in softirq; cpu1 none.
        assert_eq!((cost.softirq_cpu, cost.softirq_cpu_pct), (Some(0), 1.0));
        // Waited 100,000 ns, ran 300,000 ns: a quarter of the runnable time.
        assert_eq!(cost.run_queue_wait_pct, 25.0);
        // 100,000 ns of a 1 s load.
        assert_eq!(cost.run_queue_wait_pct_of_wall, 0.01);
        assert_eq!((cost.syn_retransmits, cost.tcp_retransmits), (10.0, 100.0));
        assert!(ServerCost::between(&before, &after, 0, 1.0).is_none());
    }

    #[test]
    fn the_mean_pairs_threads_by_rank() {
        let one = |busy: f64, cpu: f64| ServerCost {
            cpu_us_per_request: cpu,
            threads: vec![
                ThreadShare {
                    name: "a".into(),
                    share_pct: busy,
                    cpu_pct: busy,
                },
                ThreadShare {
                    name: "b".into(),
                    share_pct: 100.0 - busy,
                    cpu_pct: 100.0 - busy,
                },
            ],
            ..ServerCost::default()
        };
        let mean = ServerCost::mean(&[one(80.0, 4.0), one(60.0, 8.0)]).unwrap();
        assert_eq!(mean.cpu_us_per_request, 6.0);
        assert_eq!(mean.threads[0].share_pct, 70.0);
        assert_eq!(mean.threads[1].share_pct, 30.0);
        assert!(ServerCost::mean(&[]).is_none());
    }

    /// A reading with only these CPUs' (softirq, total) ticks.
    fn ticks(cpus: &[(u64, u64)]) -> ServerReading {
        ServerReading {
            cpus: cpus
                .iter()
                .map(|(softirq, total)| stampede_metrics::CpuTicks {
                    softirq: *softirq,
                    total: *total,
                })
                .collect(),
            ..ServerReading::default()
        }
    }

    /// A reading with only these schedstat counters.
    fn sched(run_ns: u64, run_queue_wait_ns: u64) -> ServerReading {
        ServerReading {
            run_ns,
            run_queue_wait_ns,
            ..ServerReading::default()
        }
    }

    #[test]
    fn the_busiest_softirq_cpu_is_the_largest_share_of_ticks_that_passed() {
        // cpu0: 10 of 100 ticks in softirq; cpu1: 30 of 100.
        assert_eq!(
            busiest_softirq(&ticks(&[(0, 0), (0, 0)]), &ticks(&[(10, 100), (30, 100)])),
            Some((1, 30.0))
        );
        // No tick passed: no share (not 0 / 0).
        assert_eq!(
            busiest_softirq(&ticks(&[(5, 50)]), &ticks(&[(5, 50)])),
            None
        );
    }

    #[test]
    fn run_queue_shares_without_run_time_or_wall_time() {
        let zero = sched(0, 0);
        // Waited 1 ms and never ran: all of the runnable time.
        assert_eq!(run_queue_wait_pct(&zero, &sched(0, 1_000_000)), 100.0);
        // Neither ran nor waited: 0, not 0 / 0.
        assert_eq!(run_queue_wait_pct(&zero, &zero), 0.0);
        // 1 ms over a load of no length: 0, not infinity.
        assert_eq!(
            run_queue_wait_pct_of_wall(&zero, &sched(0, 1_000_000), 0.0),
            0.0
        );
    }

    #[test]
    fn a_thread_that_used_nothing_over_no_time_has_no_share() {
        // 5 µs before and after, over 0 s: 0 % of the threads' CPU and of
        // a core, not 0 / 0.
        let idle = reading(0.0, 0.0, 0, &[(1, 5.0)]);
        let shares = thread_shares(&idle, &idle, 0.0);
        assert_eq!((shares[0].share_pct, shares[0].cpu_pct), (0.0, 0.0));
    }
}
