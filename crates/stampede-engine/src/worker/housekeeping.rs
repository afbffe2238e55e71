//! The worker's housekeeping, one rulebook for every event loop:
//! the end of the warm-up (the books reset), a [`Snapshot`] to the
//! aggregator every `plan.snapshot_interval` (the request log flushed with
//! it), the deadline, a stop (SIGINT, a run given up for want of a
//! connection, the engine gone), another group's `stop_run`, the two ends a
//! workload brings (wrk's `thread:stop()`, a `unique` feeder drained), and
//! the last snapshot. The tokio worker (worker.rs) and the reactors
//! (reactor/) call [`Housekeeping::tick`] once per turn of their loop, never
//! per request, and wait no later than [`Housekeeping::next_wake`]; they
//! keep only their I/O and the rule of when their load has nothing left to
//! send.
//!
//! [`Snapshot`]: stampede_metrics::Snapshot

use crate::plan::worker_plan::{second_of, WorkerMessage, WorkerPlan};
use crate::worker::request_log::WorkerLog;
use crate::worker::worker_state::WorkerState;
use crate::workload::WorkerWorkload;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How often the stop signal, `stop_run` and a changing connection target
/// are looked at: checking them on every turn of a busy loop would cost.
pub(crate) const CONTROL_PERIOD: Duration = Duration::from_millis(10);

/// What a loop does after a housekeeping tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tick {
    /// Go on; `control`: this tick was a control turn (every
    /// [`CONTROL_PERIOD`]), when a loop re-reads its connection schedule.
    Go { control: bool },
    /// The worker is done: stop sending and call [`Housekeeping::finish`].
    Stop,
}

/// A worker's timing rules and its messages to the aggregator.
pub(crate) struct Housekeeping<'a> {
    plan: &'a WorkerPlan,
    state: &'a WorkerState,
    log: Option<&'a WorkerLog>,
    to_aggregator: &'a mpsc::Sender<WorkerMessage>,
    stop: watch::Receiver<bool>,
    /// The worker's workload, when its script may stop it or a `unique`
    /// feeder may run dry (`None` otherwise: nothing to look at per tick).
    ends: Option<&'a WorkerWorkload>,
    /// The warm-up's records are still to be dropped.
    warming_up: bool,
    next_control: Instant,
    next_snapshot: Instant,
    /// The deadline, or a year away without one.
    deadline: Instant,
}

impl<'a> Housekeeping<'a> {
    /// The housekeeping of a worker that runs `plan` (and `workload`, if
    /// any) from `start`.
    pub(crate) fn new(
        plan: &'a WorkerPlan,
        state: &'a WorkerState,
        log: Option<&'a WorkerLog>,
        workload: Option<&'a WorkerWorkload>,
        to_aggregator: &'a mpsc::Sender<WorkerMessage>,
        stop: watch::Receiver<bool>,
        start: Instant,
    ) -> Self {
        let far = start + Duration::from_secs(86_400 * 365);
        Housekeeping {
            plan,
            state,
            log,
            to_aggregator,
            stop,
            ends: workload.filter(|w| w.script.is_some() || w.watches_feed()),
            warming_up: plan.measure_start > start,
            next_control: start,
            next_snapshot: plan.measure_start + plan.snapshot_interval,
            deadline: plan.deadline.unwrap_or(far),
        }
    }

    /// One turn's housekeeping at `now`: stop, `stop_run` (every
    /// [`CONTROL_PERIOD`]), the deadline, the end of the warm-up, every
    /// snapshot due (several after a stall, each tagged with its second),
    /// and the workload's own end ([`Housekeeping::workload_ended`]).
    pub(crate) fn tick(&mut self, now: Instant) -> Tick {
        let control = now >= self.next_control;
        if control {
            if *self.stop.borrow_and_update() {
                return Tick::Stop;
            }
            if self.plan.phases.as_ref().is_some_and(|p| p.run_stopped()) {
                // Another group's step failed under on_error = "stop_run":
                // stop sending, and let what is in flight finish.
                self.state.stop_sending();
            }
            self.next_control = now + CONTROL_PERIOD;
        }
        if now >= self.deadline {
            return Tick::Stop;
        }
        if self.warming_up && now >= self.plan.measure_start {
            self.state.end_warmup();
            self.warming_up = false;
        }
        if now >= self.next_snapshot && !self.send_snapshots(now) {
            // The engine is gone; nothing would read our results.
            return Tick::Stop;
        }
        if self.workload_ended() {
            return Tick::Stop;
        }
        Tick::Go { control }
    }

    /// True when the workload ended the worker: wrk's `thread:stop()` (what
    /// is still in flight is left unfinished, as wrk leaves it), or a
    /// `unique` feeder out of rows with nothing in flight and no user inside
    /// an iteration (users waiting for a slot or an arrival would only find
    /// no row; the last snapshot says `feed_exhausted`). Looked at on every
    /// tick, after the snapshots due: a reactor stops in the turn that saw
    /// it, the tokio worker within a [`CONTROL_PERIOD`].
    fn workload_ended(&self) -> bool {
        let Some(work) = self.ends else {
            return false;
        };
        if work.script_stopped() {
            return true;
        }
        let drained = self.state.in_flight() == 0 && work.feed_drained();
        if drained {
            self.state.feed_ran_dry();
        }
        drained
    }

