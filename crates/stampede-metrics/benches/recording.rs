//! Time of the two metrics operations on the load generator's paths:
//!
//! - `record/success`: [`Recorder::record`] of one successful [`Outcome`], done
//!   by a worker for every request it completes (counters plus three latency
//!   histogram records: latency, service time, waiting);
//! - `merge/10k_into_10k`: [`Snapshot::merge`] of a worker's snapshot holding
//!   10,000 outcomes into a total holding 10,000, as the aggregator does for
//!   every worker every 250 ms;
//! - `merge/10k_into_fresh`: the same snapshot merged into an empty one, as
//!   the per-second time series does for the first snapshot of each second
//!   (its histograms start small and grow to the values they receive).
//!
//! A merge costs in proportion to the histograms' size (one counter per
//! distinct value range up to the largest latency), not to the number of
//! outcomes in them: ~10k is what one worker records in 250 ms at 40k
//! requests per second.
//!
//! Why it matters: on loopback nearly all of a lean client's CPU per request
//! is kernel time, and to stay near that floor the whole engine has about
//! 0.3 µs of user time per request for everything it does itself.
//! Recording an outcome is paid on every request, so it must stay a small
//! share of that budget; merging is paid per snapshot, not per request, and is
//! measured so that its cost per recorded request stays negligible.
//!
//! Outcomes are realistic: latencies spread log-uniformly from 100 µs to 10 ms
//! (a fixed pseudo-random sequence, so runs are comparable), a send lag of
//! 0–50 µs, and the first byte at 80% of the service time. `record` cycles
//! through 4,096 of them so the histogram buckets touched vary as they do in
//! a real run, rather than hitting one hot bucket.
//!
//! Run with `cargo bench -p stampede-metrics --bench recording`; add
//! `-- --warm-up-time 1 --measurement-time 3` for a quicker run, and pin it to
//! a quiet core (`taskset -c 1 ...`) for steadier figures.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use stampede_metrics::{Outcome, Recorder, Snapshot};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Outcomes the `record` benchmark cycles through (a power of two).
const CYCLE: usize = 4096;
/// Outcomes recorded into each snapshot of the merge benchmarks.
const PER_SNAPSHOT: usize = 10_000;

/// A small deterministic generator (xorshift64*): no dependency, same
/// sequence on every run.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` successful outcomes with latencies log-uniform in 100 µs – 10 ms,
/// intended one after another 10 µs apart from `start`.
fn outcomes(start: Instant, n: usize, seed: u64) -> Vec<Outcome> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let latency_us = 100.0 * 100f64.powf(rng.unit()); // 100 µs .. 10 ms
            let lag_us = 50.0 * rng.unit();
            let intended = start + Duration::from_micros(10 * i as u64);
            let sent = intended + Duration::from_secs_f64(lag_us / 1e6);
            let done = intended + Duration::from_secs_f64(latency_us / 1e6);
            let service = done.saturating_duration_since(sent);
            Outcome {
                intended,
                sent,
                first_byte: Some(sent + service.mul_f64(0.8)),
                done,
                result: Ok(200),
                bytes_received: 753,
                body_bytes: 515,
                target: 0,
                judged: None,
            }
        })
        .collect()
}

/// A worker's interval snapshot after recording `n` outcomes.
fn snapshot(start: Instant, n: usize, seed: u64) -> Snapshot {
    let mut recorder = Recorder::new();
    for outcome in outcomes(start, n, seed) {
        recorder.record_sent();
        recorder.record(&outcome);
    }
    recorder.take_interval()
}

fn record(c: &mut Criterion) {
    let outcomes = outcomes(Instant::now(), CYCLE, 0x5eed_0001);
    let mut group = c.benchmark_group("record");
    group.throughput(Throughput::Elements(1));
    let mut recorder = Recorder::new();
    let mut next = 0usize;
    group.bench_function("success", |b| {
        b.iter(|| {
            let outcome = &outcomes[next % CYCLE];
            next = next.wrapping_add(1);
            recorder.record(black_box(outcome));
        })
    });
    group.finish();
    // The recorder really counted what it was given.
    let recorded = recorder.take_interval();
    assert_eq!(recorded.counters.success, recorded.latency.len());
    assert!(recorded.counters.success > 0);
}

fn merge(c: &mut Criterion) {
    let start = Instant::now();
    let total = snapshot(start, PER_SNAPSHOT, 0x5eed_0002);
    let worker = snapshot(start, PER_SNAPSHOT, 0x5eed_0003);
    assert_eq!(total.latency.len(), PER_SNAPSHOT as u64);
    assert_eq!(worker.latency.len(), PER_SNAPSHOT as u64);

    let mut group = c.benchmark_group("merge");
    // One merge per iteration: time per snapshot merged.
    group.throughput(Throughput::Elements(1));
    // The target is made outside the timed part (only `merge` is timed), one
    // per iteration. With criterion's larger batches dozens of targets are
    // alive at once, and merging into fresh ones was bimodal (6-12 µs or
    // 54-140 µs per merge, by batch size): likely new memory being faulted
    // in, not the merge. One at a time, the allocator reuses the memory just
    // freed, as the aggregator's long-lived total and per-second slots do.
    group.bench_function("10k_into_10k", |b| {
        b.iter_batched_ref(
            || total.clone(),
            |into| into.merge(black_box(&worker)),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("10k_into_fresh", |b| {
        b.iter_batched_ref(
            Snapshot::default,
            |into| into.merge(black_box(&worker)),
            BatchSize::PerIteration,
        )
    });
    group.finish();

    let mut merged = total.clone();
    merged.merge(&worker);
    assert_eq!(merged.latency.len(), 2 * PER_SNAPSHOT as u64);
    assert_eq!(merged.counters.success, 2 * PER_SNAPSHOT as u64);
}

criterion_group!(benches, record, merge);
criterion_main!(benches);
