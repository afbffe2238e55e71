//! The aggregator's watchdog: a worker that never reports again is given up
//! on, so that a run always ends (a Lua hook that never returns,
//! `while true do end`, which LuaJIT cannot interrupt in compiled code).
//!
//! The rule: once the run should be over (its deadline, `-d` or `-n`'s
//! limit, or a stop such as Ctrl-C) and [`grace`] more has passed, a worker
//! that has not sent its last snapshot and has sent nothing for a grace
//! period is abandoned. Its figures are those of the last snapshot it sent
//! (the aggregator already merged them); the run ends with every other
//! worker's, `stop_reason: "worker_stuck"`, and the binary exits 2. The
//! worker's OS thread cannot be killed: it is left running (detached) and
//! ends with the process, which exits once the result is written.
//!
//! A worker that is merely slow to end still sends a snapshot every
//! interval, so it is never taken for a stuck one.

use std::time::{Duration, Instant};

/// How long past the run's end a silent worker is waited for: 2 s, or 8
/// snapshot intervals when those are longer (a worker reports at least
/// once an interval while it runs); `None`: the default interval.
pub fn grace(snapshot_interval: Option<Duration>) -> Duration {
    let interval = snapshot_interval.unwrap_or(crate::plan::worker_plan::SNAPSHOT_INTERVAL);
    Duration::from_secs(2).max(interval * 8)
}

/// How often the aggregator looks at the clock while no message comes.
pub(crate) const POLL: Duration = Duration::from_millis(100);

/// When each worker last reported, and when the run should have ended.
#[derive(Debug)]
pub(crate) struct Watchdog {
    grace: Duration,
    /// The run's deadline, if it has one.
    deadline: Option<Instant>,
    /// When a stop (Ctrl-C, every script thread stopped) was first seen.
    stopped_at: Option<Instant>,
    heard: Vec<Instant>,
    /// How many snapshots each worker sent.
    snapshots: Vec<u32>,
}

impl Watchdog {
    pub(crate) fn new(
        workers: usize,
        now: Instant,
        deadline: Option<Instant>,
        grace: Duration,
    ) -> Watchdog {
        Watchdog {
            grace,
            deadline,
            stopped_at: None,
            heard: vec![now; workers],
            snapshots: vec![0; workers],
        }
    }

    /// Worker `worker` sent a message at `now`.
    pub(crate) fn heard(&mut self, worker: usize, now: Instant) {
        if let Some(at) = self.heard.get_mut(worker) {
            *at = now;
        }
        if let Some(count) = self.snapshots.get_mut(worker) {
            *count += 1;
        }
    }

    /// What is known of a given-up worker's lost figures: how many
    /// snapshots it sent, and how long before the run's end (`end`) its
    /// last one (or, without one, the run's start) came.
    pub(crate) fn lost(&self, worker: usize, end: Instant) -> (u32, Duration) {
        let snapshots = self.snapshots.get(worker).copied().unwrap_or(0);
        let heard = self.heard.get(worker).copied().unwrap_or(end);
        (snapshots, end.saturating_duration_since(heard))
    }

    /// The run was asked to stop at `now` (the first call counts).
    pub(crate) fn stopped(&mut self, now: Instant) {
        self.stopped_at.get_or_insert(now);
    }

    /// When the run should have ended: the earlier of its deadline and a stop.
    pub(crate) fn end(&self) -> Option<Instant> {
        match (self.deadline, self.stopped_at) {
            (Some(deadline), Some(stop)) => Some(deadline.min(stop)),
            (one, other) => one.or(other),
        }
    }

    pub(crate) fn grace(&self) -> Duration {
        self.grace
    }

    /// The unfinished workers (`finished[i]` false) to give up on at `now`.
    pub(crate) fn abandoned(&self, now: Instant, finished: &[bool]) -> Vec<usize> {
        let Some(end) = self.end() else {
            return Vec::new();
        };
        if now < end + self.grace {
            return Vec::new();
        }
        (self.heard.iter().enumerate())
            .filter(|&(worker, &heard)| {
                !finished.get(worker).copied().unwrap_or(true) && now >= heard + self.grace
            })
            .map(|(worker, _)| worker)
            .collect()
    }
}

