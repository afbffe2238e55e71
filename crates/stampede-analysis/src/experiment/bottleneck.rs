//! The bottleneck named from the counters the kernel keeps, each cause with
//! its figure: the accept queue overflowed (TcpExt `ListenOverflows`), SYNs
//! or segments retransmitted (TcpExt `TCPSynRetrans`, Tcp `RetransSegs`),
//! one thread saturated while the others idle, every busy thread saturated,
//! the server's threads waiting on a run queue (schedstat), one CPU busy
//! with softirq (/proc/stat), or the client's own busiest thread saturated
//! (the run's monitor), the client's own sockets retransmitting
//! (`tcp_info`), or the server's working threads asleep in a blocking call
//! while no CPU cause shows (their state and wchan). No cause without its
//! evidence.

use super::cost::{Bottleneck, Evidence, ServerCost};
use stampede_metrics::RunResult;

/// The counter a saturated thread is cited by.
const BUSIEST: &str = "busiest thread cpu_pct";
/// The counter a wait for a CPU is cited by.
const RUN_QUEUE_WAIT: &str = "schedstat run-queue wait pct";
/// A thread this busy (percent of one core) is saturated.
const SATURATED_PCT: f64 = 90.0;
/// A thread below this share of the server's CPU takes no part in the work
/// (the main thread of a reactor-per-core server, a logger).
const IDLE_SHARE_PCT: f64 = 5.0;
/// A CPU with this share of its time in softirq spends it on packets
/// rather than on the server or the client.
const SOFTIRQ_PCT: f64 = 20.0;
/// Runnable threads waiting this share of the time for a CPU: the machine
/// has more work than CPUs.
const RUN_QUEUE_WAIT_PCT: f64 = 20.0;

/// A mean count of events as words: `once`, `12 times`.
fn times(mean: f64) -> String {
    let n = mean.round();
    if n == 1.0 {
        "once".to_string()
    } else {
        format!("{n:.0} times")
    }
}

/// The causes the cost's counters show, most telling first.
pub fn bottlenecks(cost: &ServerCost) -> Vec<Bottleneck> {
    let mut found = Vec::new();
    // Counts are means over rounds: a cause needs one event a round at
    // least (a mean of 0.5, one event in one of two rounds, printed as
    // "overflowed 0 times" and is noise of a machine-wide counter).
    if cost.listen_overflows >= 1.0 {
        found.push(Bottleneck {
            cause: format!(
                "the accept queue overflowed {}: raise the listen backlog, or accept faster",
                times(cost.listen_overflows)
            ),
            evidence: vec![
                evidence("TcpExt.ListenOverflows", cost.listen_overflows),
                evidence("TcpExt.ListenDrops", cost.listen_drops),
            ],
        });
    }
    let cpu = cpu_causes(cost);
    // A saturated thread is the cause, whatever the others do; without
    // one, threads asleep in a blocking call are.
    let saturated = cpu.iter().any(|b| cited_by(b, BUSIEST));
    let sleepers = if saturated { None } else { asleep(cost) };
    // Threads that sleep most of the time are runnable little: a large
    // share of little that is a small share of the wall time is the host's
    // wake-up latency, not what bounds the server.
    let wake_up_latency =
        sleepers.is_some() && cost.run_queue_wait_pct_of_wall < RUN_QUEUE_WAIT_PCT;
    found.extend(sleepers);
    found.extend(
        cpu.into_iter()
            .filter(|b| !(wake_up_latency && cited_by(b, RUN_QUEUE_WAIT))),
    );
    if cost.syn_retransmits >= 1.0 {
        found.push(Bottleneck {
            cause: format!(
                "{:.0} SYNs retransmitted: those connections waited a second or more to open (SYNs dropped: a full accept queue or SYN backlog)",
                cost.syn_retransmits
            ),
            evidence: vec![evidence("TcpExt.TCPSynRetrans", cost.syn_retransmits)],
        });
    }
    if let Some(tcp) = cost.client_tcp.as_ref().filter(|t| t.retransmits >= 1.0) {
        found.push(Bottleneck {
            cause: format!(
                "the client's sockets retransmitted {:.0} segments; RTT p99 {:.1} ms: the network or the server's receive path drops packets",
                tcp.retransmits,
                tcp.rtt_us_p99 / 1000.0
            ),
            evidence: vec![
                evidence("client tcp_info total_retrans", tcp.retransmits),
                evidence("client tcp_info rtt_us p99", tcp.rtt_us_p99),
            ],
        });
    }
    if cost.tcp_retransmits - cost.syn_retransmits >= 1.0 {
        found.push(Bottleneck {
            cause: format!(
                "{:.0} TCP segments retransmitted: packets were lost (a full queue, or the network)",
                cost.tcp_retransmits
            ),
            evidence: vec![evidence("Tcp.RetransSegs", cost.tcp_retransmits)],
        });
    }
    found
}

