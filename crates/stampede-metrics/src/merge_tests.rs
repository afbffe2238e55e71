//! Tests of [`super::merge_results`]: properties over generated results
//! (identity, sums, percentiles of the union) and the documented edge cases.

use super::*;
use crate::{Environment, ErrorKind, Recording, Snapshot, TimeseriesBuilder};
use proptest::prelude::*;
use stampede_plan::{LoadModel, Plan, Schedule, StopCondition, Target};
use std::time::{Duration, SystemTime};

fn plan(url: &str, connections: f64) -> Plan {
    Plan {
        model: LoadModel::Closed {
            connections: Schedule::constant(connections, Duration::from_secs(3)),
        },
        stop: StopCondition::Duration(Duration::from_secs(3)),
        connect_timeout: Duration::from_secs(3),
        timeout: Duration::from_secs(10),
        ..Plan::minimal(Target::parse(url).unwrap())
    }
}

/// One generated agent: samples `(second, latency_us, status)` and resets.
#[derive(Debug, Clone)]
struct Agent {
    start_ms: u64,
    samples: Vec<(u64, u64, u16)>,
    resets: u64,
}

fn agent() -> impl Strategy<Value = Agent> {
    let sample = (
        0u64..3,
        1u64..5_000_000,
        prop_oneof![Just(200u16), Just(404), Just(503)],
    );
    (0u64..400, prop::collection::vec(sample, 0..200), 0u64..5).prop_map(
        |(start_ms, samples, resets)| Agent {
            start_ms,
            samples,
            resets,
        },
    )
}

/// Runs an agent's samples through the real recording path.
fn result_of(agent: &Agent, url: &str) -> RunResult {
    let mut seconds = vec![Snapshot::default(); 3];
    for &(second, latency, status) in &agent.samples {
        let s = &mut seconds[second as usize];
        s.counters.sent += 1;
        if status < 400 {
            s.counters.success += 1;
        } else {
            s.counters.failed_status += 1;
        }
        s.counters.status.add(status, 1);
        s.counters.bytes_received += 100;
        s.latency.record(latency).unwrap();
        s.service.record(latency / 2 + 1).unwrap();
        s.connect.record(latency % 1000 + 1).unwrap();
        s.waiting.record(latency / 3 + 1).unwrap();
    }
    seconds[0].counters.sent += agent.resets;
    seconds[0].counters.errors[ErrorKind::Reset.index()] += agent.resets;
    seconds[0].counters.connect_attempts += agent.resets + 1;
    let target = |_: f64| 10.0;
    let mut builder = TimeseriesBuilder::new(1);
    let mut total = Snapshot::default();
    for (second, snapshot) in seconds.iter().enumerate() {
        builder.add(0, second as u64, snapshot, &target);
        total.merge(snapshot);
    }
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let recording = Recording {
        timeseries: builder.finish(0.95, &target),
        ..Recording::of(
            base + Duration::from_millis(agent.start_ms),
            Duration::from_millis(2_950 + agent.start_ms % 50),
            stampede_plan::EventLoop::Epoll,
            total,
        )
    };
    RunResult::from_recording(
        &plan(url, 10.0),
        &recording,
        Environment::default(),
        "test",
        vec![],
    )
}

fn union_histogram(agents: &[Agent]) -> LatencyHistogram {
    let mut union = new_latency_histogram();
    for &(_, latency, _) in agents.iter().flat_map(|a| &a.samples) {
        union.record(latency).unwrap();
    }
    union
}

