//! The open model's arithmetic, free of I/O and clocks: which instants a
//! worker's requests are intended at ([`Pacer`]), and the rule that drops
//! the warm-up's instants once measurement has begun ([`is_stale`], applied
//! to the pacer's own instants and to a [`Backlog`]). Every caller passes
//! `now` in; the tokio pacer (open.rs, and HTTP/2's and HTTP/3's open model
//! through it) and the reactors (reactor/) both drive their dispatch from
//! here, so every path sends the same instants and wakes by one rule
//! ([`Pacer::wake_for`], `--pace-window`).

use crate::plan::worker_plan::OpenLoad;
use stampede_plan::{Arrival, Schedule};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// True for a warm-up instant (before `measure_start`) seen once
/// measurement has begun: it is not measured, and sent now it would make
/// the window's own requests wait behind it, so it is dropped.
pub(crate) fn is_stale(intended: Instant, measure_start: Instant, now: Instant) -> bool {
    intended < measure_start && now >= measure_start
}

/// A small xorshift generator: Poisson gaps need speed and independence per
/// worker, not cryptographic quality.
#[derive(Debug)]
struct Gaps {
    state: u64,
}

impl Gaps {
    fn uniform01(&mut self) -> f64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        // 53 random bits into (0, 1].
        ((self.state >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// An exponentially distributed gap with mean 1.
    fn exponential(&mut self) -> f64 {
        -self.uniform01().ln()
    }
}

/// The intended instants of one worker. The run's instants are where the
/// area under its rate (see [`Schedule::time_of`]) reaches 0, 1, 2, …; in
/// [0, d) there are exactly ⌈area up to d⌉ of them (`-r 100 -d 1s`: 100).
/// With uniform arrival, worker `w` of `W` takes numbers w, w + W, w + 2W…,
/// so the workers' shares differ by at most one and add up to the run's
/// exactly (nothing is rounded up per worker), and the workers' sends
/// interleave instead of coinciding. With Poisson arrival each worker is a
/// Poisson process of a W-th of the rate (the time-change method: unit
/// exponential gaps in area), independent of the others; together they are
/// a Poisson process of the whole rate.
#[derive(Debug)]
pub(crate) struct Pacer {
    arrival: Arrival,
    gaps: Gaps,
    offset: u64,
    stride: u64,
    /// Instants taken in the current phase.
    taken: u64,
    /// Poisson: the area reached in the current phase.
    area: f64,
    /// Warm-up (its origin and rate) until `measure_start`, then measurement.
    warmup: Option<(Instant, Schedule)>,
    per_s: Schedule,
    measure_start: Instant,
    /// No instant at or after this (the run's deadline).
    end: Option<Instant>,
    /// No more than this many measured instants (a group's `total_iterations`).
    count: Option<u64>,
    /// The next instant, computed but not yet taken.
    peeked: Option<Option<Instant>>,
    /// `--pace-window`: see [`Pacer::wake_for`].
    window: Duration,
}

impl Pacer {
    /// The pacer of a worker starting at `now` (warm-up runs from `now` to
    /// `measure_start`, measurement from `measure_start` to `end`).
    pub(crate) fn new(
        load: &OpenLoad,
        now: Instant,
        measure_start: Instant,
        end: Option<Instant>,
    ) -> Self {
        // Listed offsets are the run's own: no warm-up draws from them.
        let listed = matches!(load.arrival, Arrival::Listed(_));
        let warmup = (now < measure_start && !listed).then(|| {
            let rate = Schedule {
                start: load.warmup_rate,
                stages: Vec::new(),
            };
            (now, rate)
        });
        Pacer {
            arrival: load.arrival.clone(),
            gaps: Gaps {
                state: load.seed | 1,
            },
            offset: load.worker as u64,
            stride: load.workers.max(1) as u64,
            taken: 0,
            area: 0.0,
            warmup,
            per_s: load.per_s.clone(),
            measure_start,
            end,
            count: load.count,
            peeked: None,
            window: load.pace_window,
        }
    }

    /// The offset of this worker's next instant in the current phase, from
    /// the phase's origin, by its `rate`: where the area under the rate
    /// reaches the instant's number (uniform), a random area (Poisson), or
    /// the listed offset of that number. One match per instant, whatever
    /// the arrival. `None`: the rate never gets there, or the list is done.
    fn next_offset(
        arrival: &Arrival,
        gaps: &mut Gaps,
        area: &mut f64,
        (offset, taken, stride): (u64, u64, u64),
        rate: &Schedule,
    ) -> Option<std::time::Duration> {
        // The run's number of this worker's next instant.
        let number = || offset + taken * stride;
        match arrival {
            Arrival::Uniform => rate.time_of(number() as f64),
            Arrival::Poisson => {
                *area += stride as f64 * gaps.exponential();
                rate.time_of(*area)
            }
            Arrival::Listed(offsets) => usize::try_from(number())
                .ok()
                .and_then(|n| offsets.get(n).copied()),
        }
    }

    fn compute(&mut self) -> Option<Instant> {
        loop {
            let number = (self.offset, self.taken, self.stride);
            if let Some((origin, rate)) = &self.warmup {
                let next =
                    Self::next_offset(&self.arrival, &mut self.gaps, &mut self.area, number, rate);
                match next.map(|t| *origin + t) {
                    Some(at) if at < self.measure_start => {
                        self.taken += 1;
                        return Some(at);
                    }
                    _ => {
                        // Measurement starts its own count from its start.
                        self.warmup = None;
                        self.taken = 0;
                        self.area = 0.0;
                        continue;
                    }
                }
            }
            if self.counted_out() {
                return None;
            }
            let since = Self::next_offset(
                &self.arrival,
                &mut self.gaps,
                &mut self.area,
                number,
                &self.per_s,
            )?;
            let at = self.measure_start + since;
            if self.end.is_some_and(|end| at >= end) {
                return None;
            }
            self.taken += 1;
            return Some(at);
        }
    }

    /// True once the count's instants are all taken: the worker's load is
    /// over, whatever its deadline.
    pub(crate) fn counted_out(&self) -> bool {
        self.warmup.is_none() && self.count.is_some_and(|count| self.taken >= count)
    }

    /// The next intended instant, without taking it; `None` when there is
    /// none before the end.
    pub(crate) fn peek(&mut self) -> Option<Instant> {
        if let Some(next) = self.peeked {
            return next;
        }
        let next = self.compute();
        self.peeked = Some(next);
        next
    }

    /// Takes the next intended instant (`None`: there is none before the end).
    pub(crate) fn next_instant(&mut self) -> Option<Instant> {
        let next = self.peek();
        if next.is_some() {
            self.peeked = None;
        }
        next
    }

    /// When the worker wakes to send the request intended at `intended`:
    /// one window later, so that the wake sends every request intended up
    /// to then (each at most a window late, none early: [`Pacer::next_due`]
    /// takes those at or before the wake). Latency still counts from each
    /// intended instant, so the window shows in it rather than hiding. A
    /// window that would reach the end of the run is not waited out: the
    /// worker stops at its deadline, and the requests intended before it
    /// must leave before it. Window 0: the wake is the intended instant.
    pub(crate) fn wake_for(&self, intended: Instant) -> Instant {
        let wake = intended + self.window;
        match self.end {
            Some(end) if wake + self.window >= end => intended,
            _ => wake,
        }
    }

    /// When the worker must wake for its next request ([`Pacer::wake_for`]
    /// of the next intended instant); `None` when there is none left.
    pub(crate) fn wake_at(&mut self) -> Option<Instant> {
        let next = self.peek()?;
        Some(self.wake_for(next))
    }

    /// Takes the next instant that is due at `now`, skipping the warm-up's
    /// instants that measurement has overtaken ([`is_stale`]); `None` when
    /// the next one lies in the future or there is none left.
    pub(crate) fn next_due(&mut self, now: Instant) -> Option<Instant> {
        loop {
            let next = self.peek()?;
            if next > now {
                return None;
            }
            self.peeked = None;
            if !is_stale(next, self.measure_start, now) {
                return Some(next);
            }
        }
    }
}

/// Intended instants waiting for a free connection, oldest first.
#[derive(Debug)]
pub(crate) struct Backlog {
    queue: VecDeque<Instant>,
    measure_start: Instant,
}

impl Backlog {
    pub(crate) fn new(measure_start: Instant) -> Backlog {
        Backlog {
            queue: VecDeque::new(),
            measure_start,
        }
    }

    pub(crate) fn push(&mut self, intended: Instant) {
        self.queue.push_back(intended);
    }

    /// Queues `intended` first: a job taken and given back, older than
    /// those queued since.
    pub(crate) fn push_front(&mut self, intended: Instant) {
        self.queue.push_front(intended);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The oldest queued instant; the warm-up's, once measurement has
    /// begun, are dropped ([`is_stale`]).
    pub(crate) fn pop(&mut self, now: Instant) -> Option<Instant> {
        let measure_start = self.measure_start;
        if self
            .queue
            .front()
            .is_some_and(|t| is_stale(*t, measure_start, now))
        {
            self.queue.retain(|t| !is_stale(*t, measure_start, now));
        }
        self.queue.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_plan::Stage;
    use std::time::Duration;

    fn load(per_s: Schedule, arrival: Arrival, worker: usize, workers: usize) -> OpenLoad {
        OpenLoad {
            per_s,
            warmup_rate: 0.0,
            max_connections: 1,
            arrival,
            seed: 42,
            worker,
            workers,
            count: None,
            pace_window: Duration::ZERO,
            batch_reads: false,
        }
    }

    fn taken(load: &OpenLoad, start: Instant, end: Instant) -> Vec<Instant> {
        let mut pacer = Pacer::new(load, start, start, Some(end));
        std::iter::from_fn(|| pacer.next_instant()).collect()
    }

    fn offsets(instants: &[Instant], start: Instant) -> Vec<Duration> {
        instants.iter().map(|t| *t - start).collect()
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_count_takes_the_runs_first_instants_shared_by_the_workers() {
        let start = Instant::now();
        let end = start + Duration::from_secs(100);
        let per_s = Schedule::constant(16.667, Duration::from_secs(100));
        let all = taken(&load(per_s.clone(), Arrival::Uniform, 0, 1), start, end);
        let mut shared: Vec<Instant> = (0..3)
            .flat_map(|worker| {
                let mut counted = load(per_s.clone(), Arrival::Uniform, worker, 3);
                counted.count = Some(stampede_plan::share_of(40, worker, 3));
                let mut pacer = Pacer::new(&counted, start, start, Some(end));
                let instants: Vec<Instant> = std::iter::from_fn(|| pacer.next_instant()).collect();
                assert!(pacer.counted_out(), "worker {worker}");
                instants
            })
            .collect();
        shared.sort_unstable();
        // 40 iterations at 16.667/s, not 3 s of them (50).
        assert_eq!(shared, all[..40]);
    }

    #[test]
    fn listed_offsets_are_split_among_the_workers_exactly() {
        // A replayed log: repeated and uneven offsets, 10 lines.
        let ms = |n: u64| Duration::from_millis(n);
        let listed: Vec<Duration> = [0, 0, 5, 40, 40, 41, 500, 900, 900, 1000]
            .into_iter()
            .map(ms)
            .collect();
        let start = Instant::now();
        for workers in [1, 3, 4, 12] {
            let mut all = Vec::new();
            for worker in 0..workers {
                let mut mine = load(
                    Schedule::constant(10.0, Duration::from_secs(1)),
                    Arrival::Listed(listed.clone().into()),
                    worker,
                    workers,
                );
                mine.warmup_rate = 100.0;
                // A warm-up asked for is not drawn from the list.
                let mut pacer = Pacer::new(&mine, start - Duration::from_secs(1), start, None);
                let got: Vec<Instant> = std::iter::from_fn(|| pacer.next_instant()).collect();
                let expected: Vec<Instant> = listed
                    .iter()
                    .skip(worker)
                    .step_by(workers)
                    .map(|d| start + *d)
                    .collect();
                assert_eq!(got, expected, "worker {worker} of {workers}");
                assert_eq!(
                    got.len() as u64,
                    stampede_plan::share_of(10, worker, workers),
                    "the worker's budget of a 10-request run"
                );
                all.extend(got);
            }
            all.sort();
            assert_eq!(
                offsets(&all, start),
                listed,
                "{workers} workers: each offset once"
            );
        }
    }

    #[test]
    fn constant_rates_give_evenly_spaced_instants() {
        // (rate, duration, count, gap): vegeta's ConstantPacer table, in instants.
        let table = [
            (1.0, Duration::from_secs(1), 1, Duration::from_secs(1)),
            (10.0, Duration::from_secs(1), 10, 100 * MS),
            (1000.0, Duration::from_secs(1), 1000, MS),
            (2.0, Duration::from_secs(5), 10, 500 * MS),
            (
                20_000.0,
                Duration::from_millis(100),
                2000,
                Duration::from_micros(50),
            ),
            (0.5, Duration::from_secs(4), 2, Duration::from_secs(2)),
            // ⌈area⌉: 2.5 requests' worth of time holds three instants.
            (10.0, Duration::from_millis(250), 3, 100 * MS),
        ];
        let start = Instant::now();
        for (rate, length, count, gap) in table {
            let mine = taken(
                &load(Schedule::constant(rate, length), Arrival::Uniform, 0, 1),
                start,
                start + length,
            );
            assert_eq!(mine.len(), count, "{rate}/s over {length:?}");
            assert_eq!(mine[0], start, "{rate}/s starts at once");
            for pair in mine.windows(2) {
                let between = pair[1] - pair[0];
                let off = between.abs_diff(gap);
                assert!(off <= Duration::from_nanos(2), "{rate}/s: gap {between:?}");
            }
        }
    }

    #[test]
    fn a_ramp_spaces_its_instants_by_the_rate_at_the_time() {
        // 0 → 100/s over 2 s: area t²·25, so instant k lies at √(k/25) s.
        let start = Instant::now();
        let ramp = Schedule {
            start: 0.0,
            stages: vec![Stage {
                duration: Duration::from_secs(2),
                target: 100.0,
            }],
        };
        let all = taken(
            &load(ramp, Arrival::Uniform, 0, 1),
            start,
            start + Duration::from_secs(2),
        );
        assert_eq!(all.len(), 100, "the area of the ramp");
        for (k, at) in offsets(&all, start).into_iter().enumerate() {
            let expected = (k as f64 / 25.0).sqrt();
            assert!(
                (at.as_secs_f64() - expected).abs() < 1e-6,
                "instant {k}: {at:?}"
            );
        }
    }

    #[test]
    fn stages_follow_one_another() {
        // 10/s for 1 s, then 10 → 30/s over 1 s (area 20), then 30/s held 1 s.
        let start = Instant::now();
        let stages = Schedule {
            start: 10.0,
            stages: vec![
                Stage {
                    duration: Duration::from_secs(1),
                    target: 10.0,
                },
                Stage {
                    duration: Duration::from_secs(1),
                    target: 30.0,
                },
                Stage {
                    duration: Duration::from_secs(1),
                    target: 30.0,
                },
            ],
        };
        let all = taken(
            &load(stages, Arrival::Uniform, 0, 1),
            start,
            start + Duration::from_secs(3),
        );
        let in_second = |s: u64| all.iter().filter(|t| (**t - start).as_secs() == s).count();
        assert_eq!((in_second(0), in_second(1), in_second(2)), (10, 20, 30));
    }

    #[test]
    fn workers_share_the_instants_exactly() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        for (rate, workers) in [(100.0, 1), (100.0, 2), (101.0, 2), (100.0, 3), (7.0, 3)] {
            let schedule = Schedule::constant(rate, second);
            let mut all = Vec::new();
            for worker in 0..workers {
                let mine = taken(
                    &load(schedule.clone(), Arrival::Uniform, worker, workers),
                    start,
                    start + second,
                );
                let expected = stampede_plan::share_of(rate as u64, worker, workers);
                assert_eq!(
                    mine.len() as u64,
                    expected,
                    "{rate}/s, worker {worker} of {workers}"
                );
                all.extend(mine);
            }
            all.sort();
            all.dedup();
            assert_eq!(
                all.len(),
                rate as usize,
                "{rate}/s over {workers}: no instant twice"
            );
        }
    }

    #[test]
    fn warmup_instants_stop_at_the_start_of_measurement() {
        let start = Instant::now();
        let measure = start + Duration::from_millis(500);
        let mut plan = load(
            Schedule::constant(10.0, Duration::from_secs(1)),
            Arrival::Uniform,
            0,
            1,
        );
        plan.warmup_rate = 10.0;
        let mut pacer = Pacer::new(
            &plan,
            start,
            measure,
            Some(measure + Duration::from_secs(1)),
        );
        let all: Vec<Instant> = std::iter::from_fn(|| pacer.next_instant()).collect();
        assert_eq!(all.iter().filter(|t| **t < measure).count(), 5);
        assert_eq!(all.iter().filter(|t| **t >= measure).count(), 10);
        assert_eq!(all[5], measure, "measurement starts on its first instant");
    }

    #[test]
    fn due_instants_come_in_a_batch_and_stale_warmup_ones_are_skipped() {
        let start = Instant::now();
        let measure = start + Duration::from_millis(500);
        let mut plan = load(
            Schedule::constant(100.0, Duration::from_secs(1)),
            Arrival::Uniform,
            0,
            1,
        );
        plan.warmup_rate = 100.0;
        let mut pacer = Pacer::new(
            &plan,
            start,
            measure,
            Some(measure + Duration::from_secs(1)),
        );
        let due = |pacer: &mut Pacer, now| std::iter::from_fn(|| pacer.next_due(now)).count();
        // 10 ms in: the instants at 0, 10 ms are due (≤ now), the next is not.
        assert_eq!(due(&mut pacer, start + 10 * MS), 2);
        assert_eq!(pacer.peek(), Some(start + 20 * MS));
        // Woken late, 25 ms into measurement: the warm-up's remaining 48
        // instants are dropped, the window's at 0, 10, 20 ms are due.
        let late = measure + 25 * MS;
        let batch: Vec<Instant> = std::iter::from_fn(|| pacer.next_due(late)).collect();
        assert_eq!(batch, vec![measure, measure + 10 * MS, measure + 20 * MS]);
        assert_eq!(pacer.peek(), Some(measure + 30 * MS));
        // After the end there is nothing, due or not.
        let after = measure + Duration::from_secs(2);
        assert_eq!(due(&mut pacer, after), 97, "the rest of the window");
        assert_eq!(pacer.next_due(after), None);
        assert_eq!(pacer.peek(), None);
    }

    /// A worker's wakes as the drivers make them: sleep until
    /// [`Pacer::wake_at`], then send every instant [`Pacer::next_due`]
    /// gives at that wake. Each wake with its batch of intended instants.
    fn wakes(pacer: &mut Pacer) -> Vec<(Instant, Vec<Instant>)> {
        std::iter::from_fn(|| {
            let wake = pacer.wake_at()?;
            let batch: Vec<Instant> = std::iter::from_fn(|| pacer.next_due(wake)).collect();
            Some((wake, batch))
        })
        .collect()
    }

    /// A pacer of `rate`/s for `length` from `start`, with `window`.
    fn windowed(rate: f64, length: Duration, window: Duration, start: Instant) -> Pacer {
        let mut plan = load(Schedule::constant(rate, length), Arrival::Uniform, 0, 1);
        plan.pace_window = window;
        Pacer::new(&plan, start, start, Some(start + length))
    }

    #[test]
    fn a_window_batches_the_instants_inside_it_and_none_outside() {
        // 20,000/s: an instant every 50 µs; a window of 200 µs.
        let start = Instant::now();
        let us = Duration::from_micros;
        let mut pacer = windowed(20_000.0, 100 * MS, us(200), start);
        let all = wakes(&mut pacer);
        // The first wake is one window after the first instant and sends
        // the five intended in [0, 200 µs]; the next is 200 µs after 250 µs.
        assert_eq!(all[0].0, start + us(200));
        let first: Vec<Duration> = offsets(&all[0].1, start);
        assert_eq!(first, [0, 50, 100, 150, 200].map(us));
        assert_eq!(all[1].0, start + us(450));
        assert_eq!(offsets(&all[1].1, start), [250, 300, 350, 400, 450].map(us));
        for (wake, batch) in &all {
            let (oldest, newest) = (batch[0], batch[batch.len() - 1]);
            // Inside: every instant of the batch is at most a window before
            // its wake and none after it (never sent early).
            assert!(*wake - oldest <= us(200) && newest <= *wake, "{batch:?}");
        }
        for pair in all.windows(2) {
            // Outside: the next batch's instants were all still to come.
            assert!(pair[1].1[0] > pair[0].0, "an instant after its wake");
        }
        // 2,000 requests in 400 wakes, not 2,000; the last 400 µs before
        // the end is not waited out (see the end test below).
        let sent: usize = all.iter().map(|(_, batch)| batch.len()).sum();
        assert_eq!(sent, 2000);
        assert!(all.len() < 410, "{} wakes", all.len());
    }

    #[test]
    fn window_zero_wakes_at_every_intended_instant() {
        let start = Instant::now();
        let mut pacer = windowed(20_000.0, 100 * MS, Duration::ZERO, start);
        let all = wakes(&mut pacer);
        assert_eq!(all.len(), 2000, "one wake per request");
        for (wake, batch) in &all {
            assert_eq!(batch, &vec![*wake], "each sent at its own instant");
        }
    }

    #[test]
    fn a_window_leaves_the_intended_instants_unchanged() {
        let start = Instant::now();
        let length = Duration::from_secs(1);
        let exact: Vec<Instant> = wakes(&mut windowed(1234.5, length, Duration::ZERO, start))
            .into_iter()
            .flat_map(|(_, batch)| batch)
            .collect();
        assert_eq!(exact.len(), 1235);
        for window in [50, 200, 1000, 20_000].map(Duration::from_micros) {
            let batched: Vec<Instant> = wakes(&mut windowed(1234.5, length, window, start))
                .into_iter()
                .flat_map(|(_, batch)| batch)
                .collect();
            assert_eq!(batched, exact, "window {window:?}");
        }
    }

    #[test]
    fn the_window_is_not_waited_out_past_the_end_of_the_run() {
        // The worker stops at its deadline: an instant whose window (and
        // the next) would reach it is sent at once.
        let start = Instant::now();
        let end = start + 10 * MS;
        let pacer = windowed(1000.0, 10 * MS, MS, start);
        assert_eq!(pacer.wake_for(start + 7 * MS), start + 8 * MS);
        assert_eq!(pacer.wake_for(start + 8 * MS), start + 8 * MS);
        assert_eq!(pacer.wake_for(start + 9 * MS), start + 9 * MS);
        let mut pacer = windowed(1000.0, 10 * MS, MS, start);
        let last = wakes(&mut pacer).pop().expect("a wake");
        assert!(last.0 < end, "the last wake is before the end");
    }

    /// The generator is Marsaglia's xorshift64 (shifts 13, 7, 17): from his
    /// seed 88172645463325252 the first states are these (computed by an
    /// independent Python implementation). Another shift direction is
    /// still random enough for the gap tests below; this pins it.
    #[test]
    fn gaps_come_from_xorshift64() {
        let mut gaps = Gaps {
            state: 88_172_645_463_325_252,
        };
        let states: Vec<u64> = (0..3)
            .map(|_| {
                gaps.uniform01();
                gaps.state
            })
            .collect();
        assert_eq!(
            states,
            [
                8_748_534_153_485_358_512,
                3_040_900_993_826_735_515,
                3_453_997_556_048_239_312
            ]
        );
    }

    /// uniform01 is in (0, 1]: never 0, whose logarithm would make an
    /// infinite gap. The state before 5 (xorshift64 inverted in Python)
    /// gives the smallest value, 2^-53.
    #[test]
    fn uniform_draws_are_above_zero_and_at_most_one() {
        let mut smallest = Gaps {
            state: 5_186_526_723_850_690_427,
        };
        assert_eq!(smallest.uniform01(), 1.0 / (1u64 << 53) as f64);
        assert_eq!(smallest.state, 5);
        let mut gaps = Gaps { state: 1 };
        for _ in 0..10_000 {
            let u = gaps.uniform01();
            assert!(u > 0.0 && u <= 1.0, "{u}");
        }
    }

    /// The gaps between sorted instants, in seconds.
    fn gaps(instants: &[Instant]) -> Vec<f64> {
        let mut sorted = instants.to_vec();
        sorted.sort();
        sorted
            .windows(2)
            .map(|w| (w[1] - w[0]).as_secs_f64())
            .collect()
    }

    /// The gaps' mean, coefficient of variation (1 for exponential gaps, 0
    /// for even ones) and Kolmogorov–Smirnov distance from the exponential
    /// distribution of that mean.
    fn gap_shape(gaps: &[f64]) -> (f64, f64, f64) {
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let variance = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let mut sorted = gaps.to_vec();
        sorted.sort_by(f64::total_cmp);
        let ks = sorted
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let cdf = 1.0 - (-g / mean).exp();
                (cdf - i as f64 / n).abs().max((i as f64 + 1.0) / n - cdf)
            })
            .fold(0.0, f64::max);
        (mean, variance.sqrt() / mean, ks)
    }

    /// Worker `worker`'s load with its own seed, as the engine derives them
    /// (workers with one seed would send at the same instants).
    fn poisson_worker(schedule: &Schedule, worker: usize, workers: usize) -> OpenLoad {
        OpenLoad {
            seed: 42 ^ 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(worker as u64 + 1),
            ..load(schedule.clone(), Arrival::Poisson, worker, workers)
        }
    }

    #[test]
    fn poisson_instants_have_the_right_mean_and_exponential_gaps() {
        let start = Instant::now();
        let end = start + Duration::from_secs(100);
        let schedule = Schedule::constant(1000.0, Duration::from_secs(100));
        let mine: Vec<Vec<Instant>> = (0..2)
            .map(|worker| taken(&poisson_worker(&schedule, worker, 2), start, end))
            .collect();
        let count: usize = mine.iter().map(Vec::len).sum();
        let expected = 100_000.0;
        assert!((count as f64 - expected).abs() < 0.01 * expected, "{count}");
        // Each worker is a Poisson process of half the rate, and the two
        // together one of the whole rate: exponential gaps, whose standard
        // deviation equals their mean. About 50,000 gaps give the CV within
        // ±0.02 (3σ) and a KS distance under 0.007 (1%); even gaps have a
        // CV of 0 and a KS distance of 0.63.
        let all: Vec<Instant> = mine.concat();
        for (label, instants, mean_gap) in [
            ("worker 0", &mine[0], 2e-3),
            ("worker 1", &mine[1], 2e-3),
            ("both", &all, 1e-3),
        ] {
            let (mean, cv, ks) = gap_shape(&gaps(instants));
            assert!(
                (mean / mean_gap - 1.0).abs() < 0.02,
                "{label}: mean gap {mean}"
            );
            assert!((0.97..=1.03).contains(&cv), "{label}: CV {cv}");
            assert!(ks < 0.01, "{label}: KS distance {ks}");
        }
        // The same measures on uniform arrivals: far outside those bounds.
        let even = taken(&load(schedule, Arrival::Uniform, 0, 1), start, end);
        let (_, cv, ks) = gap_shape(&gaps(&even));
        assert!(cv < 0.01 && ks > 0.5, "uniform: CV {cv}, KS {ks}");
    }

    #[test]
    fn the_warmups_queued_instants_are_dropped_once_measurement_begins() {
        let now = Instant::now();
        // Still warming up: the backlog is served in order.
        let mut warming = Backlog::new(now + Duration::from_secs(3600));
        warming.push(now);
        warming.push(now + MS);
        assert_eq!(warming.pop(now), Some(now));
        // Measuring: warm-up instants go, the window's are served.
        let start = now - 5 * MS;
        let mut measuring = Backlog::new(start);
        for at in [start - 2 * MS, start - MS, start, start + MS] {
            measuring.push(at);
        }
        assert_eq!(measuring.pop(now), Some(start));
        assert_eq!(measuring.pop(now), Some(start + MS));
        assert_eq!(measuring.pop(now), None);
        assert!(measuring.is_empty());
    }
}
