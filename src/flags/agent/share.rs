//! An agent's share of the plan: connections, rate (and each stage of a
//! schedule) and `-n` split so that the agents' shares add up exactly, by
//! the one rule of `stampede_plan::share_of` that also splits between
//! worker threads.

use super::{AgentArgs, Share};
use anyhow::bail;
use stampede_plan::{LoadModel, Plan, Schedule, Stage, StopCondition};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::agent::test_fixtures::{agent, closed, plan};
    use std::time::Duration;

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
                    pace_window: Duration::ZERO,
                    batch_reads: false,
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
}