/// Whether the cause's first figure is `counter`'s.
fn cited_by(cause: &Bottleneck, counter: &str) -> bool {
    cause.evidence.first().is_some_and(|e| e.counter == counter)
}

/// The server's threads against its CPUs, and the machine's CPUs against
/// softirq.
fn cpu_causes(cost: &ServerCost) -> Vec<Bottleneck> {
    let mut found = Vec::new();
    let working: Vec<_> = cost
        .threads
        .iter()
        .filter(|t| t.share_pct >= IDLE_SHARE_PCT)
        .collect();
    let saturated = working
        .iter()
        .filter(|t| t.cpu_pct >= SATURATED_PCT)
        .count();
    // A lone working thread that always had work, on a CPU or waiting for
    // one, is saturated even when the host lent it half a core: its wait
    // is the threads' wait (the idle ones wait for nothing).
    let lone = match working.as_slice() {
        [only] if saturated == 0 => Some((only, only.cpu_pct + cost.run_queue_wait_pct_of_wall)),
        _ => None,
    };
    if let Some((top, runnable)) = lone.filter(|(_, runnable)| *runnable >= SATURATED_PCT) {
        found.push(Bottleneck {
            cause: format!(
                "one thread does all the work, runnable {runnable:.0}% of the time (on a CPU {:.0}%, waiting for one {:.0}%): it is saturated (more threads, or spread the load)",
                top.cpu_pct, cost.run_queue_wait_pct_of_wall
            ),
            evidence: vec![
                evidence(BUSIEST, top.cpu_pct),
                evidence("schedstat run-queue wait pct of wall", cost.run_queue_wait_pct_of_wall),
            ],
        });
    }
    if let Some(top) = working.first().filter(|t| t.cpu_pct >= SATURATED_PCT) {
        let others = working.len() - 1;
        let cause = if working.len() == 1 {
            format!(
                "one thread does all the work, at {:.0}% of a core: it is saturated (more threads, or spread the load)",
                top.cpu_pct
            )
        } else if saturated == 1 {
            let rest = working[1..].iter().map(|t| t.cpu_pct).sum::<f64>() / others as f64;
            format!(
                "one of {} working threads at {:.0}% of a core, the other {others} at {rest:.0}%: the load is not spread",
                working.len(),
                top.cpu_pct
            )
        } else {
            format!(
                "{saturated} of {} working threads at {:.0}% of a core or more: the server is CPU-bound",
                working.len(),
                SATURATED_PCT
            )
        };
        found.push(Bottleneck {
            cause,
            evidence: vec![evidence(BUSIEST, top.cpu_pct)],
        });
    }
    if cost.run_queue_wait_pct >= RUN_QUEUE_WAIT_PCT {
        found.push(Bottleneck {
            cause: format!(
                "the server's threads waited for a CPU {:.0}% of the time they were runnable: more runnable threads than CPUs (fewer threads, or CPUs of its own, apart from the client)",
                cost.run_queue_wait_pct
            ),
            evidence: vec![evidence(RUN_QUEUE_WAIT, cost.run_queue_wait_pct)],
        });
    }
    if let Some(cpu) = cost
        .softirq_cpu
        .filter(|_| cost.softirq_cpu_pct >= SOFTIRQ_PCT)
    {
        found.push(Bottleneck {
            cause: format!(
                "CPU {cpu} spent {:.0}% of its time in softirq (network packets): spread the interrupts (RSS, RPS, irqbalance) or send fewer packets",
                cost.softirq_cpu_pct
            ),
            evidence: vec![evidence(&format!("/proc/stat cpu{cpu} softirq pct"), cost.softirq_cpu_pct)],
        });
    }
    found
}

