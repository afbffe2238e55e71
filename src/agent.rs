//! Distributed runs: `--agent I/N` (this process runs the I-th share of the
//! plan), `--start-at TIME` (wait for a common wall-clock start) and
//! `--max-skew`. Owns splitting a plan into shares, the wait, and recording
//! the agent and its start in the result. Merging the agents' results lives in
//! stampede-metrics (`merge_results`); the manifests in `cmd::k8s`.

use anyhow::bail;
use stampede_metrics::{format_timestamp, parse_timestamp, signed_millis, AgentInfo, RunResult};
use stampede_plan::{parse_duration, LoadModel, Plan, Schedule, Stage, StopCondition};
use std::time::{Duration, SystemTime};

/// `--max-skew` when not given.
const DEFAULT_MAX_SKEW: Duration = Duration::from_secs(1);
/// The wall clock is read again at least this often while waiting, so that a
/// clock step (NTP) during a long wait moves the start with it.
const RECHECK: Duration = Duration::from_secs(1);

/// Options of a run that is one agent of several.
#[derive(Debug, Clone, clap::Args)]
pub struct AgentArgs {
    /// Run the I-th of N equal shares of the load, I from 0 (as Kubernetes'
    /// JOB_COMPLETION_INDEX): connections and rate split evenly, -n split exactly
    #[arg(long, value_parser = parse_share, value_name = "I/N")]
    pub agent: Option<Share>,
    /// Start at this wall-clock time, RFC 3339 (2026-12-01T10:00:00Z) or +DUR
    /// from now (+10s), so that agents on several machines start together
    #[arg(long, value_parser = parse_start_at, value_name = "TIME")]
    pub start_at: Option<StartAt>,
    /// Warn when the run starts more than this after --start-at (clock skew,
    /// a slow pod start)
    #[arg(long, value_parser = parse_duration, default_value = "1s", value_name = "DUR")]
    pub max_skew: Duration,
}

impl Default for AgentArgs {
    fn default() -> Self {
        AgentArgs {
            agent: None,
            start_at: None,
            max_skew: DEFAULT_MAX_SKEW,
        }
    }
}

/// `--agent I/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub index: u32,
    pub count: u32,
}

/// `--start-at`, resolved to a wall-clock instant when the arguments were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartAt(pub SystemTime);

pub fn parse_share(text: &str) -> Result<Share, String> {
    let usage = || format!("'{text}' is not I/N (e.g. 0/8: the first of 8 agents)");
    let (index, count) = text.split_once('/').ok_or_else(usage)?;
    let index: u32 = index.trim().parse().map_err(|_| usage())?;
    let count: u32 = count.trim().parse().map_err(|_| usage())?;
    if count == 0 {
        return Err(format!("--agent {text}: N must be at least 1"));
    }
    if index >= count {
        return Err(format!(
            "--agent {text}: I counts from 0, so it must be below {count} (0/{count} … {}/{count})",
            count - 1
        ));
    }
    Ok(Share { index, count })
}

pub fn parse_start_at(text: &str) -> Result<StartAt, String> {
    if let Some(relative) = text.trim().strip_prefix('+') {
        let delay = parse_duration(relative).map_err(|e| e.to_string())?;
        return Ok(StartAt(SystemTime::now() + delay));
    }
    parse_timestamp(text)
        .map(StartAt)
        .map_err(|e| e.to_string())
}

/// This agent's part of `total` whole things (connections, requests): the
/// remainder goes one each to the first agents, so the shares add up exactly
/// (the one rule of stampede_plan::share_of, as between threads).
fn split(total: u64, share: Share) -> u64 {
    stampede_plan::share_of(total, share.index as usize, share.count as usize)
}

/// This agent's part of a rate: whole rates split like counts while every
/// agent still gets at least 1/s, otherwise divided exactly.
fn split_rate(total: f64, share: Share) -> f64 {
    let whole = total.fract() == 0.0 && total >= f64::from(share.count) && total < 1e15;
    if whole {
        split(total as u64, share) as f64
    } else {
        total / f64::from(share.count)
    }
}

