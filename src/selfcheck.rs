//! The run's self-check: warnings, printed with the summary and stored in the
//! result, for when the run itself is suspect rather than the server.

use stampede_metrics::RunResult;
use stampede_plan::{LoadModel, Plan};

/// The client using more than this share of its CPUs means it, not the
/// server, may have been the bottleneck.
const CLIENT_CPU_LIMIT_PCT: f64 = 90.0;
/// An open model achieving less than this share of its target fell behind.
const RATE_ACHIEVED_MIN_PCT: f64 = 95.0;
/// Late sends above this share of all sends mean the schedule was not kept.
const LATE_SENDS_MAX_PCT: f64 = 1.0;
/// Warn when more than this share of the open-file limit was planned.
const FD_HEADROOM_PCT: f64 = 80.0;

/// Every warning that applies to this run.
pub fn warnings(plan: &Plan, result: &RunResult) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(client) = result.monitor.as_ref().and_then(|m| m.client()) {
        let cores = plan.threads.min(result.environment.cpus.max(1)) as f64;
        let used = client.cpu_pct_mean / cores;
        if used > CLIENT_CPU_LIMIT_PCT {
            warnings.push(format!(
                "the load generator used {used:.0}% of its {cores} core(s): it, not the server, may have been the bottleneck; add cores or threads, or run agents on more machines"
            ));
        }
    }
    if let LoadModel::Rate { per_s, .. } = &plan.model {
        let constant = per_s.stages.iter().all(|s| s.target == per_s.start);
        let sent = result.requests.sent.max(1) as f64;
        if constant && result.elapsed_s > 0.5 {
            let achieved = 100.0 * (result.requests.sent as f64 / result.elapsed_s) / per_s.peak();
            if achieved < RATE_ACHIEVED_MIN_PCT && !result.interrupted {
                warnings.push(format!(
                    "the open model fell behind: {achieved:.1}% of the target rate was sent"
                ));
            }
        }
        if let Some(schedule) = &result.schedule {
            let late_pct = 100.0 * schedule.late_sends as f64 / sent;
            if late_pct > LATE_SENDS_MAX_PCT {
                warnings.push(format!(
                    "{late_pct:.1}% of requests were sent late (p99 lag {:.1} ms): all {} connections were busy; latency includes that wait, service time does not",
                    schedule.lag_p99_us as f64 / 1000.0,
                    plan.connections()
                ));
            }
        }
        // Little's law: connections needed = rate × time each request holds one.
        let needed = per_s.peak() * result.service_time_us.mean / 1e6;
        if needed > plan.connections() as f64 {
            warnings.push(format!(
                "too few connections for the rate: {:.0} req/s × {:.1} ms service time needs ≈ {needed:.0} connections (Little's law), -c is {}",
                per_s.peak(),
                result.service_time_us.mean / 1000.0,
                plan.connections()
            ));
        }
    }
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

fn port_range_size(range: &str) -> Option<u64> {
    let mut parts = range.split_whitespace().map(|p| p.parse::<u64>().ok());
    let (low, high) = (parts.next()??, parts.next()??);
    Some(high.saturating_sub(low) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_range() {
        assert_eq!(port_range_size("32768 60999"), Some(28232));
        assert_eq!(port_range_size(""), None);
    }
}
