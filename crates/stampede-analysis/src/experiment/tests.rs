//! The experiment's summary and verdicts on made-up rounds.

use super::*;
use crate::slo::tests::result;

fn variant(name: &str, goodputs: &[f64], bytes: &[f64]) -> VariantResult {
    VariantResult {
        name: name.into(),
        runs: goodputs
            .iter()
            .map(|g| result(*g, 0.0, &[1000, 2000]))
            .collect(),
        costs: bytes
            .iter()
            .map(|b| {
                Some(ServerCost {
                    write_bytes_per_request: *b,
                    ..ServerCost::default()
                })
            })
            .collect(),
        ..VariantResult::default()
    }
}

fn document(variants: Vec<VariantResult>) -> ExperimentDocument {
    let mut doc = ExperimentDocument {
        schema: EXPERIMENT_SCHEMA.into(),
        server_template: "srv {t}".into(),
        load: vec![],
        repeat: 3,
        order_kind: "interleaved".into(),
        seed: None,
        order: vec![0, 1, 0, 1, 0, 1],
        variants,
        verdicts: vec![],
        confidence: 0.95,
        interrupted: false,
        common_load: None,
    };
    doc.summarize();
    doc
}

fn find(doc: &ExperimentDocument, metric: Metric) -> &ExperimentVerdict {
    doc.verdicts
        .iter()
        .find(|v| v.metric == metric)
        .expect("a verdict on the metric")
}

#[test]
fn a_clear_difference_excludes_zero() {
    let doc = document(vec![
        variant("t=1", &[1000.0, 1010.0, 990.0], &[200.0, 201.0, 199.0]),
        variant("t=2", &[1450.0, 1460.0, 1440.0], &[300.0, 301.0, 299.0]),
    ]);
    let goodput = find(&doc, Metric::Goodput);
    assert_eq!((goodput.a.as_str(), goodput.b.as_str()), ("t=1", "t=2"));
    assert!((goodput.change_pct.unwrap() - 45.0).abs() < 1e-9);
    assert!(goodput.ci_low_pct.unwrap() > 0.0);
    assert_eq!(goodput.same, Some(false));
    let bytes = find(&doc, Metric::WriteBytesPerRequest);
    assert!((bytes.change - 100.0).abs() < 1e-9);
    let estimate = doc.variants[0].estimate(Metric::Goodput).unwrap();
    assert!((estimate.mean - 1000.0).abs() < 1e-9);
    assert!(estimate.ci_low.unwrap() < 1000.0 && estimate.ci_high.unwrap() > 1000.0);
    assert_eq!(
        doc.variants[1]
            .server
            .as_ref()
            .unwrap()
            .write_bytes_per_request,
        300.0
    );
}

#[test]
fn noise_alone_is_no_difference() {
    let doc = document(vec![
        variant("a", &[1000.0, 1100.0, 900.0], &[200.0, 210.0, 190.0]),
        variant("b", &[1050.0, 950.0, 1010.0], &[205.0, 195.0, 200.0]),
    ]);
    assert_eq!(find(&doc, Metric::Goodput).same, Some(true));
    assert_eq!(find(&doc, Metric::WriteBytesPerRequest).same, Some(true));
    // Both without errors: exactly the same.
    assert_eq!(find(&doc, Metric::ErrorRate).same, Some(true));
}

#[test]
fn one_round_has_no_interval_and_the_file_reads_back() {
    let doc = document(vec![
        variant("a", &[1000.0], &[1.0]),
        variant("b", &[900.0], &[1.0]),
    ]);
    let goodput = find(&doc, Metric::Goodput);
    assert_eq!(goodput.same, None);
    assert_eq!(goodput.ci_low, None);
    let text = serde_json::to_string(&doc).unwrap();
    assert_eq!(ExperimentDocument::from_json(&text).unwrap(), doc);
    let other = text.replace(EXPERIMENT_SCHEMA, "stampede.result/1");
    assert!(ExperimentDocument::from_json(&other)
        .unwrap_err()
        .contains("schema"));
}

#[test]
fn a_saturated_client_is_named_as_the_bottleneck() {
    let busy_client = |busiest: f64| {
        let mut run = result(1000.0, 0.0, &[1000]);
        let json = serde_json::json!({
            "interval_s": 1.0, "cpus": 2, "machine": [],
            "processes": [{
                "pid": 1, "name": "stampede", "role": "client", "cpu_user_s": 1.0,
                "cpu_sys_s": 0.0, "cpu_pct_mean": busiest, "cpu_pct_max": busiest,
                "busiest_thread_pct_max": busiest, "rss_max_bytes": 0, "threads_max": 2,
                "open_fds_max": 8, "ctx_voluntary": 0, "ctx_involuntary": 0,
                "exited": false, "samples": []
            }]
        });
        run.monitor = Some(serde_json::from_value(json).unwrap());
        run
    };
    let mut v = variant("a", &[1000.0], &[1.0]);
    v.runs = vec![busy_client(97.0), busy_client(99.0)];
    v.costs = vec![Some(ServerCost::default()), Some(ServerCost::default())];
    let doc = document(vec![v]);
    let named = &doc.variants[0].server.as_ref().unwrap().bottleneck;
    assert_eq!(named.len(), 1, "{named:?}");
    assert!(named[0]
        .cause
        .starts_with("the client was the bottleneck, its busiest thread at 98%"));
    let mut calm = variant("b", &[1000.0], &[1.0]);
    calm.runs = vec![busy_client(40.0)];
    let doc = document(vec![calm]);
    assert!(doc.variants[0]
        .server
        .as_ref()
        .unwrap()
        .bottleneck
        .is_empty());
}

