//! Comparing the parts of runs ("compare works on them"): each
//! group of a scenario and each of its steps (or each `--targets` entry),
//! matched by name across the files, judged by the same rows, noise bands
//! and intervals as the whole runs (the parent module). Only the parts every file
//! has are compared; a few figures each, so a scenario of many steps stays
//! readable.

use super::{row, CompareOptions, Figure, Row, RunFigures, Sample};
use serde::{Deserialize, Serialize};
use stampede_metrics::{LatencySummary, RunResult};

/// The figures compared for each part.
const PART_FIGURES: [Figure; 4] = [Figure::Goodput, Figure::ErrorRate, Figure::P50, Figure::P99];

/// One group or step across the files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartComparison {
    /// `group NAME`, `transaction NAME` or `step NAME`.
    pub part: String,
    pub rows: Vec<Row>,
}

/// The parts of one result: its groups when it has any, then its steps or
/// targets when there are several (one step is the whole run again).
pub(crate) fn part_figures(r: &RunResult) -> Vec<RunFigures> {
    let groups = r.groups.iter().map(|g| {
        let kind = if g.is_transaction() {
            "transaction"
        } else {
            "group"
        };
        let label = format!("{kind} {}", g.name);
        figures(
            label,
            r,
            (g.goodput, g.rps, g.error_rate_pct),
            g.finished,
            &g.latency_us,
        )
    });
    let steps = (r.targets.len() > 1).then_some(&r.targets);
    let steps = steps.into_iter().flatten().map(|t| {
        let name = t
            .name
            .clone()
            .unwrap_or_else(|| format!("{} {}", t.method, t.url));
        let label = format!("step {name}");
        figures(
            label,
            r,
            (t.goodput, t.rps, t.error_rate_pct),
            t.finished,
            &t.latency_us,
        )
    });
    groups.chain(steps).collect()
}

fn figures(
    label: String,
    r: &RunResult,
    (goodput, rps, error_rate_pct): (f64, f64, f64),
    finished: u64,
    latency: &LatencySummary,
) -> RunFigures {
    let ms = |us: u64| (finished > 0).then_some(us as f64 / 1000.0);
    RunFigures {
        label,
        plan: r.plan.clone(),
        goodput,
        rps,
        error_rate_pct,
        p50_ms: ms(latency.p50),
        p90_ms: ms(latency.p90),
        p99_ms: ms(latency.p99),
        p99_9_ms: ms(latency.p99_9),
        max_ms: ms(latency.max),
        server_cpu_s_per_1k: None,
        interrupted_after_s: None,
        protocol: crate::ProtocolFigures::default(),
        parts: Vec::new(),
    }
}

