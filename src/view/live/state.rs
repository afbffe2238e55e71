//! What the live view shows, folded from the engine's snapshot stream: totals,
//! throughput per second, the last second's latency percentiles (from the
//! recent 500 ms slots), status codes, error classes, open
//! connections, and a WebSocket run's messages per second and round trip,
//! or streams' events per second and gaps. Plain data, updated on the aggregator thread and read by the
//! drawing thread; no terminal code here.

use stampede_engine::monitor::LiveProcess;
use stampede_metrics::{
    new_latency_histogram, ErrorKind, LatencyHistogram, Snapshot, StreamSummary,
};
use stampede_plan::{LoadModel, Plan, StopCondition};
use std::collections::VecDeque;
use std::time::Duration;

/// Workers hand over snapshots on a shared tick (the engine's 250 ms
/// `SNAPSHOT_INTERVAL`, or wrk's 100 ms), so grouping by a slot of elapsed
/// time that is a multiple of both puts the same number of snapshots of
/// each worker in each slot, and a slot's count covers its whole length.
const SLOT: Duration = Duration::from_millis(500);
/// Complete slots making up "the last second".
const RECENT_SLOTS: u64 = (1000 / SLOT.as_millis()) as u64;
/// Percentiles are recomputed at most this often (they scan the histogram).
const SUMMARY_EVERY: Duration = Duration::from_millis(200);

/// p50, p90, p99 and max of some latencies, in µs (None: no samples).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Percentiles {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

impl Percentiles {
    fn of(histogram: &LatencyHistogram) -> Option<Percentiles> {
        (!histogram.is_empty()).then(|| Percentiles {
            p50: histogram.value_at_quantile(0.5),
            p90: histogram.value_at_quantile(0.9),
            p99: histogram.value_at_quantile(0.99),
            max: histogram.max(),
        })
    }
}

/// One slot of the recent past, merged across workers.
#[derive(Debug)]
struct Slot {
    index: u64,
    latency: LatencyHistogram,
    completed: u64,
    /// WebSocket data messages written and read; streams' events.
    ws_sent: u64,
    ws_received: u64,
    events: u64,
}

/// A WebSocket run's live figures: messages each way per second over the
/// last complete second, and the round trip so far (the summary the
/// result's `websocket.rtt` is made by).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveWebSocket {
    pub sent_per_s: f64,
    pub received_per_s: f64,
    pub rtt: StreamSummary,
}

/// Streams' live figures: events per second over the last complete
/// second, and the gaps between events so far (as `stream.gap`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveStreams {
    pub events_per_s: f64,
    pub gap: StreamSummary,
}

/// Everything the live view draws.
#[derive(Debug)]
pub struct LiveState {
    /// `GET http://… · 50 connections · 4 threads`
    pub title: String,
    pub planned: Option<Duration>,
    /// `-n`: the requests to send in total.
    pub request_budget: Option<u64>,
    pub elapsed: Duration,
    pub sent: u64,
    pub completed: u64,
    pub success: u64,
    pub failed_status: u64,
    pub errors: u64,
    pub status: Vec<(u16, u64)>,
    pub error_classes: Vec<(&'static str, u64)>,
    /// Completed responses in each whole second of measurement.
    pub per_second: Vec<u64>,
    /// Completed responses per second over the last complete second.
    pub current_rps: f64,
    pub recent: Option<Percentiles>,
    pub overall: Option<Percentiles>,
    pub open_connections: u64,
    pub in_flight: u64,
    /// A WebSocket run's messages per second and round trip.
    pub websocket: Option<LiveWebSocket>,
    /// Streams' events per second and gaps (`--sse`).
    pub streams: Option<LiveStreams>,
    /// Set once the user asked to stop.
    pub stopping: bool,
    /// Lines above the view: which step of a sweep or round of a repeat is
    /// running, and the steps already finished.
    pub banner: Vec<String>,
    /// The monitored processes' latest CPU and RSS (server and client).
    pub processes: Vec<LiveProcess>,
    slots: VecDeque<Slot>,
    /// Each worker's latest open connections and requests in flight: levels,
    /// so never summed over a slot that holds several snapshots of a worker.
    workers: Vec<(u64, u64)>,
    last_summary: Option<Duration>,
}

impl LiveState {
    /// The state of a run of `plan`, before any snapshot.
    pub fn for_plan(plan: &Plan) -> LiveState {
        let (planned, request_budget) = match plan.stop {
            StopCondition::Duration(d) => (Some(d), None),
            StopCondition::Requests { count, limit } => (limit, Some(count)),
        };
        // "1 thread", "2 threads": the title is read at a glance.
        let count = |n: usize, what: &str| match n {
            1 => format!("1 {what}"),
            n => format!("{n} {what}s"),
        };
        let load = match &plan.model {
            LoadModel::Rate { per_s, .. } => format!(
                "{} req/s on at most {}",
                per_s.peak(),
                count(plan.connections(), "connection")
            ),
            LoadModel::Closed { .. } => count(plan.connections(), "connection"),
        };
        let title = format!(
            "{} {} · {load} · {}",
            plan.request.method,
            plan.target.url,
            count(plan.threads, "thread")
        );
        LiveState::new(title, planned, request_budget)
    }