    /// Sends every interval snapshot due at `now`; false when the
    /// aggregator is gone.
    fn send_snapshots(&mut self, now: Instant) -> bool {
        if let Some(log) = self.log {
            // A quiet run must not leave its lines waiting in a half batch.
            log.flush();
        }
        let every = self.plan.snapshot_interval;
        let mut delivered = true;
        while now >= self.next_snapshot {
            let interval_start = self.next_snapshot - every;
            let second = interval_start
                .saturating_duration_since(self.plan.measure_start)
                .as_secs();
            delivered &= self
                .to_aggregator
                .send(WorkerMessage {
                    worker: self.plan.index,
                    second,
                    started: interval_start.saturating_duration_since(self.plan.measure_start),
                    snapshot: self.state.interval_snapshot(),
                    finished_at: None,
                })
                .is_ok();
            self.next_snapshot += every;
        }
        delivered
    }

    /// When the next tick has something to do: a control turn, the end of
    /// the warm-up, a snapshot or the deadline.
    pub(crate) fn next_wake(&self) -> Instant {
        let wake = self.next_control.min(self.next_snapshot).min(self.deadline);
        if self.warming_up {
            wake.min(self.plan.measure_start)
        } else {
            wake
        }
    }

    /// Looks at the stop signal on the next tick (a loop woken by its change).
    pub(crate) fn look_at_stop(&mut self) {
        self.next_control = Instant::now();
    }