/// Each part that every run of every file has, in the first file's order.
pub(crate) fn compare_parts(samples: &[Sample], opts: &CompareOptions) -> Vec<PartComparison> {
    let Some(first) = samples.first().and_then(|s| s.runs.first()) else {
        return Vec::new();
    };
    first
        .parts
        .iter()
        .filter_map(|part| {
            let per_file: Option<Vec<Sample>> = samples
                .iter()
                .map(|s| {
                    let runs: Option<Vec<RunFigures>> = s
                        .runs
                        .iter()
                        .map(|r| r.parts.iter().find(|p| p.label == part.label).cloned())
                        .collect();
                    runs.map(|runs| Sample {
                        label: s.label.clone(),
                        runs,
                    })
                })
                .collect();
            let per_file = per_file?;
            Some(PartComparison {
                part: part.label.clone(),
                rows: PART_FIGURES
                    .iter()
                    .map(|&figure| row(figure, &per_file, opts))
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::*;

    fn part(label: &str, goodput: f64, p99_ms: f64) -> RunFigures {
        RunFigures {
            label: label.into(),
            plan: crate::slo::tests::result(goodput, 0.0, &[1000]).plan,
            goodput,
            rps: goodput,
            error_rate_pct: 0.0,
            p50_ms: Some(p99_ms / 2.0),
            p90_ms: Some(p99_ms),
            p99_ms: Some(p99_ms),
            p99_9_ms: Some(p99_ms),
            max_ms: Some(p99_ms),
            server_cpu_s_per_1k: None,
            interrupted_after_s: None,
            protocol: crate::ProtocolFigures::default(),
            parts: Vec::new(),
        }
    }

    fn run(label: &str, parts: Vec<RunFigures>) -> RunFigures {
        RunFigures {
            parts,
            ..part(label, 1000.0, 10.0)
        }
    }

    #[test]
    fn parts_every_file_has_are_compared_by_name() {
        let a = run(
            "a",
            vec![
                part("group browse", 900.0, 5.0),
                part("group api", 100.0, 50.0),
            ],
        );
        // b has the groups in the other order, a slower api, and no third part.
        let b = run(
            "b",
            vec![
                part("group api", 100.0, 100.0),
                part("group browse", 900.0, 5.0),
            ],
        );
        let c = compare(&[a, b], &CompareOptions::default()).unwrap();
        let names: Vec<&str> = c.parts.iter().map(|p| p.part.as_str()).collect();
        assert_eq!(names, ["group browse", "group api"]);
        let api_p99 = c.parts[1]
            .rows
            .iter()
            .find(|r| r.figure == Figure::P99)
            .unwrap();
        assert_eq!(api_p99.values, [Some(50.0), Some(100.0)]);
        assert_eq!(api_p99.change_pct[1], Some(100.0));
    }

    #[test]
    fn a_part_missing_from_one_file_is_left_out() {
        let a = run("a", vec![part("step home", 500.0, 5.0)]);
        let b = run("b", vec![part("step other", 500.0, 5.0)]);
        let c = compare(&[a, b], &CompareOptions::default()).unwrap();
        assert!(c.parts.is_empty());
    }

    fn target(name: &str, finished: u64, p99_us: u64) -> stampede_metrics::TargetResult {
        stampede_metrics::TargetResult {
            name: Some(name.into()),
            method: "GET".into(),
            url: "http://h/".into(),
            weight: 1,
            finished,
            success: finished,
            failed_status: 0,
            check_failed: 0,
            errors: 0,
            rps: 10.0,
            goodput: 10.0,
            error_rate_pct: 0.0,
            status: Default::default(),
            error_classes: Default::default(),
            bytes_body: 0,
            latency_us: stampede_metrics::LatencySummary {
                p99: p99_us,
                ..Default::default()
            },
            histogram: String::new(),
        }
    }

    #[test]
    fn a_result_is_parted_into_its_groups_then_its_steps_in_ms() {
        let mut r = crate::slo::tests::result(100.0, 0.0, &[1000]);
        // One target is the whole run again: no parts.
        r.targets = vec![target("home", 10, 4000)];
        assert!(part_figures(&r).is_empty());
        r.targets.push(target("cart", 0, 9000));
        r.groups = vec![stampede_metrics::GroupResult {
            name: "shop".into(),
            load: stampede_metrics::TRANSACTION_LOAD.into(),
            steps: vec!["home".into(), "cart".into()],
            finished: 10,
            success: 10,
            failed_status: 0,
            check_failed: 0,
            errors: 0,
            rps: 10.0,
            goodput: 10.0,
            error_rate_pct: 0.0,
            latency_us: stampede_metrics::LatencySummary {
                p99: 2500,
                ..Default::default()
            },
        }];
        let parts = part_figures(&r);
        let labels: Vec<&str> = parts.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["transaction shop", "step home", "step cart"]);
        assert_eq!(parts[0].p99_ms, Some(2.5));
        assert_eq!(parts[1].p99_ms, Some(4.0));
        // A step that finished nothing has no latency to compare.
        assert_eq!(parts[2].p99_ms, None);
    }
}