/// Half the server's working threads or more asleep in a blocking call
/// (a lock, a sleep, a disk read), and none saturated: the server waits.
fn asleep(cost: &ServerCost) -> Option<Bottleneck> {
    let waits = cost.thread_waits.as_ref()?;
    if waits.asleep_threads < 0.5 || waits.asleep_threads * 2.0 < waits.working_threads {
        return None;
    }
    let whom = match waits.waits.as_slice() {
        [one] => one.wchan.clone(),
        several => several
            .iter()
            .map(|w| format!("{} ({:.0})", w.wchan, w.threads))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let busiest = cost.threads.first().map_or(0.0, |t| t.cpu_pct);
    Some(Bottleneck {
        cause: format!(
            "{:.0} of {:.0} working server threads asleep in {whom} most of the time (busiest thread at {busiest:.0}% of a core, waiting for a CPU {:.0}% of the time): the server waits on a lock, a sleep or I/O, not on the CPU",
            waits.asleep_threads, waits.working_threads, cost.run_queue_wait_pct_of_wall
        ),
        evidence: vec![
            evidence("server threads asleep (state S/D, wchan)", waits.asleep_threads),
            evidence("working server threads", waits.working_threads),
            evidence(BUSIEST, busiest),
            evidence(
                "schedstat run-queue wait pct of wall",
                cost.run_queue_wait_pct_of_wall,
            ),
        ],
    })
}

/// The client as the bottleneck: its busiest load thread saturated, on
/// average over the runs (each run's monitor keeps its highest second).
pub fn client_bottleneck(runs: &[RunResult]) -> Option<Bottleneck> {
    let busiest: Vec<f64> = runs
        .iter()
        .filter_map(|r| {
            r.monitor
                .as_ref()?
                .client()
                .map(|c| c.busiest_thread_pct_max)
        })
        .collect();
    if busiest.is_empty() {
        return None;
    }
    let mean = busiest.iter().sum::<f64>() / busiest.len() as f64;
    (mean >= SATURATED_PCT).then(|| Bottleneck {
        cause: format!(
            "the client was the bottleneck, its busiest thread at {mean:.0}% of a core: add client threads (-t) or machines"
        ),
        evidence: vec![evidence("client busiest thread cpu_pct", mean)],
    })
}

fn evidence(counter: &str, value: f64) -> Evidence {
    Evidence {
        counter: counter.to_string(),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::cost::ThreadShare;

    fn cost(threads: &[(f64, f64)], overflows: f64) -> ServerCost {
        ServerCost {
            listen_overflows: overflows,
            listen_drops: overflows,
            threads: threads
                .iter()
                .map(|(cpu_pct, share_pct)| ThreadShare {
                    name: "w".into(),
                    cpu_pct: *cpu_pct,
                    share_pct: *share_pct,
                })
                .collect(),
            ..ServerCost::default()
        }
    }

    #[test]
    fn a_lone_thread_that_always_had_work_is_saturated_on_half_a_core() {
        // Half a core on a busy host, and waiting for the other half.
        let mut c = cost(&[(52.0, 99.0), (0.1, 1.0)], 0.0);
        c.run_queue_wait_pct_of_wall = 45.0;
        let b = bottlenecks(&c);
        assert_eq!(
            b[0].cause,
            "one thread does all the work, runnable 97% of the time (on a CPU 52%, waiting for one 45%): it is saturated (more threads, or spread the load)"
        );
        assert_eq!(b[0].evidence[0].value, 52.0);
        assert_eq!(b[0].evidence[1].value, 45.0);
        // Idle a third of the time: it had spare time, not saturated.
        c.run_queue_wait_pct_of_wall = 15.0;
        assert!(bottlenecks(&c).is_empty());
        // Two working threads: the wait is theirs together, no one's alone.
        let mut two = cost(&[(52.0, 60.0), (35.0, 40.0)], 0.0);
        two.run_queue_wait_pct_of_wall = 45.0;
        assert!(bottlenecks(&two).is_empty());
    }

    #[test]
    fn a_count_under_one_a_round_is_no_cause() {
        // One overflow in one of two rounds: a mean of 0.5, noise.
        let idle = [(10.0, 100.0), (0.0, 0.0)];
        assert!(bottlenecks(&cost(&idle, 0.5)).is_empty());
        let one = bottlenecks(&cost(&idle, 1.0));
        assert!(
            one[0].cause.contains("overflowed once:"),
            "{}",
            one[0].cause
        );
        let mut syn = cost(&idle, 0.0);
        syn.syn_retransmits = 0.5;
        syn.tcp_retransmits = 1.4;
        assert!(bottlenecks(&syn).is_empty(), "{:?}", bottlenecks(&syn));
    }

    #[test]
    fn names_each_cause_with_its_figure() {
        let b = bottlenecks(&cost(&[(40.0, 100.0), (0.0, 0.0)], 12345.0));
        assert_eq!(b.len(), 1);
        assert!(
            b[0].cause.contains("overflowed 12345 times"),
            "{}",
            b[0].cause
        );
        assert_eq!(b[0].evidence[0].value, 12345.0);
        let b = bottlenecks(&cost(&[(99.0, 100.0), (0.1, 0.0)], 0.0));
        assert!(
            b[0].cause
                .starts_with("one thread does all the work, at 99%"),
            "{}",
            b[0].cause
        );
        let b = bottlenecks(&cost(
            &[(100.0, 62.5), (20.0, 12.5), (20.0, 12.5), (20.0, 12.5)],
            0.0,
        ));
        assert_eq!(
            b[0].cause,
            "one of 4 working threads at 100% of a core, the other 3 at 20%: the load is not spread"
        );
        let b = bottlenecks(&cost(&[(95.0, 50.0), (94.0, 50.0)], 0.0));
        assert!(
            b[0].cause.starts_with("2 of 2 working threads"),
            "{}",
            b[0].cause
        );
        assert!(bottlenecks(&cost(&[(50.0, 60.0), (30.0, 40.0)], 0.0)).is_empty());
    }

    #[test]
    fn names_the_kernel_counters_each_with_its_figure() {
        let quiet = cost(&[(50.0, 100.0)], 0.0);
        let with = |f: fn(&mut ServerCost)| {
            let mut c = quiet.clone();
            f(&mut c);
            bottlenecks(&c)
        };
        let b = with(|c| {
            c.softirq_cpu = Some(1);
            c.softirq_cpu_pct = 35.0;
        });
        assert_eq!(b.len(), 1);
        assert!(
            b[0].cause
                .starts_with("CPU 1 spent 35% of its time in softirq"),
            "{}",
            b[0].cause
        );
        assert_eq!(b[0].evidence[0].counter, "/proc/stat cpu1 softirq pct");
        assert_eq!(b[0].evidence[0].value, 35.0);
        // Below the threshold: no cause.
        assert!(with(|c| {
            c.softirq_cpu = Some(1);
            c.softirq_cpu_pct = 19.0;
        })
        .is_empty());
        let b = with(|c| c.run_queue_wait_pct = 42.0);
        assert!(
            b[0].cause
                .starts_with("the server's threads waited for a CPU 42% of the time"),
            "{}",
            b[0].cause
        );
        assert_eq!(b[0].evidence[0].value, 42.0);
        assert!(with(|c| c.run_queue_wait_pct = 10.0).is_empty());
        let b = with(|c| {
            c.syn_retransmits = 7.0;
            c.tcp_retransmits = 7.0;
        });
        // The SYNs are all the retransmits: one cause, not two.
        assert_eq!(b.len(), 1);
        assert!(
            b[0].cause.starts_with("7 SYNs retransmitted"),
            "{}",
            b[0].cause
        );
        assert_eq!(b[0].evidence[0].counter, "TcpExt.TCPSynRetrans");
        // A mean of 0.4 over rounds is no event as printed.
        assert!(with(|c| c.tcp_retransmits = 0.4).is_empty());
        assert!(with(|c| c.listen_overflows = 0.4).is_empty());
        let b = with(|c| c.tcp_retransmits = 12.0);
        assert!(
            b[0].cause.starts_with("12 TCP segments retransmitted"),
            "{}",
            b[0].cause
        );
        assert_eq!(
            (b[0].evidence[0].counter.as_str(), b[0].evidence[0].value),
            ("Tcp.RetransSegs", 12.0)
        );
    }

    #[test]
    fn names_the_client_sockets_retransmits_with_their_rtt() {
        let with = |retransmits: f64| {
            let mut c = cost(&[(50.0, 100.0)], 0.0);
            c.client_tcp = Some(stampede_metrics::ClientTcp {
                sockets: 4.0,
                rtt_us_p99: 41_500.0,
                retransmits,
                ..Default::default()
            });
            bottlenecks(&c)
        };
        let b = with(17.0);
        assert_eq!(
            b[0].cause,
            "the client's sockets retransmitted 17 segments; RTT p99 41.5 ms: the network or the server's receive path drops packets"
        );
        assert_eq!(b[0].evidence[0].value, 17.0);
        assert_eq!(b[0].evidence[1].value, 41_500.0);
        assert!(with(0.4).is_empty());
    }

    #[test]
    fn names_threads_asleep_in_a_call_when_no_cpu_cause_shows() {
        use stampede_metrics::{ThreadWait, ThreadWaits};
        let waits = |asleep: f64, working: f64, names: &[(&str, f64)]| ThreadWaits {
            samples: 10.0,
            working_threads: working,
            asleep_threads: asleep,
            waits: names
                .iter()
                .map(|(wchan, threads)| ThreadWait {
                    wchan: wchan.to_string(),
                    threads: *threads,
                })
                .collect(),
        };
        let mut c = cost(&[(4.0, 60.0), (3.0, 40.0)], 0.0);
        // Woken for each request on a busy host: a long run-queue wait
        // (its own cause), the sleepers named first all the same.
        c.run_queue_wait_pct = 42.0;
        c.run_queue_wait_pct_of_wall = 45.0;
        c.thread_waits = Some(waits(2.0, 2.0, &[("hrtimer_nanosleep", 2.0)]));
        let b = bottlenecks(&c);
        assert_eq!(
            b[0].cause,
            "2 of 2 working server threads asleep in hrtimer_nanosleep most of the time (busiest thread at 4% of a core, waiting for a CPU 45% of the time): the server waits on a lock, a sleep or I/O, not on the CPU"
        );
        assert!(b[1]
            .cause
            .starts_with("the server's threads waited for a CPU 42%"));
        assert_eq!(b[0].evidence[0].value, 2.0);
        assert_eq!(b[0].evidence[1].value, 2.0);
        // The same share of a short runnable time, a small share of the
        // wall: the host's wake-up latency, not named.
        c.run_queue_wait_pct_of_wall = 3.0;
        let b = bottlenecks(&c);
        assert_eq!(b.len(), 1, "{b:?}");
        assert!(b[0].cause.starts_with("2 of 2 working server threads"));
        c.thread_waits = Some(waits(
            3.0,
            4.0,
            &[("futex_wait_queue", 2.0), ("do_sys_poll", 1.0)],
        ));
        assert!(
            bottlenecks(&c)[0]
                .cause
                .starts_with("3 of 4 working server threads asleep in futex_wait_queue (2), do_sys_poll (1) most"),
            "{:?}",
            bottlenecks(&c)
        );
        // One of four asleep: the others are not waiting.
        c.run_queue_wait_pct = 2.0;
        c.thread_waits = Some(waits(1.0, 4.0, &[("futex_wait_queue", 1.0)]));
        assert!(bottlenecks(&c).is_empty());
        // A saturated thread is the cause, not the sleepers.
        let mut hot = cost(&[(99.0, 90.0), (3.0, 10.0)], 0.0);
        hot.thread_waits = Some(waits(1.0, 2.0, &[("futex_wait_queue", 1.0)]));
        let b = bottlenecks(&hot);
        assert_eq!(b.len(), 1, "{b:?}");
        assert!(b[0].cause.starts_with("one of 2 working threads"), "{b:?}");
    }

    fn waiting(asleep_threads: f64, working_threads: f64) -> stampede_metrics::ThreadWaits {
        stampede_metrics::ThreadWaits {
            samples: 10.0,
            working_threads,
            asleep_threads,
            waits: vec![stampede_metrics::ThreadWait {
                wchan: "futex_wait_queue".into(),
                threads: asleep_threads,
            }],
        }
    }

    #[test]
    fn a_run_queue_wait_of_a_fifth_of_the_wall_beside_sleepers_is_named() {
        // Sleepers, and a wait of exactly 20% of the wall time: at the
        // threshold the wait is the CPUs', not the host's wake-up latency.
        let mut c = cost(&[(4.0, 60.0), (3.0, 40.0)], 0.0);
        c.run_queue_wait_pct = 42.0;
        c.run_queue_wait_pct_of_wall = 20.0;
        c.thread_waits = Some(waiting(2.0, 2.0));
        let b = bottlenecks(&c);
        assert_eq!(b.len(), 2, "{b:?}");
        assert!(b[1]
            .cause
            .starts_with("the server's threads waited for a CPU 42%"));
    }

    #[test]
    fn half_the_working_threads_asleep_is_a_cause_and_fewer_is_not() {
        let with = |asleep_threads: f64, working_threads: f64| {
            let mut c = cost(&[], 0.0);
            c.thread_waits = Some(waiting(asleep_threads, working_threads));
            asleep(&c)
        };
        // Half a thread asleep (one in two rounds) of one working: half.
        assert!(with(0.5, 1.0).is_some());
        // One of three: 1 * 2 < 3, fewer than half.
        assert!(with(1.0, 3.0).is_none());
        // None asleep, none working: 0 < 0.5, no cause.
        assert!(with(0.0, 0.0).is_none());
    }
}