fn scale_schedule(schedule: &Schedule, part: impl Fn(f64) -> f64) -> Schedule {
    Schedule {
        start: part(schedule.start),
        stages: schedule
            .stages
            .iter()
            .map(|s| Stage {
                duration: s.duration,
                target: part(s.target),
            })
            .collect(),
    }
}

/// Narrows the plan to this agent's share; returns notices for the user.
pub fn apply_share(args: &AgentArgs, plan: &mut Plan) -> anyhow::Result<Vec<String>> {
    let Some(share) = args.agent else {
        return Ok(Vec::new());
    };
    let label = format!("agent {}/{}", share.index, share.count);
    let mut notices = share_model(args, &mut plan.model)?;
    if let StopCondition::Requests { count, .. } = &mut plan.stop {
        let total = *count;
        *count = split(total, share);
        if *count == 0 {
            bail!(
                "-n {total} cannot be split among {} agents: {label} would send no request",
                share.count
            );
        }
        notices.push(format!("{label}: {count} of {total} requests"));
    }
    Ok(notices)
}

/// This agent's share of one load model (the plan's, or each group's of a
/// scenario): connections, or rate and connections, split evenly.
pub fn share_model(args: &AgentArgs, model: &mut LoadModel) -> anyhow::Result<Vec<String>> {
    let Some(share) = args.agent else {
        return Ok(Vec::new());
    };
    let label = format!("agent {}/{}", share.index, share.count);
    let mut notices = Vec::new();
    match model {
        LoadModel::Closed { connections } => {
            let total = connections.peak().round() as u64;
            *connections = scale_schedule(connections, |c| split(c.round() as u64, share) as f64);
            let mine = connections.peak() as u64;
            if mine == 0 {
                bail!(
                    "-c {total} cannot be split among {} agents: {label} would get no connection",
                    share.count
                );
            }
            notices.push(format!("{label}: {mine} of {total} connections"));
        }
        LoadModel::Rate {
            per_s,
            max_connections,
            ..
        } => {
            let total = per_s.peak();
            *per_s = scale_schedule(per_s, |r| split_rate(r, share));
            let total_connections = *max_connections as u64;
            *max_connections = split(total_connections, share) as usize;
            if *max_connections == 0 {
                bail!(
                    "-c {total_connections} cannot be split among {} agents: {label} would get no connection",
                    share.count
                );
            }
            notices.push(format!(
                "{label}: {} of {} requests/s on at most {} of {total_connections} connections",
                per_s.peak(),
                total,
                max_connections
            ));
        }
    }
    Ok(notices)
}

/// Blocks until the agreed start time, if one was given: sleeps on the
/// monotonic clock for the wall-clock difference, re-reading the wall clock
/// every second; warns when already later than `--max-skew`.
pub fn wait_for_start(args: &AgentArgs) -> anyhow::Result<()> {
    let Some(StartAt(start)) = args.start_at else {
        return Ok(());
    };
    let mut announced = false;
    // Ctrl-C while waiting: the run then starts and ends at once, interrupted.
    let stop = crate::interrupt::stop_handle()?;
    loop {
        if stop.is_stopped() {
            return Ok(());
        }
        match start.duration_since(SystemTime::now()) {
            Ok(remaining) if !remaining.is_zero() => {
                if !announced {
                    eprintln!(
                        "stampede: waiting {:.1}s for --start-at {}",
                        remaining.as_secs_f64(),
                        format_timestamp(start)
                    );
                    announced = true;
                }
                std::thread::sleep(remaining.min(RECHECK));
            }
            Ok(_) => return Ok(()),
            Err(late) => {
                let late = late.duration();
                if late > args.max_skew {
                    eprintln!(
                        "stampede: warning: starting {:.3}s after --start-at {} (more than --max-skew {}): \
                         this agent's load will not line up with the others'",
                        late.as_secs_f64(),
                        format_timestamp(start),
                        stampede_plan::format_duration(args.max_skew)
                    );
                }
                return Ok(());
            }
        }
    }
}

