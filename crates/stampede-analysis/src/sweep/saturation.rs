//! Whether the server under test was saturated at a step, and the step's
//! Little's-law check (L = X·R) with the advice it may give.
//!
//! The two belong together because of the advice: an open-model step whose
//! rate × latency exceeds its connections is short of connections only when
//! the server has room to spare. A saturated server — its CPU pinned (seen
//! when `--pid`/`--spawn` monitoring is on), or its own response time rising
//! while throughput gains nothing — would only queue the extra requests, so
//! "add connections" is then wrong advice. Owns the evidence and
//! the note; the classes and thresholds live in `sweep`.

use super::{count_noun, pct_change, Load, StepInput, Thresholds};
use serde::{Deserialize, Serialize};
use stampede_metrics::MonitorReport;

/// The monitored server's CPU during a step (`--pid`, `--spawn`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServerCpu {
    /// Mean CPU of the server processes, percent of one core (200 = two busy).
    pub used_pct: f64,
    /// What the server could use: the machine's cores less what the load
    /// generator used, percent of one core (at least one core).
    pub available_pct: f64,
    /// The busiest server thread's mean CPU, percent of one core: a single
    /// event loop at 100% is pinned however many cores the machine has.
    pub busiest_thread_pct: f64,
    /// The whole machine's busy share, percent. Shown, not taken as
    /// evidence: on a shared machine it is high whether or not the server
    /// needs the CPU (a server at 2% of a core is not saturated).
    pub machine_busy_pct: Option<f64>,
}

impl ServerCpu {
    /// The servers' figures of a run's monitor report; `None` when no server
    /// process was monitored.
    pub(crate) fn from_monitor(monitor: &MonitorReport) -> Option<ServerCpu> {
        let servers: Vec<_> = monitor.servers().collect();
        if servers.is_empty() {
            return None;
        }
        let used_pct = servers.iter().map(|s| s.cpu_pct_mean).sum();
        let client_pct = monitor.client().map_or(0.0, |c| c.cpu_pct_mean);
        let available_pct = (monitor.cpus as f64 * 100.0 - client_pct).max(100.0);
        let busiest_thread_pct = servers
            .iter()
            .filter(|s| !s.samples.is_empty())
            .map(|s| {
                s.samples.iter().map(|p| p.busiest_thread_pct).sum::<f64>() / s.samples.len() as f64
            })
            .fold(0.0, f64::max);
        let machine = &monitor.machine;
        let machine_busy_pct = (!machine.is_empty())
            .then(|| machine.iter().map(|m| m.cpu_pct).sum::<f64>() / machine.len() as f64);
        Some(ServerCpu {
            used_pct,
            available_pct,
            busiest_thread_pct,
            machine_busy_pct,
        })
    }

    /// "CPU 196% of the 200% it could use" when pinned, else `None`.
    fn pinned(&self, t: &Thresholds) -> Option<String> {
        let share = 100.0 * self.used_pct / self.available_pct;
        if share >= t.server_cpu_pinned_pct {
            Some(format!(
                "its CPU was pinned ({:.0}% of the {:.0}% it could use)",
                self.used_pct, self.available_pct
            ))
        } else if self.busiest_thread_pct >= t.server_cpu_pinned_pct {
            Some(format!(
                "its busiest thread was pinned ({:.0}% of a core)",
                self.busiest_thread_pct
            ))
        } else {
            None
        }
    }
}

/// The server's own time per request: the service time (from the actual
/// send) where known, else the latency (the same in a closed model).
fn server_ms(step: &StepInput) -> f64 {
    step.service_mean_ms.unwrap_or(step.mean_ms)
}

