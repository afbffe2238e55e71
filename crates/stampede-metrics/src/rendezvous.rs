//! What a run reports of each scenario step's rendezvous (the result's
//! `rendezvous`): its batches, those the timeout released, and how close
//! together each released batch sent (the spread from its first to its
//! last send, p50/p99/max over the batches).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One step's rendezvous.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RendezvousResult {
    /// The step's name (its target index, from 1, when it has none).
    pub step: String,
    /// The batch size asked for: the users gathered before a release.
    pub users: u64,
    /// Batches released that sent.
    pub batches: u64,
    /// Requests sent by released users, over all batches.
    #[serde(default)]
    pub sent: u64,
    /// The fewest and the most users of one batch that sent: below `users`
    /// when the timeout, users finishing or the end of the run let a batch go.
    #[serde(default)]
    pub smallest: u64,
    /// The most users of one batch that sent.
    #[serde(default)]
    pub largest: u64,
    /// Batches the timeout released with fewer users.
    #[serde(default)]
    pub timed_out: u64,
    /// Each batch's spread from its first to its last send.
    pub spread_us: SpreadSummary,
}

/// Percentiles of the batches' spreads, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpreadSummary {
    /// Median spread.
    pub p50: u64,
    /// 99th percentile spread.
    pub p99: u64,
    /// Largest spread.
    pub max: u64,
}

impl SpreadSummary {
    /// The nearest-rank percentiles of `spreads` (all zero without any).
    pub fn of(spreads: &[Duration]) -> SpreadSummary {
        let mut us: Vec<u64> = spreads.iter().map(|d| d.as_micros() as u64).collect();
        us.sort_unstable();
        let at = |q: f64| match us.len() {
            0 => 0,
            n => us[((q * n as f64).ceil() as usize).clamp(1, n) - 1],
        };
        SpreadSummary {
            p50: at(0.50),
            p99: at(0.99),
            max: us.last().copied().unwrap_or(0),
        }
    }
}

/// Agents' rendezvous, step by step: each agent gathers its own users, so
/// batches add up; the spreads' percentiles are the largest of any agent
/// (an upper bound: the agents' batches are not kept one by one).
pub fn merge_rendezvous<'a>(
    each: impl IntoIterator<Item = &'a [RendezvousResult]>,
) -> Vec<RendezvousResult> {
    let mut merged: Vec<RendezvousResult> = Vec::new();
    for point in each.into_iter().flatten() {
        match merged.iter_mut().find(|m| m.step == point.step) {
            Some(m) => {
                m.smallest = match (m.batches, point.batches) {
                    (0, _) => point.smallest,
                    (_, 0) => m.smallest,
                    _ => m.smallest.min(point.smallest),
                };
                m.largest = m.largest.max(point.largest);
                m.batches += point.batches;
                m.sent += point.sent;
                m.timed_out += point.timed_out;
                m.spread_us = SpreadSummary {
                    p50: m.spread_us.p50.max(point.spread_us.p50),
                    p99: m.spread_us.p99.max(point.spread_us.p99),
                    max: m.spread_us.max.max(point.spread_us.max),
                };
            }
            None => merged.push(point.clone()),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_over_the_batches() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        assert_eq!(SpreadSummary::of(&[]), SpreadSummary::default());
        let s = SpreadSummary::of(&ms(&[4, 1, 3, 2]));
        assert_eq!((s.p50, s.p99, s.max), (2000, 4000, 4000));
    }

    #[test]
    fn agents_add_batches_and_keep_the_largest_spread() {
        let one = |batches, max| RendezvousResult {
            step: "buy".into(),
            users: 5,
            batches,
            sent: batches * 4,
            smallest: max / 100,
            largest: 5,
            timed_out: 1,
            spread_us: SpreadSummary {
                p50: max / 2,
                p99: max,
                max,
            },
        };
        let merged = merge_rendezvous([&[one(3, 100)][..], &[one(2, 300)][..]]);
        assert_eq!(merged.len(), 1);
        assert_eq!((merged[0].batches, merged[0].timed_out), (5, 2));
        assert_eq!(
            (merged[0].sent, merged[0].smallest, merged[0].largest),
            (20, 1, 5)
        );
        // An agent that released nothing does not make the smallest batch 0.
        let none = RendezvousResult {
            batches: 0,
            sent: 0,
            smallest: 0,
            largest: 0,
            ..one(0, 0)
        };
        let merged = merge_rendezvous([&[none.clone()][..], &[one(2, 300)][..], &[none][..]]);
        assert_eq!((merged[0].smallest, merged[0].largest), (3, 5));
        assert_eq!(merged[0].spread_us.max, 300);
    }
}