/// Records the agent's identity and start in the result (when --agent or
/// --start-at was given), with a warning when it started late.
pub fn annotate(args: &AgentArgs, result: &mut RunResult) {
    if args.agent.is_none() && args.start_at.is_none() {
        return;
    }
    let share = args.agent.unwrap_or(Share { index: 0, count: 1 });
    let real_start = parse_timestamp(&result.started_at).ok();
    let start_offset_ms = match (&args.start_at, real_start) {
        (Some(StartAt(agreed)), Some(real)) => Some(signed_millis(real, *agreed)),
        _ => None,
    };
    let max_skew_ms = u64::try_from(args.max_skew.as_millis()).unwrap_or(u64::MAX);
    if let Some(offset) = start_offset_ms.filter(|ms| ms.unsigned_abs() > max_skew_ms) {
        result.warnings.push(format!(
            "started {offset} ms after --start-at (more than --max-skew {max_skew_ms} ms): \
             this agent's seconds do not line up with the other agents'"
        ));
    }
    let (clock_synchronized, clock_error_us) = kernel_clock();
    if args.start_at.is_some() && clock_synchronized == Some(false) {
        result.warnings.push(
            "this machine's clock is not synchronized (NTP): --start-at is only as exact as the clock".into(),
        );
    }
    result.agent = Some(AgentInfo {
        index: share.index,
        count: share.count,
        start_at: args
            .start_at
            .as_ref()
            .map(|StartAt(time)| format_timestamp(*time)),
        start_offset_ms,
        max_skew_ms,
        clock_synchronized,
        clock_error_us,
    });
}