/// A worker the watchdog gave up on; its `Display` is the one-line warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abandoned {
    /// The worker's index (0-based; the warning counts from 1, as a
    /// script's threads do).
    pub worker: usize,
    /// What it was running, as the script says (`the Lua hook request()`).
    pub hook: Option<String>,
    /// How long past the run's end it was waited for.
    pub grace: Duration,
    /// How many snapshots it sent before it got stuck (0: none, all its
    /// figures are lost).
    pub snapshots: u32,
    /// How long before the run's end its last snapshot (or, without one,
    /// the run's start) came: the span whose figures are lost.
    pub unreported: Duration,
}

impl Abandoned {
    /// What of its figures is lost, for the summary and the warning.
    pub fn lost_figures(&self) -> String {
        let span = self.unreported.as_secs_f64();
        match self.snapshots {
            0 => format!(
                "it sent no snapshot, so its figures (about {span:.1} s of requests and responses) are lost and not counted"
            ),
            n => format!(
                "its figures after its last snapshot ({} sent; about {span:.1} s before the run's end) are lost and not counted",
                snapshots_counted(n)
            ),
        }
    }
}

/// "1 snapshot", "3 snapshots".
fn snapshots_counted(n: u32) -> String {
    if n == 1 {
        "1 snapshot".into()
    } else {
        format!("{n} snapshots")
    }
}

impl std::fmt::Display for Abandoned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let worker = self.worker + 1;
        let grace = self.grace.as_secs_f64();
        match &self.hook {
            Some(hook) => write!(f, "worker {worker} did not return from {hook}")?,
            None => write!(f, "worker {worker} did not finish")?,
        }
        write!(
            f,
            " within {grace} s of the run's end: given up; {}",
            self.lost_figures()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_the_worker_from_one_and_the_hook() {
        let stuck = Abandoned {
            worker: 0,
            hook: Some("the Lua hook request()".into()),
            grace: Duration::from_secs(2),
            snapshots: 0,
            unreported: Duration::from_millis(2000),
        };
        assert_eq!(
            stuck.to_string(),
            "worker 1 did not return from the Lua hook request() within 2 s of the run's end: given up; it sent no snapshot, so its figures (about 2.0 s of requests and responses) are lost and not counted"
        );
    }

    #[test]
    fn the_grace_is_two_seconds_or_eight_intervals() {
        assert_eq!(grace(None), Duration::from_secs(2));
        assert_eq!(grace(Some(Duration::from_secs(1))), Duration::from_secs(8));
    }

    #[test]
    fn only_silent_unfinished_workers_past_the_end_and_the_grace_are_given_up() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(3, t0, Some(t0 + 5 * s), 2 * s);
        dog.heard(1, t0 + 6 * s);
        let finished = [false, false, true];
        assert!(
            dog.abandoned(t0 + 6 * s, &finished).is_empty(),
            "within the grace"
        );
        // Worker 0 silent since t0, worker 1 heard at 6 s, worker 2 done.
        assert_eq!(dog.abandoned(t0 + 7 * s, &finished), vec![0]);
        assert_eq!(dog.abandoned(t0 + 8 * s, &finished), vec![0, 1]);
    }

    #[test]
    fn without_a_deadline_only_a_stop_starts_the_clock() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(1, t0, None, 2 * s);
        assert!(dog.abandoned(t0 + 100 * s, &[false]).is_empty());
        dog.stopped(t0 + 100 * s);
        dog.stopped(t0 + 101 * s);
        assert_eq!(dog.end(), Some(t0 + 100 * s), "the first stop counts");
        assert!(dog.abandoned(t0 + 101 * s, &[false]).is_empty());
        assert_eq!(dog.abandoned(t0 + 102 * s, &[false]), vec![0]);
    }
}
