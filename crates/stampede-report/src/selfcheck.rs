//! The run's self-check: warnings, printed with the summary and stored in the
//! result, for when the run itself is suspect rather than the server. It only
//! reads the plan and the result.

use stampede_metrics::RunResult;
use stampede_plan::{LoadModel, Plan};

/// The client using more than this share of its CPUs means it, not the
/// server, may have been the bottleneck. The client's CPU is its own
/// load-generating threads' (the monitor's `client`), never a target that
/// shares the process.
const CLIENT_CPU_LIMIT_PCT: f64 = 90.0;
/// An open model achieving less than this share of its target fell behind.
const RATE_ACHIEVED_MIN_PCT: f64 = 95.0;
/// Late sends above this share of all sends mean the schedule was not kept.
const LATE_SENDS_MAX_PCT: f64 = 1.0;
/// Warn when more than this share of the open-file limit was planned.
const FD_HEADROOM_PCT: f64 = 80.0;
/// A machine busier than this, on average, while a client with a thread on
/// every CPU loaded a server on the same machine: the two competed for CPU.
const SHARED_MACHINE_BUSY_PCT: f64 = 90.0;

/// Every warning that applies to this run.
pub fn warnings(plan: &Plan, result: &RunResult) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(client) = result.monitor.as_ref().and_then(|m| m.client()) {
        let cores = plan.threads.min(result.environment.cpus.max(1));
        let used = client.cpu_pct_mean / cores as f64;
        if used > CLIENT_CPU_LIMIT_PCT {
            let cores = crate::counted(cores as u64, "core");
            warnings.push(format!(
                "the load generator used {used:.0}% of its {cores}: it, not the server, may have been the bottleneck; add cores or threads, or run agents on more machines"
            ));
        }
    }
    if let LoadModel::Rate { per_s, arrival, .. } = &plan.model {
        let sent = result.requests.sent.max(1) as f64;
        // Against what the schedule intended in the window (ramps and stages
        // too, not only a constant rate).
        let intended = stampede_metrics::intended_requests(plan, result.elapsed_s);
        // The plan's rate is the first group's alone when a scenario has
        // several, and a run that stopped early (its groups done, a
        // stop_run, a feeder out of rows) was not meant to send it all.
        let several_groups = result.groups.iter().filter(|g| !g.is_transaction()).count() > 1;
        let comparable = !several_groups && result.stop_reason.is_none();
        let intended = intended.filter(|_| comparable);
        if let Some(intended) = intended.filter(|n| *n >= 1.0 && result.elapsed_s > 0.5) {
            let achieved = 100.0 * result.requests.sent as f64 / intended;
            // Poisson arrivals in a window are a random count (standard
            // deviation √n): 186 of 200 is a draw, not a shortfall. Only a
            // count more than 3 deviations short says the schedule slipped.
            let drawn_short = match arrival {
                stampede_plan::Arrival::Poisson => {
                    (result.requests.sent as f64) < intended - 3.0 * intended.sqrt()
                }
                stampede_plan::Arrival::Uniform => true,
                // A replay's rate is only its offsets' average: it sends
                // each listed request, and its lateness is in `schedule`.
                stampede_plan::Arrival::Listed(_) => false,
            };
            if achieved < RATE_ACHIEVED_MIN_PCT && drawn_short && !result.interrupted {
                warnings.push(format!(
                    "the open model fell behind: {achieved:.1}% of the {} requests the schedule intended were sent",
                    crate::format_count(intended as u64)
                ));
            }
        }
        // Requests in flight at once: a connection each over HTTP/1.1, its
        // streams each over HTTP/2 and HTTP/3.
        let streams = if plan.transport.http2 || plan.transport.http3 {
            plan.transport.streams.max(1)
        } else {
            1
        };
        let slots = plan.connections() * streams;
        let (slot, given) = if streams > 1 {
            (
                "stream",
                format!("-c × --streams is {} × {streams}", plan.connections()),
            )
        } else {
            ("connection", format!("-c is {}", plan.connections()))
        };
        if let Some(schedule) = &result.schedule {
            let late_pct = 100.0 * schedule.late_sends as f64 / sent;
            if late_pct > LATE_SENDS_MAX_PCT {
                warnings.push(format!(
                    "{late_pct:.1}% of requests were sent late (p99 lag {:.1} ms): no {slot} of at most {slots} was free at the intended instant (busy, or still connecting), or the client itself was slow; latency includes that wait, service time does not",
                    schedule.lag_p99_us as f64 / 1000.0,
                ));
            }
        }
        // Little's law: requests in flight = rate × time each one holds its slot.
        let needed = per_s.peak() * result.service_time_us.mean / 1e6;
        if needed > slots as f64 {
            warnings.push(format!(
                "too few connections for the rate: {:.0} req/s × {:.1} ms service time needs ≈ {needed:.0} {slot}s (Little's law), {given}",
                per_s.peak(),
                result.service_time_us.mean / 1000.0,
            ));
        }
    }
    warnings.extend(shared_cpus(plan, result));
    warnings.extend(streams_held_back(plan, result));
    warnings.extend(streams_open_at_the_end(plan, result));
    let limit = result.environment.rlimit_nofile.max(1) as f64;
    let planned = plan.connections() as f64;
    if 100.0 * planned / limit > FD_HEADROOM_PCT {
        warnings.push(format!(
            "{planned} connections use most of the open-file limit ({limit}): raise it (ulimit -n) before adding more"
        ));
    }
    if let Some(n) = result.errors.get("address_unavailable") {
        warnings.push(format!(
            "{n} connections failed with EADDRNOTAVAIL: no local address/port was free (TIME_WAIT from short connections, or a --source-addrs address that is not on this machine); spread connections with --source-addrs 127.0.0.2-127.0.0.9, use keep-alive, or set net.ipv4.tcp_tw_reuse=1"
        ));
    }
    if !plan.keepalive {
        if let Some(range) = port_range_size(&result.environment.ip_local_port_range) {
            // Closed sockets wait ~60 s in TIME_WAIT before their port is free again.
            let per_minute = result.rps * 60.0;
            if per_minute > 0.8 * range as f64 {
                warnings.push(format!(
                    "new connections at {:.0}/s will exhaust the {range} local ports within a minute (TIME_WAIT): spread over source addresses or enable net.ipv4.tcp_tw_reuse",
                    result.rps
                ));
            }
        }
    }
    warnings
}