/// Whether the kernel thinks its clock is synchronized, and its estimated
/// error in µs (adjtimex(2) in read-only mode).
fn kernel_clock() -> (Option<bool>, Option<u64>) {
    // SAFETY: a zeroed timex is a valid argument; with modes = 0 adjtimex only
    // reads the kernel's clock state into it and changes nothing.
    let mut timex: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::adjtimex(&mut timex) };
    if state < 0 {
        return (None, None);
    }
    let synchronized = state != libc::TIME_ERROR && timex.status & libc::STA_UNSYNC == 0;
    let error = synchronized.then(|| u64::try_from(timex.esterror).unwrap_or(0));
    (Some(synchronized), error)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan as `stampede run http://127.0.0.1:3000/ -t 2` builds it, with
    /// the model and stop condition under test. Written out rather than built
    /// by plan_args.rs, which applies the agent's share and so imports this
    /// module (no import cycle, tests/module_cycles.rs).
    fn plan(model: LoadModel, stop: StopCondition) -> Plan {
        Plan {
            target: stampede_plan::Target::parse("http://127.0.0.1:3000/").unwrap(),
            request: stampede_plan::RequestSpec {
                method: "GET".into(),
                headers: vec![],
                body: vec![],
                http10: false,
            },
            model,
            threads: 2,
            stop,
            warmup: None,
            source_addrs: Vec::new(),
            transport: stampede_plan::TransportSpec::default(),
            mix: Vec::new(),
            keepalive: true,
            connect_timeout: Duration::from_secs(3),
            timeout: Duration::from_secs(10),
        }
    }

    fn result() -> RunResult {
        let recording = stampede_metrics::Recording {
            started_at: SystemTime::now(),
            elapsed: Duration::from_secs(1),
            interrupted: false,
            dns: Duration::ZERO,
            total: Default::default(),
            timeseries: vec![],
            event_loop: stampede_plan::EventLoop::Epoll,
            tls: None,
            seed: None,
            checks: Vec::new(),
            judged: false,
            stop_reason: None,
            groups: Vec::new(),
        };
        let p = plan(closed(1.0), StopCondition::Duration(Duration::from_secs(1)));
        RunResult::from_recording(&p, &recording, Default::default(), "test", vec![])
    }

    fn agent(index: u32, count: u32) -> AgentArgs {
        AgentArgs {
            agent: Some(Share { index, count }),
            ..AgentArgs::default()
        }
    }

    fn closed(connections: f64) -> LoadModel {
        LoadModel::Closed {
            connections: Schedule::constant(connections, Duration::from_secs(10)),
        }
    }

    #[test]
    fn shares_add_up_exactly() {
        for (total, count) in [(10u64, 3u32), (16_000, 8), (7, 7), (1_000_001, 4)] {
            let sum: u64 = (0..count)
                .map(|index| split(total, Share { index, count }))
                .sum();
            assert_eq!(sum, total);
        }
        let shares: Vec<u64> = (0..3)
            .map(|index| split(10, Share { index, count: 3 }))
            .collect();
        assert_eq!(
            shares,
            vec![4, 3, 3],
            "the remainder goes to the first agents"
        );
    }

    #[test]
    fn splits_connections_requests_and_stages() {
        let stop = StopCondition::Requests {
            count: 1000,
            limit: None,
        };
        let stages = Schedule {
            start: 0.0,
            stages: vec![
                Stage {
                    duration: Duration::from_secs(5),
                    target: 10.0,
                },
                Stage {
                    duration: Duration::from_secs(5),
                    target: 20.0,
                },
            ],
        };
        let mut counts = (0u64, 0u64, 0.0f64);
        for index in 0..3 {
            let mut p = plan(
                LoadModel::Closed {
                    connections: stages.clone(),
                },
                stop,
            );
            apply_share(&agent(index, 3), &mut p).unwrap();
            counts.0 += p.connections() as u64;
            if let StopCondition::Requests { count, .. } = p.stop {
                counts.1 += count;
            }
            counts.2 += p.model.schedule().stages[0].target;
            assert_eq!(p.model.schedule().duration(), Duration::from_secs(10));
        }
        assert_eq!(counts, (20, 1000, 10.0));
    }

    #[test]
    fn splits_rates_and_their_connection_cap() {
        let mut total = 0.0;
        for index in 0..3 {
            let mut p = plan(
                LoadModel::Rate {
                    per_s: Schedule::constant(1000.0, Duration::from_secs(10)),
                    max_connections: 100,
                    arrival: Default::default(),
                },
                StopCondition::Duration(Duration::from_secs(10)),
            );
            apply_share(&agent(index, 3), &mut p).unwrap();
            total += p.model.schedule().peak();
            assert!(p.connections() == 34 || p.connections() == 33);
        }
        assert_eq!(total, 1000.0);
        assert_eq!(split_rate(2.0, Share { index: 2, count: 3 }), 2.0 / 3.0);
    }

    #[test]
    fn refuses_a_share_with_nothing_to_do() {
        let mut p = plan(closed(2.0), StopCondition::Duration(Duration::from_secs(1)));
        let error = apply_share(&agent(2, 3), &mut p).unwrap_err().to_string();
        assert!(
            error.contains("agent 2/3 would get no connection"),
            "{error}"
        );
    }

    #[test]
    fn parses_shares_and_start_times() {
        assert_eq!(parse_share("3/8"), Ok(Share { index: 3, count: 8 }));
        for bad in ["8/8", "1/0", "x/2", "3", "-1/2"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
        let StartAt(soon) = parse_start_at("+10s").unwrap();
        let ahead = soon.duration_since(SystemTime::now()).unwrap();
        assert!(ahead > Duration::from_secs(9) && ahead <= Duration::from_secs(10));
        assert!(parse_start_at("2026-12-01T10:00:00Z").is_ok());
        assert!(parse_start_at("soon").is_err());
    }

    #[test]
    fn annotates_the_start_offset_and_warns_when_late() {
        let mut result = result();
        let agreed = parse_timestamp(&result.started_at).unwrap() - Duration::from_secs(3);
        let args = AgentArgs {
            agent: Some(Share { index: 1, count: 2 }),
            start_at: Some(StartAt(agreed)),
            max_skew: Duration::from_secs(1),
        };
        annotate(&args, &mut result);
        let info = result.agent.clone().unwrap();
        assert_eq!((info.index, info.count), (1, 2));
        assert_eq!(info.start_offset_ms, Some(3000));
        assert!(result.warnings.iter().any(|w| w.contains("3000 ms after")));
    }

    #[test]
    fn no_agent_options_no_annotation() {
        let mut result = result();
        annotate(&AgentArgs::default(), &mut result);
        assert_eq!(result.agent, None);
        assert!(wait_for_start(&AgentArgs::default()).is_ok());
    }
}