/// A round of a sweep over 10, 20 and 40 connections with these goodputs,
/// each step costing `cpu` µs per request with one thread at `busy`% of a core.
fn swept(goodputs: [f64; 3], busy: f64) -> SweepRound {
    let loads = [10, 20, 40].map(Load::Connections);
    let steps: Vec<SweptStep> = loads
        .iter()
        .zip(goodputs)
        .map(|(load, goodput)| SweptStep {
            load: *load,
            result: result(goodput, 0.0, &[1000, 2000]),
            cost: Some(ServerCost {
                cpu_us_per_request: 10.0,
                threads: vec![ThreadShare {
                    name: "w".into(),
                    share_pct: 100.0,
                    cpu_pct: busy * goodput / goodputs[2],
                }],
                ..ServerCost::default()
            }),
        })
        .collect();
    SweepRound {
        analysis: analysis_of(&steps),
        steps,
    }
}

fn analysis_of(steps: &[SweptStep]) -> crate::sweep::SweepAnalysis {
    use crate::sweep::{analyze_sweep, StepInput, Thresholds};
    let inputs: Vec<StepInput> = steps
        .iter()
        .map(|s| StepInput::from_result(s.load, &s.result))
        .collect();
    analyze_sweep(&inputs, None, &Thresholds::default())
}

#[test]
fn a_sweep_gives_capacity_knee_and_the_bottleneck_at_the_knee() {
    let sweeping = |name: &str, rounds: Vec<SweepRound>| VariantResult {
        name: name.into(),
        sweeps: rounds,
        ..VariantResult::default()
    };
    let mut short = swept([1000.0, 1900.0, 2000.0], 99.0);
    // A round cut after its second step: the common load is 20 connections.
    short.steps.pop();
    short.analysis = analysis_of(&short.steps);
    let doc = document(vec![
        sweeping(
            "t=1",
            vec![
                swept([1000.0, 1900.0, 2000.0], 99.0),
                swept([1000.0, 1950.0, 2010.0], 99.0),
                short,
            ],
        ),
        sweeping(
            "t=2",
            vec![
                swept([1000.0, 2000.0, 3900.0], 50.0),
                swept([1000.0, 2000.0, 3950.0], 50.0),
            ],
        ),
    ]);
    assert_eq!(doc.common_load, Some(Load::Connections(20)));
    let one = &doc.variants[0];
    // `runs` is each round's step at the common load.
    assert_eq!(one.runs.len(), 3);
    assert_eq!(one.runs[1].goodput, 1950.0);
    assert_eq!(one.steps.len(), 3);
    assert_eq!(one.steps[2].rounds, 2);
    assert_eq!(one.steps[2].goodput, 2005.0);
    // The knee: the step the three rounds agree on, with its thread saturated.
    let knee = one.knee.as_ref().expect("a knee");
    assert_eq!(
        (knee.load, knee.rounds, knee.of_rounds),
        (Load::Connections(40), 2, 3)
    );
    assert!(
        knee.bottleneck[0]
            .cause
            .starts_with("one thread does all the work, at 99%"),
        "{:?}",
        knee.bottleneck
    );
    assert_eq!(knee.bottleneck[0].evidence[0].value, 99.0);
    // t=2 kept growing: no knee, and its capacity is higher.
    assert!(doc.variants[1].knee.is_none());
    let capacity = find(&doc, Metric::Capacity);
    assert!(capacity.change > 1500.0, "{capacity:?}");
    // The file reads back as it was written.
    let text = serde_json::to_string(&doc).unwrap();
    assert_eq!(ExperimentDocument::from_json(&text).unwrap(), doc);
}

#[test]
fn a_figure_interval_is_its_mean_plus_and_minus_the_half_width() {
    let doc = document(vec![variant(
        "a",
        &[1000.0, 1010.0, 990.0],
        &[200.0, 201.0, 199.0],
    )]);
    let estimate = doc.variants[0].estimate(Metric::Goodput).unwrap();
    // Symmetric about the mean of 1000: low + high = 2000.
    let (low, high) = (estimate.ci_low.unwrap(), estimate.ci_high.unwrap());
    assert!((low + high - 2000.0).abs() < 1e-9, "{low} {high}");
    assert!(high > 1000.0 && high < 1100.0, "{high}");
}

#[test]
fn a_step_summary_is_the_mean_of_the_rounds_at_that_step() {
    let mut rounds = vec![
        swept([1000.0, 1900.0, 2000.0], 99.0),
        swept([1000.0, 1950.0, 2010.0], 99.0),
    ];
    rounds[0].steps[1].result.latency_us.p99 = 3000;
    rounds[1].steps[1].result.latency_us.p99 = 5000;
    let steps = sweeps::step_summaries(&mut rounds);
    // 20 connections: (1900 + 1950) / 2 req/s and (3 + 5) / 2 ms.
    assert_eq!(
        (steps[1].rounds, steps[1].goodput, steps[1].p99_ms),
        (2, 1925.0, 4.0)
    );
}

#[test]
fn the_knee_is_where_most_rounds_saw_it_at_their_mean_goodput() {
    let knee_at = |connections: u64, goodput: f64| {
        let mut round = swept([1000.0, 1900.0, 2000.0], 99.0);
        round.analysis.knee = Some(crate::sweep::Point {
            goodput,
            load: Load::Connections(connections),
        });
        round
    };
    let rounds = vec![
        knee_at(20, 1900.0),
        knee_at(40, 2000.0),
        knee_at(40, 2010.0),
    ];
    let knee = sweeps::knee(&rounds, &[]).expect("a knee");
    // Two rounds of three at 40 connections, at (2000 + 2010) / 2 req/s.
    assert_eq!(
        (knee.load, knee.rounds, knee.of_rounds, knee.goodput),
        (Load::Connections(40), 2, 3, 2005.0)
    );
}