proptest! {
    // Each case builds a few dozen 1 h-range HDR histograms; 32 cases keep a
    // debug test run to seconds while still varying sizes, starts and statuses.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn merging_one_result_gives_it_back(agent in agent()) {
        let result = result_of(&agent, "http://10.0.0.1/");
        let merged = merge_results(std::slice::from_ref(&result), false).unwrap();
        prop_assert_eq!(merged, result);
    }

    #[test]
    fn counts_are_sums(agents in prop::collection::vec(agent(), 1..5)) {
        let results: Vec<RunResult> = agents.iter().map(|a| result_of(a, "http://10.0.0.1/")).collect();
        let merged = merge_results(&results, false).unwrap();
        let sum = |f: fn(&RunResult) -> u64| results.iter().map(f).sum::<u64>();
        prop_assert_eq!(merged.requests.sent, sum(|r| r.requests.sent));
        prop_assert_eq!(merged.requests.completed, sum(|r| r.requests.completed));
        prop_assert_eq!(merged.requests.success, sum(|r| r.requests.success));
        prop_assert_eq!(merged.requests.errors, sum(|r| r.requests.errors));
        prop_assert_eq!(merged.bytes.received, sum(|r| r.bytes.received));
        prop_assert_eq!(merged.connections.attempts, sum(|r| r.connections.attempts));
        prop_assert_eq!(merged.status.values().sum::<u64>(), merged.requests.completed);
        prop_assert_eq!(merged.errors.get("reset").copied().unwrap_or(0), sum(|r| r.requests.errors));
        let per_second: u64 = merged.timeseries.iter().map(|p| p.completed).sum();
        prop_assert_eq!(per_second, merged.requests.completed);
        prop_assert_eq!(merged.breakdown.connect.count, sum(|r| r.breakdown.connect.count));
        prop_assert_eq!(merged.plan.connections, 10 * results.len());
    }

    #[test]
    fn merged_percentiles_are_the_unions(agents in prop::collection::vec(agent(), 1..5)) {
        let results: Vec<RunResult> = agents.iter().map(|a| result_of(a, "http://10.0.0.1/")).collect();
        let merged = merge_results(&results, false).unwrap();
        let union = union_histogram(&agents);
        prop_assert_eq!(merged.latency_us, LatencySummary::of(&union));
        let decoded = merged.latency_histogram().unwrap();
        prop_assert_eq!(decoded.len(), union.len());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            prop_assert_eq!(decoded.value_at_quantile(q), union.value_at_quantile(q));
        }
    }

    #[test]
    fn per_second_percentiles_of_a_merge_are_the_unions(agents in prop::collection::vec(agent(), 1..5)) {
        // Every agent starts within 400 ms of the first: all align on second 0.
        let results: Vec<RunResult> = agents.iter().map(|a| result_of(a, "http://10.0.0.1/")).collect();
        let merged = merge_results(&results, false).unwrap();
        for point in &merged.timeseries {
            let mut union = new_latency_histogram();
            let mut service = new_latency_histogram();
            for &(second, latency, _) in agents.iter().flat_map(|a| &a.samples) {
                if second == point.second {
                    union.record(latency).unwrap();
                    service.record(latency / 2 + 1).unwrap();
                }
            }
            prop_assert_eq!(&point.histograms["service"], &encode_histogram(&service));
            prop_assert_eq!(
                [point.p50_us, point.p90_us, point.p99_us, point.max_us],
                second_percentiles(&union)
            );
            // Equal contents encode to equal text (the canonical form).
            prop_assert_eq!(&point.histograms["latency"], &encode_histogram(&union));
        }
    }

    #[test]
    fn pooled_mean_and_stdev_are_exact(agents in prop::collection::vec(agent(), 2..5)) {
        // The service histograms are stored, so the pooled figures can be
        // checked against the exact ones of the union.
        let results: Vec<RunResult> = agents.iter().map(|a| result_of(a, "http://10.0.0.1/")).collect();
        let merged = merge_results(&results, false).unwrap();
        let pooled = pool(results.iter().map(|r| &r.breakdown.service));
        let exact = merged.breakdown.service;
        prop_assert_eq!(pooled.count, exact.count);
        prop_assert_eq!((pooled.min, pooled.max), (exact.min, exact.max));
        prop_assert!((pooled.mean - exact.mean).abs() <= 1e-6 * exact.mean.max(1.0));
        prop_assert!((pooled.stdev - exact.stdev).abs() <= 1e-3 * exact.stdev.max(1.0));
    }
}

fn sample_agent(start_ms: u64) -> Agent {
    Agent {
        start_ms,
        samples: (0..30).map(|i| (i % 3, 1000 + i * 10, 200)).collect(),
        resets: 0,
    }
}

