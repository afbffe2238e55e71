//! Merging the per-target (and per-step) tables and a scenario's groups of
//! several agents' results: each table row rebuilt into its statistics
//! (counts, and latency from the row's saved histogram), added up by
//! position, and summarized again over the merged window, so a merged
//! table says what one run of the whole load would have said.

use crate::{decode_histogram, ErrorKind, GroupResult, RunResult, TargetResult, TargetStats};

/// A table row's statistics again; `None` when the row has no histogram
/// (a result written before rows kept one).
fn stats_of(row: &TargetResult) -> Option<TargetStats> {
    if row.histogram.is_empty() && row.finished > 0 {
        return None;
    }
    let mut stats = TargetStats::default();
    if !row.histogram.is_empty() {
        let latency = decode_histogram(&row.histogram).ok()?;
        stats.latency.add(&latency).ok()?;
    }
    let c = &mut stats.counters;
    c.success = row.success;
    c.failed_status = row.failed_status;
    c.check_failed = row.check_failed;
    for (class, n) in &row.error_classes {
        let kind = ErrorKind::ALL.into_iter().find(|k| k.as_str() == class)?;
        c.errors[kind.index()] += n;
    }
    for (code, n) in &row.status {
        c.status.add(code.parse().ok()?, *n);
    }
    c.sent = row.finished;
    c.bytes_body = row.bytes_body;
    if row.latency_us.max > 0 {
        stats.min_us = row.latency_us.min;
        stats.max_us = row.latency_us.max;
    }
    Some(stats)
}

/// The merged per-target table; `None` when a row cannot be merged (an
/// older file without histograms): the caller keeps the first result's.
pub(crate) fn merge_targets(results: &[RunResult], elapsed_s: f64) -> Option<Vec<TargetResult>> {
    let first = results.first()?;
    let mut merged = Vec::with_capacity(first.targets.len());
    for (index, row) in first.targets.iter().enumerate() {
        let mut total = TargetStats::default();
        for result in results {
            total.merge(&stats_of(result.targets.get(index)?)?);
        }
        let mut out = TargetResult::of(&row.method, &row.url, row.weight, &total, elapsed_s);
        out.name.clone_from(&row.name);
        merged.push(out);
    }
    Some(merged)
}

/// A scenario's groups again, from the merged per-step table (a group's
/// steps found by name).
pub(crate) fn merge_groups(
    groups: &[GroupResult],
    targets: &[TargetResult],
    elapsed_s: f64,
) -> Option<Vec<GroupResult>> {
    let mut merged = Vec::with_capacity(groups.len());
    for group in groups {
        let mut steps = Vec::with_capacity(group.steps.len());
        for name in &group.steps {
            let row = targets.iter().find(|t| t.name.as_deref() == Some(name))?;
            steps.push((name.as_str(), stats_of(row)?));
        }
        let refs: Vec<(&str, &TargetStats)> = steps.iter().map(|(n, s)| (*n, s)).collect();
        merged.push(GroupResult::of(&group.name, &group.load, &refs, elapsed_s));
    }
    Some(merged)
}