/// A client with a thread on every CPU and a server on the same machine take
/// turns on the CPUs. The server's turns come late, and its wait shows as
/// latency, worst in the tail: `ab -c 500` against a one-worker nginx showed a
/// 0.9-2.3 s max with two client threads on two CPUs, 28 ms with one.
fn shared_cpus(plan: &Plan, result: &RunResult) -> Option<String> {
    let monitor = result.monitor.as_ref()?;
    let cpus = monitor.cpus.max(1);
    let local = is_local(&plan.target.host) || monitor.servers().next().is_some();
    if !local || plan.threads < cpus || monitor.machine.is_empty() {
        return None;
    }
    let busy =
        monitor.machine.iter().map(|s| s.cpu_pct).sum::<f64>() / monitor.machine.len() as f64;
    if busy < SHARED_MACHINE_BUSY_PCT {
        return None;
    }
    let client = monitor.client().map_or(0.0, |c| c.cpu_pct_mean / 100.0);
    let threads = crate::counted(plan.threads as u64, "thread");
    let cpu_count = crate::counted(cpus as u64, "CPU");
    Some(format!(
        "the client's {threads} and the server shared this machine's {cpu_count}, {busy:.0}% busy (the client used {client:.1} of them): a server waiting for a CPU shows as latency, most in the tail; give the client fewer threads (-t {}) or pin the two apart (taskset)",
        (cpus - 1).max(1)
    ))
}

