//! The run-wide clock of a scenario's groups ([`RunPhases`]): when each
//! group may start (its phase open and its `start_delay` over), when it
//! must end (its `duration`), and the one flag every worker watches for
//! `on_error = "stop_run"`. Setup groups start with the run; main groups
//! when the last setup worker has ended; teardown groups when the last main
//! worker has ended (a phase without groups opens the next at once).
//!
//! Workers touch it at their start and end and in their housekeeping
//! turns, never per request: the counters are atomics because the workers
//! of different groups run on different threads.

use stampede_workload::{GroupLimits, Phase};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a worker waiting for its group's start looks again.
pub(crate) const START_POLL: Duration = Duration::from_millis(2);

fn slot(phase: Phase) -> usize {
    match phase {
        Phase::Setup => 0,
        Phase::Main => 1,
        Phase::Teardown => 2,
    }
}

/// The shared clock of a run's groups.
#[derive(Debug)]
pub(crate) struct RunPhases {
    start: Instant,
    /// Workers each phase had at the start.
    workers: [usize; 3],
    /// Workers of each phase still running.
    left: [AtomicUsize; 3],
    /// When each phase's last worker ended.
    ended: Mutex<[Option<Instant>; 3]>,
    /// A step failed in a group with `on_error = "stop_run"`.
    stop_run: AtomicBool,
}

impl RunPhases {
    /// The clock of a run started at `start` whose workers belong to
    /// phases `phases` (one entry per worker).
    pub(crate) fn new(start: Instant, phases: impl IntoIterator<Item = Phase>) -> RunPhases {
        let mut workers = [0usize; 3];
        for phase in phases {
            workers[slot(phase)] += 1;
        }
        RunPhases {
            start,
            workers,
            left: workers.map(AtomicUsize::new),
            ended: Mutex::new([None; 3]),
            stop_run: AtomicBool::new(false),
        }
    }

    /// When `phase` opens, once that is known.
    pub(crate) fn opens_at(&self, phase: Phase) -> Option<Instant> {
        match phase {
            Phase::Setup => Some(self.start),
            Phase::Main => self.ends_at(Phase::Setup),
            Phase::Teardown => self.ends_at(Phase::Main),
        }
    }

    /// When `phase` ended (its last worker did), once it has.
    fn ends_at(&self, phase: Phase) -> Option<Instant> {
        if self.workers[slot(phase)] == 0 {
            return self.opens_at(phase);
        }
        self.ended.lock().ok().and_then(|ended| ended[slot(phase)])
    }

    /// When a group with `limits` starts: its phase open and its delay over.
    pub(crate) fn group_starts_at(&self, limits: &GroupLimits) -> Option<Instant> {
        let open = self.opens_at(limits.phase)?;
        Some(open + limits.start_delay.unwrap_or_default())
    }

    /// A worker of `phase` has ended: the phase's last opens the next phase.
    pub(crate) fn worker_ended(&self, phase: Phase) {
        if self.left[slot(phase)].fetch_sub(1, Ordering::AcqRel) == 1 {
            if let Ok(mut ended) = self.ended.lock() {
                ended[slot(phase)] = Some(Instant::now());
            }
        }
    }

    /// `on_error = "stop_run"`: every worker stops sending.
    pub(crate) fn stop_run(&self) {
        self.stop_run.store(true, Ordering::Relaxed);
    }

    pub(crate) fn run_stopped(&self) -> bool {
        self.stop_run.load(Ordering::Relaxed)
    }
}

/// A worker's place on the clock: it reports the worker's end exactly once,
/// on every way out (an error or a panic included), so that no later phase
/// waits for a worker that is gone.
#[derive(Debug)]
pub(crate) struct PhaseTicket {
    phases: std::sync::Arc<RunPhases>,
    phase: Phase,
}

impl PhaseTicket {
    pub(crate) fn new(phases: std::sync::Arc<RunPhases>, phase: Phase) -> PhaseTicket {
        PhaseTicket { phases, phase }
    }
}

impl Drop for PhaseTicket {
    fn drop(&mut self) {
        self.phases.worker_ended(self.phase);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_open_in_order_and_an_empty_phase_opens_the_next() {
        let start = Instant::now();
        let phases = RunPhases::new(start, [Phase::Setup, Phase::Main, Phase::Main]);
        assert_eq!(phases.opens_at(Phase::Setup), Some(start));
        assert_eq!(phases.opens_at(Phase::Main), None, "setup still running");
        phases.worker_ended(Phase::Setup);
        let main = phases.opens_at(Phase::Main).expect("setup ended");
        assert!(main >= start);
        phases.worker_ended(Phase::Main);
        assert_eq!(
            phases.opens_at(Phase::Teardown),
            None,
            "one main worker left"
        );
        phases.worker_ended(Phase::Main);
        assert!(phases.opens_at(Phase::Teardown).is_some());

        let only_main = RunPhases::new(start, [Phase::Main]);
        assert_eq!(only_main.opens_at(Phase::Main), Some(start));
        let limits = GroupLimits {
            start_delay: Some(Duration::from_millis(300)),
            ..GroupLimits::default()
        };
        assert_eq!(
            only_main.group_starts_at(&limits),
            Some(start + Duration::from_millis(300))
        );
    }
}