/// Why the server was saturated at `step`, or `None` without evidence.
/// `prev` is the step before, `first` the sweep's reference step.
pub(crate) fn server_saturation(
    step: &StepInput,
    prev: Option<&StepInput>,
    first: &StepInput,
    t: &Thresholds,
) -> Option<String> {
    if let Some(pinned) = step.server_cpu.and_then(|cpu| cpu.pinned(t)) {
        return Some(format!("the server is saturated: {pinned}"));
    }
    let what = if step.service_mean_ms.is_some() {
        "the server's response time"
    } else {
        "mean latency"
    };
    let ms = server_ms(step);
    let prev = prev?;
    if let Some(gain) = pct_change(step.goodput, prev.goodput).filter(|g| *g < t.flat_pct) {
        if let Some(rise) = pct_change(ms, server_ms(prev)).filter(|r| *r > t.latency_rise_pct) {
            return Some(format!(
                "the server is saturated: {what} {rise:+.1}% for throughput {gain:+.1}%"
            ));
        }
    }
    // A server that takes twice as long per request as at the first step is
    // queueing inside (or starved of CPU), whatever throughput did; and two
    // steps that both keep every connection busy at a saturated server show
    // the same response time (C / X), so the first step is the reference.
    let base = server_ms(first);
    (base > 0.0 && ms > 2.0 * base).then(|| {
        format!(
            "the server is saturated: {what} {:.1}× the first step's ({:.1} ms → {ms:.1} ms)",
            ms / base,
            base
        )
    })
}

/// `1 request`, `12 requests`: a mean count, rounded.
fn requests(n: f64) -> String {
    count_noun(n.round() as u64, "request")
}

/// Little's law, L = X·R: the mean number of requests in the system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LittleCheck {
    /// X·R: completed per second × mean latency in seconds.
    pub in_flight: f64,
    /// What L should match: the connections of a closed model; the
    /// connections available to an open model (L must not exceed them).
    pub concurrency: Option<f64>,
    /// in_flight / concurrency × 100.
    pub ratio_pct: Option<f64>,
    /// True when the figures agree with Little's law.
    pub consistent: bool,
    /// Why it is not consistent, when it is not.
    pub note: Option<String>,
}