/// `--streams` above what an HTTP/2 server allows a connection, in the
/// closed model: the requests beyond its limit wait in the client for a
/// stream, and their wait is in their latency, not the server's doing.
fn streams_held_back(plan: &Plan, result: &RunResult) -> Option<String> {
    // The open model sends past a connection's limit on another one.
    if !matches!(plan.model, LoadModel::Closed { .. }) {
        return None;
    }
    let allowed = result.http2?.server_max_streams;
    let asked = plan.transport.streams;
    (asked > allowed as usize).then(|| {
        format!(
            "the server allowed {} per connection and --streams asked {asked}: the rest of each connection's requests waited in the client for a stream, and that wait is in their latency; use --streams {} or more connections (-c)",
            crate::counted(u64::from(allowed), "concurrent stream"),
            allowed.max(1)
        )
    })
}

/// `--sse` streams still open when the run ended (`-d`, a signal): a
/// stream is booked at its end, so what they read is not in the result.
/// `--sse-for` ends each stream itself, as a success with its events.
fn streams_open_at_the_end(plan: &Plan, result: &RunResult) -> Option<String> {
    let stream = &plan.transport.stream;
    let open = result.requests.unfinished;
    (stream.watch && stream.for_at_most.is_none() && open > 0).then(|| {
        format!(
            "{} still open when the run ended: a stream is counted at its end, so their events and bytes are not in the result; end each stream with --sse-for DUR (shorter than the run) to count them",
            match open {
                1 => "1 stream was".to_string(),
                n => format!("{} streams were", crate::format_count(n)),
            }
        )
    })
}