#[test]
fn refuses_different_urls_unless_forced() {
    let a = result_of(&sample_agent(0), "http://10.0.0.1/");
    let b = result_of(&sample_agent(0), "http://10.0.0.2/");
    let error = merge_results(&[a.clone(), b.clone()], false).unwrap_err();
    assert!(
        matches!(
            error,
            MergeError::PlanMismatch {
                index: 1,
                field: "url",
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("http://10.0.0.2/"));
    let forced = merge_results(&[a, b], true).unwrap();
    assert!(forced.warnings.iter().any(|w| w.contains("plan.url")));
    assert_eq!(forced.requests.completed, 60);
}

#[test]
fn aligns_series_on_the_wall_clock() {
    let a = result_of(&sample_agent(0), "http://10.0.0.1/");
    let b = result_of(&sample_agent(2_000), "http://10.0.0.1/");
    let merged = merge_results(&[b, a], false).unwrap();
    let completed: Vec<u64> = merged.timeseries.iter().map(|p| p.completed).collect();
    assert_eq!(completed, vec![10, 10, 20, 10, 10]);
    assert_eq!(merged.started_at, "2027-01-15T08:00:00.000Z");
    assert!((merged.elapsed_s - (2.0 + 2.95)).abs() < 1e-9);
    assert!((merged.rps - 60.0 / merged.elapsed_s).abs() < 1e-9);
    assert!(merged.warnings.iter().any(|w| w.contains("2000 ms apart")));
}

#[test]
fn warns_about_missing_and_repeated_agents() {
    let with_agent = |index| {
        let mut r = result_of(&sample_agent(0), "http://10.0.0.1/");
        r.agent = Some(AgentInfo {
            index,
            count: 3,
            start_at: None,
            start_offset_ms: Some(1),
            max_skew_ms: 1000,
            clock_synchronized: Some(true),
            clock_error_us: Some(5),
        });
        r
    };
    let merged = merge_results(&[with_agent(0), with_agent(0)], false).unwrap();
    let text = merged.warnings.join("\n");
    assert!(text.contains("agent 0/3 merged more than once"), "{text}");
    assert!(text.contains("agent 1/3, 2/3 missing"), "{text}");
    assert_eq!(merged.agent, None);
}

#[test]
fn nothing_to_merge_and_broken_inputs_are_errors() {
    assert!(matches!(merge_results(&[], false), Err(MergeError::Empty)));
    let mut r = result_of(&sample_agent(0), "http://10.0.0.1/");
    r.histogram = "garbage".into();
    assert!(matches!(
        merge_results(&[r.clone()], false),
        Err(MergeError::Histogram { index: 0, .. })
    ));
    r.started_at = "yesterday".into();
    assert!(matches!(
        merge_results(&[r], false),
        Err(MergeError::StartedAt { index: 0, .. })
    ));
}

#[test]
fn a_merge_has_its_own_run_id_and_lists_the_inputs_ids() {
    let a = result_of(&sample_agent(0), "http://10.0.0.1/");
    let b = result_of(&sample_agent(0), "http://10.0.0.1/");
    assert_ne!(a.run_id, b.run_id, "each result has its own id");
    let merged = merge_results(&[a.clone(), b.clone()], false).unwrap();
    assert_eq!(
        merged.merged_run_ids,
        vec![a.run_id.clone(), b.run_id.clone()]
    );
    assert_eq!(merged.run_id.len(), 16);
    assert!(merged.run_id != a.run_id && merged.run_id != b.run_id);
    // One input comes back as it was, id included.
    let alone = merge_results(std::slice::from_ref(&a), false).unwrap();
    assert_eq!(
        (alone.run_id.as_str(), alone.merged_run_ids.len()),
        (a.run_id.as_str(), 0)
    );
}

#[test]
fn compression_counts_add_up_over_agents() {
    let with = |decoded, encoded| {
        let mut r = result_of(&sample_agent(0), "http://10.0.0.1/");
        r.compression = Some(crate::CompressionSummary {
            accept_encoding: Some("gzip, br, zstd".into()),
            decode: true,
            decoded_bytes: Some(decoded),
            encoded_responses: Some(encoded),
        });
        r
    };
    let merged = merge_results(&[with(100, 2), with(50, 1)], false).unwrap();
    let compression = merged.compression.expect("kept");
    assert_eq!(compression.decoded_bytes, Some(150));
    assert_eq!(compression.encoded_responses, Some(3));
    assert_eq!(
        compression.accept_encoding.as_deref(),
        Some("gzip, br, zstd")
    );
    let plain = result_of(&sample_agent(0), "http://10.0.0.1/");
    let none = merge_results(&[plain.clone(), plain], false).unwrap();
    assert!(none.compression.is_none());
}

/// One run's samples: three seconds, most fast, a stall in second 1.
fn one_run() -> Agent {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let samples = (0..9_000u64)
        .map(|i| {
            let second = i % 3;
            let base = 200 + next() % 2_000;
            let latency = if second == 1 && i % 50 == 0 {
                900_000 + next() % 200_000
            } else {
                base
            };
            (second, latency, 200)
        })
        .collect();
    Agent {
        start_ms: 0,
        samples,
        resets: 0,
    }
}

#[test]
fn a_run_split_three_ways_merges_to_the_same_seconds() {
    let whole = one_run();
    let single = result_of(&whole, "http://10.0.0.1/");
    // Each agent's result goes through its JSON file, as `stampede merge` reads it.
    let parts: Vec<RunResult> = (0..3)
        .map(|part| {
            let share = Agent {
                samples: (whole.samples.iter().enumerate())
                    .filter(|(i, _)| (i / 3) % 3 == part)
                    .map(|(_, s)| *s)
                    .collect(),
                ..whole.clone()
            };
            let json = serde_json::to_string(&result_of(&share, "http://10.0.0.1/")).unwrap();
            RunResult::from_json(&json).unwrap()
        })
        .collect();
    let merged = merge_results(&parts, false).unwrap();
    assert_eq!(merged.timeseries.len(), single.timeseries.len());
    for (got, want) in merged.timeseries.iter().zip(&single.timeseries) {
        assert_eq!(
            (got.p50_us, got.p90_us, got.p99_us, got.max_us),
            (want.p50_us, want.p90_us, want.p99_us, want.max_us),
            "second {}",
            want.second
        );
        assert_eq!(got.histograms, want.histograms, "second {}", want.second);
        let sum: u64 = parts
            .iter()
            .map(|p| p.timeseries[got.second as usize].completed)
            .sum();
        assert_eq!(got.completed, sum);
    }
    // The stall is in second 1's p99, and only there.
    assert!(merged.timeseries[1].p99_us > 800_000);
    assert!(merged.timeseries[0].p99_us < 3_000);
    // No agent alone has the union's p99 in every second: the old rule
    // (the largest agent's) would differ somewhere, or this test shows nothing.
    let old_rule = merge_results(
        &parts
            .iter()
            .map(|p| {
                let mut p = p.clone();
                p.timeseries.iter_mut().for_each(|s| s.histograms.clear());
                p
            })
            .collect::<Vec<_>>(),
        false,
    )
    .unwrap();
    let differs = old_rule
        .timeseries
        .iter()
        .zip(&single.timeseries)
        .any(|(a, b)| (a.p50_us, a.p90_us, a.p99_us) != (b.p50_us, b.p90_us, b.p99_us));
    assert!(differs, "the split is too even to tell the rules apart");
}

#[test]
fn a_tag_one_input_lacks_is_left_out_of_the_merged_seconds() {
    // A result written when seconds kept `latency` only, merged with one
    // that keeps `service` too: latency stays exact, service goes (the sum
    // of one input's would pass for the whole's).
    let a = result_of(&sample_agent(0), "http://10.0.0.1/");
    let mut older = result_of(&one_run(), "http://10.0.0.1/");
    older
        .timeseries
        .iter_mut()
        .for_each(|p| p.histograms.retain(|tag, _| tag == "latency"));
    let merged = merge_results(&[a.clone(), older.clone()], false).unwrap();
    for point in &merged.timeseries {
        assert_eq!(point.histograms.keys().collect::<Vec<_>>(), ["latency"]);
    }
    let both = merge_results(&[a, result_of(&one_run(), "http://10.0.0.1/")], false).unwrap();
    for (point, older) in both.timeseries.iter().zip(&merged.timeseries) {
        assert_eq!(point.histograms["latency"], older.histograms["latency"]);
        assert!(point.histograms.contains_key("service"));
    }
}

#[test]
fn an_input_without_per_second_histograms_falls_back_to_the_upper_bound() {
    let a = result_of(&sample_agent(0), "http://10.0.0.1/");
    let mut old = result_of(&one_run(), "http://10.0.0.1/");
    old.timeseries.iter_mut().for_each(|p| p.histograms.clear());
    let merged = merge_results(&[a.clone(), old.clone()], false).unwrap();
    let note = merged
        .notices
        .iter()
        .find(|n| n.contains("no per-second histograms"))
        .expect("the merge says its percentiles are upper bounds");
    assert!(note.starts_with("input 1 has"), "{note}");
    for (second, point) in merged.timeseries.iter().enumerate() {
        assert!(point.histograms.is_empty(), "a partial sum would be wrong");
        let largest = a.timeseries[second]
            .p99_us
            .max(old.timeseries[second].p99_us);
        assert_eq!(point.p99_us, largest);
    }
    let exact = merge_results(&[a, result_of(&one_run(), "http://10.0.0.1/")], false).unwrap();
    assert!(!exact
        .notices
        .iter()
        .any(|n| n.contains("per-second histograms")));
}