    pub fn new(title: String, planned: Option<Duration>, request_budget: Option<u64>) -> LiveState {
        LiveState {
            title,
            planned,
            request_budget,
            elapsed: Duration::ZERO,
            sent: 0,
            completed: 0,
            success: 0,
            failed_status: 0,
            errors: 0,
            status: Vec::new(),
            error_classes: Vec::new(),
            per_second: Vec::new(),
            current_rps: 0.0,
            recent: None,
            overall: None,
            open_connections: 0,
            in_flight: 0,
            websocket: None,
            streams: None,
            stopping: false,
            banner: Vec::new(),
            processes: Vec::new(),
            slots: VecDeque::new(),
            workers: Vec::new(),
            last_summary: None,
        }
    }

    /// Mean completed responses per second so far.
    pub fn average_rps(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.completed as f64 / seconds
        } else {
            0.0
        }
    }

    /// Share of the run done, 0..=1, when the run has a known end.
    pub fn progress(&self) -> Option<f64> {
        if let Some(budget) = self.request_budget.filter(|b| *b > 0) {
            let by_count = self.sent as f64 / budget as f64;
            let by_time = self
                .planned
                .map_or(0.0, |p| self.elapsed.as_secs_f64() / p.as_secs_f64());
            return Some(by_count.max(by_time).min(1.0));
        }
        let planned = self.planned?.as_secs_f64();
        Some((self.elapsed.as_secs_f64() / planned.max(1e-9)).min(1.0))
    }

    /// Notes one worker's gauges from its latest interval.
    pub fn update_worker(&mut self, worker: usize, interval: &Snapshot) {
        if self.workers.len() <= worker {
            self.workers.resize(worker + 1, (0, 0));
        }
        let gauges = &interval.gauges;
        self.workers[worker] = (gauges.open_connections, gauges.in_flight);
    }

    /// Folds in one worker snapshot (`interval`) and the totals so far.
    pub fn update(&mut self, elapsed: Duration, interval: &Snapshot, total: &Snapshot) {
        self.elapsed = self.elapsed.max(elapsed);
        self.add_to_slot(elapsed, interval);
        let second = elapsed.as_secs() as usize;
        if self.per_second.len() <= second {
            self.per_second.resize(second + 1, 0);
        }
        self.per_second[second] += interval.counters.completed();
        let c = &total.counters;
        self.sent = c.sent;
        self.completed = c.completed();
        self.success = c.success;
        self.failed_status = c.failed_status;
        self.errors = c.error_total();
        // Cheap (a fixed array each), so kept in step with the counts above.
        self.status = c.status.iter().collect();
        self.error_classes = ErrorKind::ALL
            .into_iter()
            .map(|kind| (kind.as_str(), c.error(kind)))
            .filter(|(_, n)| *n > 0)
            .collect();
        let due = self
            .last_summary
            .is_none_or(|last| elapsed >= last + SUMMARY_EVERY);
        if due {
            self.last_summary = Some(elapsed);
            self.summarize(total);
        }
    }

    fn add_to_slot(&mut self, elapsed: Duration, interval: &Snapshot) {
        let index = (elapsed.as_millis() / SLOT.as_millis()) as u64;
        let newest = self.slots.back().map_or(0, |s| s.index);
        if self.slots.is_empty() || index > newest {
            self.slots.push_back(Slot {
                index,
                latency: new_latency_histogram(),
                completed: 0,
                ws_sent: 0,
                ws_received: 0,
                events: 0,
            });
            while self.slots.len() as u64 > RECENT_SLOTS + 1 {
                self.slots.pop_front();
            }
        }
        // A snapshot late for its slot joins the newest one.
        let slot = self
            .slots
            .back_mut()
            .expect("a slot was pushed above when there was none");
        if !interval.latency.is_empty() {
            slot.latency
                .add(&interval.latency)
                .expect("histograms share fixed bounds, so adding cannot fail");
        }
        slot.completed += interval.counters.completed();
        if let Some(ws) = &interval.websocket {
            slot.ws_sent += ws.messages_sent;
            slot.ws_received += ws.messages_received;
        }
        if let Some(stream) = &interval.stream {
            slot.events += stream.events;
        }
    }

