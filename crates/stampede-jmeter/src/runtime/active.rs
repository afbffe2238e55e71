//! JTL `allThreads`: the threads of the groups running at a sample's time,
//! counted group by group (a group's threads count from its run's start
//! to its end), so a group that has ended, or a setUp group before the
//! main ones, no longer counts. JMeter counts thread by thread; the
//! request log does not say when one virtual user ends, so a group's
//! threads drop together when its run ends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Not started yet / not ended yet.
const UNSET: u64 = u64::MAX;

/// One group's span, in epoch milliseconds.
struct Span {
    threads: u32,
    start_ms: AtomicU64,
    end_ms: AtomicU64,
}

/// Every group's span, shared by the groups' JTL sinks.
#[derive(Clone)]
pub struct ActiveGroups(Arc<Vec<Span>>);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl ActiveGroups {
    /// The groups' thread counts, in plan order.
    pub fn new(threads: impl IntoIterator<Item = u32>) -> ActiveGroups {
        let spans = threads
            .into_iter()
            .map(|threads| Span {
                threads,
                start_ms: AtomicU64::new(UNSET),
                end_ms: AtomicU64::new(UNSET),
            })
            .collect();
        ActiveGroups(Arc::new(spans))
    }

    /// The groups of a phase start together now, as JMeter starts its
    /// thread groups, each after its own scheduler delay (`(index, delay
    /// in ms)`): marked before any of them is set up, so a group slower to
    /// set up (its thread scheduled late on a busy machine) still counts
    /// from the phase's start in the others' samples.
    pub fn phase_started(&self, groups: impl IntoIterator<Item = (usize, u64)>) {
        let now = now_ms();
        for (index, delay_ms) in groups {
            if let Some(span) = self.0.get(index) {
                span.start_ms.store(now + delay_ms, Ordering::Relaxed);
            }
        }
    }

    /// Group `index`'s run starts now.
    #[cfg(test)]
    pub fn started(&self, index: usize) {
        self.phase_started([(index, 0)]);
    }

    /// Group `index`'s run has ended.
    pub fn ended(&self, index: usize) {
        if let Some(span) = self.0.get(index) {
            span.end_ms.store(now_ms(), Ordering::Relaxed);
        }
    }

    /// The threads of the groups running at `at_ms`; group `own` (whose
    /// sample it is) counts whatever the clock says.
    pub fn at(&self, own: usize, at_ms: u64) -> u32 {
        self.0
            .iter()
            .enumerate()
            .filter(|(i, span)| {
                *i == own
                    || (span.start_ms.load(Ordering::Relaxed) <= at_ms
                        && at_ms < span.end_ms.load(Ordering::Relaxed))
            })
            .map(|(_, span)| span.threads)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_group_no_longer_counts() {
        let active = ActiveGroups::new([2, 3]);
        assert_eq!(active.at(1, now_ms()), 3, "group 0 has not started");
        active.started(0);
        active.started(1);
        let during = now_ms();
        assert_eq!(active.at(1, during), 5);
        std::thread::sleep(std::time::Duration::from_millis(5));
        active.ended(0);
        assert_eq!(active.at(1, now_ms() + 1), 3, "group 0 has ended");
        assert_eq!(active.at(1, during), 5, "it counts at times before its end");
        assert_eq!(
            active.at(0, now_ms() + 1),
            5,
            "a group counts in its own samples"
        );
    }
}