    /// The worker stopped at `finished_at`: the request log's last lines
    /// and the last snapshot (what is still in flight is unfinished).
    pub(crate) fn finish(self, finished_at: Instant) {
        if let Some(log) = self.log {
            log.finish();
        }
        let since_start = finished_at.saturating_duration_since(self.plan.measure_start);
        let _ = self.to_aggregator.send(WorkerMessage {
            worker: self.plan.index,
            second: second_of(since_start),
            // The final snapshot holds what came since the last one sent.
            started: (self.next_snapshot - self.plan.snapshot_interval)
                .saturating_duration_since(self.plan.measure_start),
            snapshot: self.state.final_snapshot(),
            finished_at: Some(finished_at),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::transport::{ConnectorSpec, Endpoint};
    use crate::plan::worker_plan::WorkerLoad;
    use stampede_plan::{EventLoop, Schedule};
    use std::sync::Arc;

    const MS: Duration = Duration::from_millis(1);

    fn plan(start: Instant, warmup: Duration, deadline: Option<Duration>) -> WorkerPlan {
        WorkerPlan {
            index: 3,
            share: (0, 1),
            group: 0,
            connector: ConnectorSpec {
                endpoint: Endpoint::Tcp(([127, 0, 0, 1], 9).into()),
                addresses: None,
                source_addrs: Vec::new(),
                tls: None,
                tunnel_to: None,
                connect_timeout: Duration::from_secs(1),
                require_h2: false,
            },
            request: Arc::from(&b"GET / HTTP/1.1\r\n\r\n"[..]),
            mix: Vec::new(),
            mix_order: Arc::from(&[][..]),
            http2: None,
            http3: None,
            pipeline: 1,
            head_request: false,
            keepalive: true,
            timeout: Duration::from_secs(1),
            load: WorkerLoad::Closed {
                schedule: Schedule::constant(1.0, Duration::from_secs(1)),
                warmup_target: 1.0,
                slots: 1,
            },
            budget: None,
            measure_start: start + warmup,
            load_start: start + warmup,
            phases: None,
            rendezvous: None,
            deadline: deadline.map(|d| start + warmup + d),
            event_loop: EventLoop::Tokio,
            snapshot_interval: 250 * MS,
            lifetime: crate::plan::conn_lifetime::Lifetime::new(&Default::default()),
            redirect: None,
            follows_redirects: false,
            decode: false,
            stream: Default::default(),
            workload: None,
            seed: 1,
            websocket: None,
        }
    }

    fn seconds(messages: &[WorkerMessage]) -> Vec<(u64, bool)> {
        (messages.iter())
            .map(|m| (m.second, m.finished_at.is_some()))
            .collect()
    }

    #[test]
    fn the_warmup_ends_at_measurement_and_snapshots_follow_every_interval() {
        let start = Instant::now();
        let plan = plan(start, Duration::from_secs(1), None);
        let state = WorkerState::for_plan(&plan);
        let (sender, messages) = mpsc::channel();
        let (_stop, stop) = watch::channel(false);
        let mut house = Housekeeping::new(&plan, &state, None, None, &sender, stop, start);
        assert_eq!(house.next_wake(), start, "a control turn first");
        assert_eq!(house.tick(start), Tick::Go { control: true });
        assert_eq!(house.next_wake(), start + CONTROL_PERIOD);
        // The warm-up's records are dropped; its request still in flight
        // counts as sent in measurement.
        state.begin_request();
        state.recorder.borrow_mut().record_connect_attempt();
        assert_eq!(house.tick(start + 5 * MS), Tick::Go { control: false });
        house.tick(start + 995 * MS);
        assert_eq!(house.next_wake(), plan.measure_start, "the warm-up's end");
        house.tick(plan.measure_start);
        assert_eq!(messages.try_iter().count(), 0, "no snapshot of the warm-up");
        // A stalled loop: the four intervals of the first second at once,
        // each tagged with its second, then the fifth.
        house.tick(plan.measure_start + 1000 * MS);
        house.tick(plan.measure_start + 1250 * MS);
        assert_eq!(house.next_wake(), plan.measure_start + 1260 * MS);
        house.finish(plan.measure_start + 1300 * MS);
        let sent: Vec<WorkerMessage> = messages.try_iter().collect();
        assert_eq!(
            seconds(&sent),
            [
                (0, false),
                (0, false),
                (0, false),
                (0, false),
                (1, false),
                (1, true)
            ]
        );
        assert!(sent.iter().all(|m| m.worker == 3));
        let sum = |count: fn(&stampede_metrics::Counters) -> u64| -> u64 {
            sent.iter().map(|m| count(&m.snapshot.counters)).sum()
        };
        assert_eq!(
            sum(|c| c.connect_attempts),
            0,
            "the warm-up's records dropped"
        );
        assert_eq!(sum(|c| c.sent), 1, "its request in flight carried over");
        assert_eq!(sum(|c| c.unfinished), 1, "and still out at the end");
    }

    #[test]
    fn a_stop_is_seen_at_the_next_control_turn_and_the_deadline_at_once() {
        let start = Instant::now();
        let plan = plan(start, Duration::ZERO, Some(Duration::from_secs(2)));
        let state = WorkerState::for_plan(&plan);
        let (sender, _messages) = mpsc::channel();
        let (stop_sender, stop) = watch::channel(false);
        let mut house = Housekeeping::new(&plan, &state, None, None, &sender, stop, start);
        assert_eq!(house.tick(start), Tick::Go { control: true });
        stop_sender.send_replace(true);
        assert_eq!(house.tick(start + MS), Tick::Go { control: false });
        assert_eq!(house.tick(start + CONTROL_PERIOD), Tick::Stop);

        let (_stop, stop) = watch::channel(false);
        let mut house = Housekeeping::new(&plan, &state, None, None, &sender, stop, start);
        assert_eq!(house.tick(start + 1999 * MS), Tick::Go { control: true });
        assert_eq!(house.tick(start + 2000 * MS), Tick::Stop);
    }

    /// A worker's share of a workload whose one group draws from a
    /// `unique` feeder of `rows` rows.
    fn unique_feed(rows: &str) -> WorkerWorkload {
        use crate::workload::{GroupWork, StepWork, WorkloadSpec};
        use stampede_workload::{FeedData, FeedMode, Feeder};
        let data = FeedData::from_csv("ids", format!("id\n{rows}").as_bytes(), b',');
        let feeder = Feeder::new(data.expect("csv"), FeedMode::Unique);
        let spec = WorkloadSpec {
            steps: vec![StepWork::default()],
            groups: vec![GroupWork {
                steps: 0..1,
                feeders: vec![Arc::new(feeder)],
                ..GroupWork::default()
            }],
            ..WorkloadSpec::default()
        };
        WorkerWorkload::new(Arc::new(spec), 0, 0, 1, 1, None).expect("no script")
    }

    #[test]
    fn a_drained_unique_feeder_ends_the_worker_once_nothing_is_in_flight() {
        let start = Instant::now();
        let plan = plan(start, Duration::ZERO, None);
        let (sender, _messages) = mpsc::channel();
        let work = unique_feed("1\n");
        let feeder = &work.group().feeders[0];
        // (rows claimed, requests in flight, the tick, feed_exhausted said)
        let table = [
            (false, 0, Tick::Go { control: true }, false),
            (true, 1, Tick::Go { control: true }, false),
            (true, 0, Tick::Stop, true),
        ];
        for (claimed, in_flight, tick, exhausted) in table {
            if claimed {
                let _ = feeder.cursor(0, 1, 0, 1, 1).next_row();
            }
            let state = WorkerState::for_plan(&plan);
            for _ in 0..in_flight {
                state.begin_request();
            }
            let (_stop, stop) = watch::channel(false);
            let mut house =
                Housekeeping::new(&plan, &state, None, Some(&work), &sender, stop, start);
            assert_eq!(house.tick(start), tick, "claimed {claimed} {in_flight}");
            assert_eq!(state.is_feed_exhausted(), exhausted);
        }
    }

    #[test]
    fn an_aggregator_gone_stops_the_worker() {
        let start = Instant::now();
        let plan = plan(start, Duration::ZERO, None);
        let state = WorkerState::for_plan(&plan);
        let (sender, messages) = mpsc::channel();
        drop(messages);
        let (_stop, stop) = watch::channel(false);
        let mut house = Housekeeping::new(&plan, &state, None, None, &sender, stop, start);
        assert_eq!(house.tick(start + 100 * MS), Tick::Go { control: true });
        assert_eq!(house.tick(start + 250 * MS), Tick::Stop);
    }
}