/// Little's law (L = X·R): a closed model's connections should all be busy,
/// so X·R ≈ N; an open model needs at least X·R connections — which helps
/// only when the server is not `saturated`.
pub(crate) fn little_check(
    step: &StepInput,
    saturated: Option<&str>,
    t: &Thresholds,
) -> LittleCheck {
    let in_flight = step.rps * step.mean_ms / 1000.0;
    let concurrency = match step.load {
        Load::Connections(n) => Some(n as f64),
        Load::Rate(_) => step.connections.map(|c| c as f64),
    };
    let ratio_pct = concurrency
        .filter(|c| *c > 0.0)
        .map(|c| 100.0 * in_flight / c);
    let tol = t.little_tolerance_pct;
    let note = match (step.load, ratio_pct, concurrency) {
        (_, _, _) if step.rps <= 0.0 => None,
        (Load::Connections(n), Some(r), _) if r < 100.0 - tol => Some(format!(
            "Little's law: X·R = {} in flight for {} ({r:.0}%): connections sat idle (ramp-up, connect failures, or a client bottleneck)",
            requests(in_flight),
            count_noun(n, "connection")
        )),
        (Load::Connections(n), Some(r), _) if r > 100.0 + tol => Some(format!(
            "Little's law: X·R = {} in flight for only {} ({r:.0}%): latency includes waiting outside the connections",
            requests(in_flight),
            count_noun(n, "connection")
        )),
        (Load::Rate(_), Some(r), Some(c)) if r > 100.0 => {
            let available = c.round() as u64;
            let lead = format!(
                "Little's law: rate × latency needs {} in flight but only {available} {} available",
                count_noun(in_flight.round() as u64, "connection"),
                if available == 1 { "was" } else { "were" }
            );
            Some(match saturated {
                Some(why) => format!("{lead}; {why}, so more connections would only queue"),
                None => format!("{lead}: add connections (--max-connections)"),
            })
        }
        _ => None,
    };
    LittleCheck {
        in_flight,
        concurrency,
        ratio_pct,
        consistent: note.is_none(),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_metrics::{ProcessSample, ProcessSummary};

    fn open_step(rate: f64, goodput: f64, mean_ms: f64, service_ms: Option<f64>) -> StepInput {
        StepInput {
            load: Load::Rate(rate),
            goodput,
            rps: goodput,
            error_rate_pct: 0.0,
            mean_ms,
            service_mean_ms: service_ms,
            p50_ms: None,
            p90_ms: None,
            p99_ms: None,
            p99_9_ms: None,
            max_ms: None,
            requests: (goodput * 10.0) as u64,
            timeouts: 0,
            connections: Some(100),
            server_cpu: None,
        }
    }

    fn process(role: &str, cpu: f64, busiest: f64) -> ProcessSummary {
        ProcessSummary {
            role: role.into(),
            cpu_pct_mean: cpu,
            samples: vec![ProcessSample {
                busiest_thread_pct: busiest,
                ..ProcessSample::default()
            }],
            ..ProcessSummary::default()
        }
    }

    fn monitor(cpus: usize, processes: Vec<ProcessSummary>) -> MonitorReport {
        MonitorReport {
            interval_s: 1.0,
            cpus,
            processes,
            machine: Vec::new(),
        }
    }

    #[test]
    fn cpu_is_pinned_at_what_the_client_left_or_at_one_hot_thread() {
        let t = Thresholds::default();
        // 2 cores, the client used one: the server's 95% is all it could get.
        let m = monitor(
            2,
            vec![process("server", 95.0, 48.0), process("client", 100.0, 0.0)],
        );
        let cpu = ServerCpu::from_monitor(&m).unwrap();
        assert_eq!(cpu.available_pct, 100.0);
        assert!(cpu
            .pinned(&t)
            .unwrap()
            .contains("CPU was pinned (95% of the 100%"));
        // 8 cores, a single event loop at 99%.
        let m = monitor(
            8,
            vec![
                process("server", 110.0, 99.0),
                process("client", 100.0, 0.0),
            ],
        );
        let cpu = ServerCpu::from_monitor(&m).unwrap();
        assert!(cpu.pinned(&t).unwrap().contains("busiest thread"));
        // 8 cores, the server at 150%: room to spare.
        let mut m = monitor(8, vec![process("server", 150.0, 40.0)]);
        assert_eq!(ServerCpu::from_monitor(&m).unwrap().pinned(&t), None);
        // A busy machine alone is no evidence: the server may be idle on it.
        m.machine = vec![stampede_metrics::MachineSample {
            t_s: 1.0,
            load_1m: 9.0,
            cpu_pct: 97.0,
        }];
        let cpu = ServerCpu::from_monitor(&m).unwrap();
        assert_eq!((cpu.machine_busy_pct, cpu.pinned(&t)), (Some(97.0), None));
        assert_eq!(ServerCpu::from_monitor(&monitor(8, vec![])), None);
    }

    #[test]
    fn connections_short_at_a_server_with_room_get_the_advice() {
        let t = Thresholds::default();
        let first = open_step(1000.0, 1000.0, 2.0, Some(2.0));
        // The rate doubled, throughput stuck at 100 connections / 50 ms, but
        // the server answers as fast as before: the wait is in the client.
        let step = open_step(4000.0, 2000.0, 400.0, Some(2.1));
        let prev = open_step(2000.0, 1990.0, 50.0, Some(2.0));
        assert_eq!(server_saturation(&step, Some(&prev), &first, &t), None);
        let little = little_check(&step, None, &t);
        assert!(little
            .note
            .unwrap()
            .ends_with("add connections (--max-connections)"));
    }

    #[test]
    fn a_saturated_server_gets_no_advice_to_add_connections() {
        let t = Thresholds::default();
        let first = open_step(1000.0, 1000.0, 2.0, Some(2.0));
        let prev = open_step(2000.0, 1990.0, 50.0, Some(50.0));
        // Latency rises with no throughput gain: the server's own time too.
        let rising = open_step(4000.0, 2000.0, 400.0, Some(400.0));
        let why = server_saturation(&rising, Some(&prev), &first, &t).unwrap();
        assert!(
            why.contains("response time +700.0% for throughput +0.5%"),
            "{why}"
        );
        let note = little_check(&rising, Some(&why), &t).note.unwrap();
        assert!(!note.contains("add connections"), "{note}");
        assert!(note.ends_with("so more connections would only queue"));
        // Every connection busy in both steps: the same C / X response time,
        // far above the reference step's.
        let same = open_step(4000.0, 2000.0, 400.0, Some(50.0));
        let why = server_saturation(&same, Some(&prev), &first, &t).unwrap();
        assert!(
            why.contains("25.0× the first step's (2.0 ms → 50.0 ms)"),
            "{why}"
        );
        // A pinned CPU says so even while throughput still rose.
        let mut pinned = open_step(2000.0, 1900.0, 3.0, Some(3.0));
        pinned.server_cpu = Some(ServerCpu {
            used_pct: 98.0,
            available_pct: 100.0,
            busiest_thread_pct: 98.0,
            machine_busy_pct: None,
        });
        let why = server_saturation(&pinned, Some(&first), &first, &t).unwrap();
        assert!(why.contains("CPU was pinned"), "{why}");
        assert_eq!(server_saturation(&first, None, &first, &t), None);
    }

    fn closed_step(n: u64, rps: f64, mean_ms: f64) -> StepInput {
        StepInput {
            load: Load::Connections(n),
            connections: Some(n),
            ..open_step(rps, rps, mean_ms, None)
        }
    }

    #[test]
    fn saturation_at_each_threshold_exactly() {
        let t = Thresholds::default();
        let first = open_step(1000.0, 1000.0, 10.0, None);
        let prev = open_step(1000.0, 1000.0, 10.0, None);
        // Throughput +6% is not flat; latency +9% is not a rise. (Exactly
        // +5% or +10% cannot be hit: 1.05 − 1 and 1.1 − 1 are not exact.)
        let gained = open_step(1000.0, 1060.0, 15.0, None);
        assert_eq!(server_saturation(&gained, Some(&prev), &first, &t), None);
        let level = open_step(1000.0, 1000.0, 10.9, None);
        assert_eq!(server_saturation(&level, Some(&prev), &first, &t), None);
        let rising = open_step(1000.0, 1000.0, 11.2, None);
        let why = server_saturation(&rising, Some(&prev), &first, &t).unwrap();
        assert!(
            why.contains("mean latency +12.0% for throughput +0.0%"),
            "{why}"
        );
        // Exactly twice the first step's time is not yet "twice as long".
        let gain = open_step(1000.0, 2000.0, 20.0, None);
        assert_eq!(server_saturation(&gain, Some(&prev), &first, &t), None);
        let more = open_step(1000.0, 2000.0, 20.5, None);
        assert!(server_saturation(&more, Some(&prev), &first, &t).is_some());
        // No reference time, no comparison with it.
        let zero = open_step(1000.0, 1000.0, 0.0, None);
        assert_eq!(server_saturation(&gain, Some(&prev), &zero, &t), None);
    }

    #[test]
    fn littles_law_at_its_tolerance_exactly() {
        let t = Thresholds::default();
        // 100 connections; X·R = 1000/s × 75 ms = 75: the 25% tolerance's edge.
        assert!(little_check(&closed_step(100, 1000.0, 75.0), None, &t).consistent);
        assert!(little_check(&closed_step(100, 1000.0, 125.0), None, &t).consistent);
        let idle = little_check(&closed_step(100, 1000.0, 50.0), None, &t);
        assert_eq!(
            idle.note.as_deref(),
            Some("Little's law: X·R = 50 requests in flight for 100 connections (50%): connections sat idle (ramp-up, connect failures, or a client bottleneck)")
        );
        let waiting = little_check(&closed_step(100, 1000.0, 150.0), None, &t);
        assert!(waiting
            .note
            .unwrap()
            .contains("X·R = 150 requests in flight for only 100 connections"));
        // Nothing completed: no law to check.
        assert!(little_check(&closed_step(100, 0.0, 150.0), None, &t).consistent);
        // Open model: needing exactly the connections there were is enough.
        let exactly = open_step(1000.0, 1000.0, 100.0, None);
        assert!(little_check(&exactly, None, &t).consistent);
        // No connections known: no ratio.
        let mut unknown = open_step(1000.0, 1000.0, 100.0, None);
        unknown.connections = Some(0);
        assert_eq!(little_check(&unknown, None, &t).ratio_pct, None);
    }

    #[test]
    fn the_busiest_thread_and_the_machine_are_means_over_the_samples() {
        let mut server = process("server", 50.0, 0.0);
        server.samples = [20.0, 60.0]
            .map(|busiest| ProcessSample {
                busiest_thread_pct: busiest,
                ..ProcessSample::default()
            })
            .to_vec();
        let mut m = monitor(4, vec![server]);
        m.machine = [30.0, 50.0]
            .map(|cpu_pct| stampede_metrics::MachineSample {
                t_s: 1.0,
                load_1m: 1.0,
                cpu_pct,
            })
            .to_vec();
        let cpu = ServerCpu::from_monitor(&m).unwrap();
        assert_eq!(cpu.busiest_thread_pct, 40.0);
        assert_eq!(cpu.machine_busy_pct, Some(40.0));
    }
}