    fn summarize(&mut self, total: &Snapshot) {
        self.overall = Percentiles::of(&total.latency);
        // The newest slot is still filling: read the complete ones before it.
        let complete: Vec<&Slot> = self.slots.iter().rev().skip(1).collect();
        self.open_connections = self.workers.iter().map(|w| w.0).sum();
        self.in_flight = self.workers.iter().map(|w| w.1).sum();
        if complete.is_empty() {
            return;
        }
        let mut recent = new_latency_histogram();
        let mut completed = 0;
        for slot in &complete {
            if !slot.latency.is_empty() {
                recent
                    .add(&slot.latency)
                    .expect("histograms share fixed bounds, so adding cannot fail");
            }
            completed += slot.completed;
        }
        self.recent = Percentiles::of(&recent);
        let span = complete.len() as f64 * SLOT.as_secs_f64();
        self.current_rps = completed as f64 / span;
        let recent_sum = |pick: fn(&Slot) -> u64| complete.iter().map(|s| pick(s)).sum::<u64>();
        self.websocket = total.websocket.as_deref().map(|ws| LiveWebSocket {
            sent_per_s: recent_sum(|s| s.ws_sent) as f64 / span,
            received_per_s: recent_sum(|s| s.ws_received) as f64 / span,
            rtt: StreamSummary::of(&ws.rtt),
        });
        self.streams = total.stream.as_deref().map(|stream| LiveStreams {
            events_per_s: recent_sum(|s| s.events) as f64 / span,
            gap: StreamSummary::of(&stream.gap),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(completed: u64, latency_us: u64, open: u64) -> Snapshot {
        let mut s = Snapshot::default();
        s.counters.success = completed;
        s.counters.sent = completed;
        s.latency.record_n(latency_us, completed).unwrap();
        s.gauges.open_connections = open;
        s
    }

    #[test]
    fn folds_slots_into_last_second_figures() {
        let mut state = LiveState::new("test".into(), Some(Duration::from_secs(10)), None);
        let mut total = Snapshot::default();
        // Two workers, eight 250 ms ticks: 100 responses each per tick.
        for tick in 1..=8u64 {
            for worker in 0..2 {
                let latency = if tick <= 4 { 1000 } else { 5000 };
                let interval = snapshot(100, latency, 10 + worker);
                total.merge(&interval);
                state.update_worker(worker as usize, &interval);
                let at = Duration::from_millis(250 * tick + 1);
                state.last_summary = None;
                state.update(at, &interval, &total);
            }
        }
        assert_eq!(state.completed, 1600);
        assert_eq!(state.open_connections, 21, "the gauges of both workers");
        assert!(
            (state.current_rps - 800.0).abs() < 1e-9,
            "{}",
            state.current_rps
        );
        let recent = state.recent.unwrap();
        assert!(
            recent.p50 > 4000,
            "the last second saw only 5 ms: {recent:?}"
        );
        assert!(state.overall.unwrap().p50 < 1100);
        assert!((state.progress().unwrap() - 0.2).abs() < 0.01);
        assert_eq!(state.per_second.iter().sum::<u64>(), 1600);
        assert_eq!(state.status, vec![]);
    }

    #[test]
    fn websocket_and_stream_figures_are_rates_of_the_last_second_and_summaries_so_far() {
        let mut state = LiveState::new("test".into(), Some(Duration::from_secs(10)), None);
        let mut total = Snapshot::default();
        assert!(state.websocket.is_none() && state.streams.is_none());
        // One worker, eight 250 ms ticks: 50 messages each way and 20
        // events a tick, round trips of 3 ms.
        for tick in 1..=8u64 {
            let mut interval = snapshot(50, 3000, 1);
            let ws = interval.websocket.get_or_insert_with(Default::default);
            ws.messages_sent = 50;
            ws.messages_received = 50;
            for _ in 0..50 {
                ws.record_rtt(Duration::from_millis(3));
            }
            let stream = interval.stream.get_or_insert_with(Default::default);
            stream.record(&stampede_metrics::StreamFigures {
                first_byte: None,
                first_event: None,
                gaps_us: &[40_000; 20],
                events: 20,
                length: Duration::from_secs(1),
                reconnects: 0,
                errors: 0,
            });
            total.merge(&interval);
            state.last_summary = None;
            state.update(Duration::from_millis(250 * tick + 1), &interval, &total);
        }
        let ws = state.websocket.expect("a WebSocket run");
        assert!((ws.sent_per_s - 200.0).abs() < 1e-9, "{ws:?}");
        assert!((ws.received_per_s - 200.0).abs() < 1e-9, "{ws:?}");
        let books = total.websocket.as_deref().unwrap();
        assert_eq!(ws.rtt, StreamSummary::of(&books.rtt));
        assert_eq!(ws.rtt.count, 400);
        let streams = state.streams.expect("streams watched");
        assert!((streams.events_per_s - 80.0).abs() < 1e-9, "{streams:?}");
        assert!(streams.gap.p99_us.abs_diff(40_000) < 100, "{streams:?}");
    }

    #[test]
    fn gauges_count_each_worker_once_at_any_snapshot_interval() {
        let mut state = LiveState::new("test".into(), Some(Duration::from_secs(10)), None);
        let mut total = Snapshot::default();
        // Two workers every 100 ms: a slot holds five snapshots of each;
        // the gauges are levels, not sums over time.
        for tick in 1..=16u64 {
            for worker in 0..2 {
                let interval = snapshot(10, 1000, 5);
                total.merge(&interval);
                state.update_worker(worker, &interval);
                state.last_summary = None;
                state.update(Duration::from_millis(100 * tick + 1), &interval, &total);
            }
        }
        assert_eq!(state.open_connections, 10, "5 per worker");
        assert!(
            (state.current_rps - 200.0).abs() < 1e-9,
            "{}",
            state.current_rps
        );
    }
}