/// A host on this machine: a loopback address or the name `localhost`.
fn is_local(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn port_range_size(range: &str) -> Option<u64> {
    let mut parts = range.split_whitespace().map(|p| p.parse::<u64>().ok());
    let (low, high) = (parts.next()??, parts.next()??);
    Some(high.saturating_sub(low) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_metrics::{MonitorReport, ProcessSummary};
    use stampede_plan::{Arrival, Schedule, StopCondition, Target};
    use std::time::Duration;

    /// A plan as `stampede run URL -c 8 -t THREADS` builds it.
    fn plan_to(url: &str, threads: usize) -> Plan {
        Plan {
            threads,
            model: LoadModel::Closed {
                connections: Schedule::constant(8.0, Duration::from_secs(10)),
            },
            stop: StopCondition::Duration(Duration::from_secs(10)),
            ..Plan::minimal(Target::parse(url).expect("a valid URL"))
        }
    }

    /// [`plan_to`] a local server.
    fn plan(threads: usize) -> Plan {
        plan_to("http://127.0.0.1:3000/", threads)
    }

    /// One thread, `per_s` requests a second on at most `connections`.
    fn rate_plan(per_s: f64, connections: usize, arrival: Arrival) -> Plan {
        Plan {
            model: LoadModel::Rate {
                per_s: Schedule::constant(per_s, Duration::from_secs(10)),
                max_connections: connections,
                arrival,
                pace_window: stampede_plan::DEFAULT_PACE_WINDOW,
                batch_reads: false,
            },
            ..plan(1)
        }
    }

    /// A finished closed-model run on `cpus` CPUs whose client used
    /// `client_pct` of one core on average.
    fn result(plan: &Plan, cpus: usize, client_pct: f64) -> RunResult {
        let recording = stampede_metrics::Recording::of(
            std::time::SystemTime::now(),
            std::time::Duration::from_secs(2),
            stampede_plan::EventLoop::Epoll,
            Default::default(),
        );
        let environment = stampede_metrics::Environment {
            cpus,
            rlimit_nofile: 1 << 20,
            ..Default::default()
        };
        let mut result = RunResult::from_recording(plan, &recording, environment, "test", vec![]);
        result.monitor = Some(MonitorReport {
            cpus,
            processes: vec![ProcessSummary {
                role: "client".into(),
                cpu_pct_mean: client_pct,
                ..ProcessSummary::default()
            }],
            ..MonitorReport::default()
        });
        result
    }

    #[test]
    fn streams_above_the_servers_limit_are_said_to_wait_in_the_client() {
        let mut plan = plan(1);
        plan.transport.http2 = true;
        plan.transport.streams = 8;
        let mut run = result(&plan, 2, 10.0);
        let held = |run: &RunResult| {
            warnings(&plan, run)
                .into_iter()
                .find(|w| w.contains("waited in the client for a stream"))
        };
        assert_eq!(held(&run), None, "no limit known: nothing to say");
        for (limit, said) in [(2, true), (7, true), (8, false), (100, false)] {
            run.http2 = Some(stampede_metrics::Http2Result {
                server_max_streams: limit,
            });
            let warning = held(&run);
            assert_eq!(warning.is_some(), said, "a limit of {limit}: {warning:?}");
            if let Some(warning) = warning {
                assert!(warning.starts_with(&format!(
                    "the server allowed {limit} concurrent streams per connection and --streams asked 8"
                )));
                assert!(warning.contains(&format!("use --streams {limit} or")));
            }
        }
    }

    #[test]
    fn streams_open_at_the_end_are_said_to_be_uncounted() {
        let mut plan = plan(1);
        plan.transport.stream.watch = true;
        let mut run = result(&plan, 2, 10.0);
        let said = |plan: &Plan, run: &RunResult| {
            warnings(plan, run)
                .into_iter()
                .find(|w| w.contains("still open when the run ended"))
        };
        assert_eq!(said(&plan, &run), None, "every stream ended");
        run.requests.unfinished = 2;
        let warning = said(&plan, &run).expect("a warning");
        assert!(
            warning.starts_with("2 streams were still open"),
            "{warning}"
        );
        assert!(warning.contains("--sse-for"), "{warning}");
        run.requests.unfinished = 1;
        let warning = said(&plan, &run).expect("a warning");
        assert!(warning.starts_with("1 stream was still open"), "{warning}");
        plan.transport.stream.for_at_most = Some(Duration::from_secs(1));
        assert_eq!(said(&plan, &run), None, "--sse-for ends streams itself");
        plan.transport.stream = Default::default();
        assert_eq!(said(&plan, &run), None, "no streams watched");
    }

    fn bottleneck(warnings: &[String]) -> Option<&String> {
        warnings.iter().find(|w| w.contains("load generator used"))
    }

    #[test]
    fn a_busy_client_is_reported_as_the_bottleneck() {
        // One worker pinned on its core: the client may well be the limit.
        let one = plan(1);
        let found = warnings(&one, &result(&one, 2, 97.0));
        let warning = bottleneck(&found).expect("a bottleneck warning");
        assert!(warning.contains("97% of its 1 core:"), "{warning}");
        // Two workers using 185% of their two cores.
        let two = plan(2);
        let found = warnings(&two, &result(&two, 4, 185.0));
        let warning = bottleneck(&found).expect("a bottleneck warning");
        assert!(warning.contains("92% of its 2 cores:"), "{warning}");
        // Cores are the fewer of threads and CPUs: 4 threads on 2 CPUs.
        let four = plan(4);
        let found = warnings(&four, &result(&four, 2, 190.0));
        assert!(bottleneck(&found).is_some(), "{found:?}");
    }

    #[test]
    fn an_idle_client_is_not() {
        // The demo's case once only the client's own threads count: one
        // worker at 45% while the in-process target used the rest.
        let one = plan(1);
        assert_eq!(bottleneck(&warnings(&one, &result(&one, 2, 45.0))), None);
        let two = plan(2);
        assert_eq!(bottleneck(&warnings(&two, &result(&two, 2, 170.0))), None);
    }

    /// `result` with the machine `busy_pct` busy in every sample.
    fn on_busy_machine(plan: &Plan, cpus: usize, busy_pct: f64) -> RunResult {
        let mut result = result(plan, cpus, 120.0);
        let monitor = result.monitor.as_mut().expect("a monitor");
        monitor.machine = (0..3)
            .map(|t| stampede_metrics::MachineSample {
                t_s: t as f64,
                load_1m: 2.0,
                cpu_pct: busy_pct,
            })
            .collect();
        result
    }

    fn shared(warnings: &[String]) -> Option<&String> {
        warnings.iter().find(|w| w.contains("shared this machine"))
    }

    #[test]
    fn a_client_on_every_cpu_beside_a_local_server_is_reported() {
        let two = plan(2);
        let found = warnings(&two, &on_busy_machine(&two, 2, 97.0));
        let warning = shared(&found).expect("a shared-CPU warning");
        assert!(warning.starts_with("the client's 2 threads and the server shared this machine's 2 CPUs, 97% busy (the client used 1.2 of them)"), "{warning}");
        assert!(warning.contains("(-t 1)"), "{warning}");
        // One CPU left to the server, a quiet machine: nothing to say.
        let one = plan(1);
        assert_eq!(
            shared(&warnings(&one, &on_busy_machine(&one, 2, 97.0))),
            None
        );
        assert_eq!(
            shared(&warnings(&two, &on_busy_machine(&two, 2, 89.0))),
            None
        );
        // No machine samples (a run shorter than the monitor's interval).
        assert_eq!(shared(&warnings(&two, &result(&two, 2, 190.0))), None);
    }

    #[test]
    fn a_remote_server_shares_no_cpu_unless_it_is_monitored_here() {
        let remote = plan_to("http://10.0.0.5:3000/", 2);
        let mut busy = on_busy_machine(&remote, 2, 97.0);
        assert_eq!(shared(&warnings(&remote, &busy)), None);
        let monitor = busy.monitor.as_mut().expect("a monitor");
        monitor.processes.push(ProcessSummary {
            role: "server".into(),
            ..ProcessSummary::default()
        });
        assert!(shared(&warnings(&remote, &busy)).is_some());
    }

    #[test]
    fn local_hosts() {
        for host in [
            "127.0.0.1",
            "127.0.0.2",
            "localhost",
            "LOCALHOST",
            "::1",
            "[::1]",
        ] {
            assert!(is_local(host), "{host}");
        }
        for host in ["10.0.0.5", "example.com", "localhost.example.com", "::2"] {
            assert!(!is_local(host), "{host}");
        }
    }

    #[test]
    fn port_range() {
        assert_eq!(port_range_size("32768 60999"), Some(28232));
        assert_eq!(port_range_size(""), None);
    }

    #[test]
    fn poisson_arrivals_fall_behind_only_beyond_their_own_randomness() {
        let at = |arrival: Arrival, sent: u64| {
            let plan = rate_plan(100.0, 100, arrival);
            // 2 s at 100/s: 200 intended.
            let mut run = result(&plan, 2, 10.0);
            run.requests.sent = sent;
            warnings(&plan, &run)
                .into_iter()
                .any(|w| w.contains("the open model fell behind"))
        };
        // 186 of 200 (93%) is within 3 deviations (√200 ≈ 14) of a
        // Poisson draw; 150 is not. Evenly spaced arrivals have no excuse.
        assert!(!at(Arrival::Poisson, 186));
        assert!(at(Arrival::Poisson, 150));
        assert!(at(Arrival::Uniform, 186));
    }

    #[test]
    fn http2_streams_count_as_room_for_the_rate() {
        let little = |streams: usize| {
            let mut plan = rate_plan(200.0, 1, Arrival::Uniform);
            plan.transport.http2 = true;
            plan.transport.streams = streams;
            let mut run = result(&plan, 2, 10.0);
            run.requests.sent = 400;
            // 200 req/s × 200 ms: 40 requests in flight.
            run.service_time_us.mean = 200_000.0;
            warnings(&plan, &run)
                .into_iter()
                .find(|w| w.starts_with("too few connections for the rate"))
        };
        assert_eq!(little(100), None, "1 × 100 streams hold 40");
        assert_eq!(
            little(10).as_deref(),
            Some("too few connections for the rate: 200 req/s × 200.0 ms service time needs ≈ 40 streams (Little's law), -c × --streams is 1 × 10")
        );
    }
}
