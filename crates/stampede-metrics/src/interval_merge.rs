//! Agents' interval logs merged per interval, exactly: the intervals that
//! start at the same time are one interval, their histograms added (HDR
//! addition loses nothing), so each merged interval's percentiles are those
//! of all the agents' requests in it. Logs are lined up by their clocks, as
//! merged results are (merge.rs): a log that started later has its
//! intervals moved by whole intervals.

use crate::{HlogFile, LatencyHistogram};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// One merged interval of one tag.
#[derive(Debug, Clone)]
pub struct MergedInterval {
    /// The tag the intervals share.
    pub tag: String,
    /// Since the earliest log's start time.
    pub start: Duration,
    /// The longest of the merged intervals' lengths.
    pub length: Duration,
    /// The merged intervals' histograms added, µs.
    pub histogram: LatencyHistogram,
}

/// Logs merged: the intervals, ordered by start and then by the first
/// log's tag order, and what the user should know of them.
#[derive(Debug, Clone, Default)]
pub struct MergedLog {
    /// The earliest log's start time (each interval counts from it).
    pub start_time: Option<SystemTime>,
    /// Each tag's merged intervals.
    pub intervals: Vec<MergedInterval>,
    /// E.g. the logs started further apart than agents of one run do.
    pub warnings: Vec<String>,
}

/// A log's interval length: the one most of its intervals have (a run's
/// last interval may be shorter), to the millisecond.
fn interval_length(file: &HlogFile) -> Option<Duration> {
    let mut counts: BTreeMap<u128, usize> = BTreeMap::new();
    for interval in &file.intervals {
        *counts.entry(interval.length.as_millis()).or_default() += 1;
    }
    let (ms, _) = counts.into_iter().max_by_key(|&(ms, n)| (n, ms))?;
    Some(Duration::from_millis(ms as u64))
}

/// Merges logs (each with its name, for errors): the same tags and the
/// same interval length in each, intervals aligned by their start (to the
/// millisecond, the format's precision) once each log is moved by the
/// whole intervals its start time is after the earliest's.
pub fn merge_hlogs(files: &[(String, HlogFile)]) -> Result<MergedLog, String> {
    let Some((first_name, first)) = files.first() else {
        return Ok(MergedLog::default());
    };
    let tags = first.tags();
    let mut sorted_tags = tags.clone();
    sorted_tags.sort();
    let length = interval_length(first);
    for (name, file) in &files[1..] {
        let mut theirs = file.tags();
        theirs.sort();
        if theirs != sorted_tags {
            return Err(format!(
                "{name} has tags {} but {first_name} has {}: logs of one run have the same tags",
                theirs.join(","),
                sorted_tags.join(",")
            ));
        }
        let their_length = interval_length(file);
        if let (Some(ours), Some(theirs)) = (length, their_length) {
            if ours != theirs {
                return Err(format!(
                    "{name} has intervals of {:.3} s but {first_name} of {:.3} s: logs merge \
                     interval by interval, so they need the same --hlog-interval",
                    theirs.as_secs_f64(),
                    ours.as_secs_f64()
                ));
            }
        }
    }
    let start_time = files.iter().filter_map(|(_, f)| f.start_time).min();
    let after_first = |file: &HlogFile| -> Duration {
        match (file.start_time, start_time) {
            (Some(own), Some(first)) => own.duration_since(first).unwrap_or_default(),
            _ => Duration::ZERO,
        }
    };
    let spread = files.iter().map(|(_, f)| after_first(f)).max();
    let mut warnings = Vec::new();
    if let Some(spread) = spread.filter(|s| *s > crate::merge::MAX_SKEW) {
        warnings.push(crate::merge::skew_warning(
            spread.as_secs_f64() * 1000.0,
            crate::merge::MAX_SKEW.as_secs_f64() * 1000.0,
        ));
    }
    let mut merged: BTreeMap<(u128, usize), MergedInterval> = BTreeMap::new();
    for (name, file) in files {
        // Whole intervals, so that the intervals of the logs still line up.
        let shift = match length.filter(|l| !l.is_zero()) {
            Some(l) => l * (after_first(file).as_secs_f64() / l.as_secs_f64()).round() as u32,
            None => Duration::ZERO,
        };
        for interval in &file.intervals {
            let order = tags.iter().position(|t| *t == interval.tag).unwrap_or(0);
            let start = interval.start + shift;
            let key = (start.as_millis(), order);
            let slot = merged.entry(key).or_insert_with(|| MergedInterval {
                tag: interval.tag.clone(),
                start: Duration::from_millis(start.as_millis() as u64),
                length: interval.length,
                histogram: LatencyHistogram::new_from(&interval.histogram),
            });
            slot.length = slot.length.max(interval.length);
            slot.histogram
                .add(&interval.histogram)
                .map_err(|e| format!("{name} line {}: {e:?}", interval.line))?;
        }
    }
    Ok(MergedLog {
        start_time,
        intervals: merged.into_values().collect(),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HlogInterval;

    fn file(intervals: &[(&str, u64, &[u64])]) -> HlogFile {
        HlogFile {
            start_time: None,
            cut_at_line: None,
            intervals: intervals
                .iter()
                .map(|&(tag, start_ms, values)| {
                    let mut h = crate::new_latency_histogram();
                    for &v in values {
                        h.record(v).unwrap();
                    }
                    HlogInterval {
                        tag: tag.into(),
                        start: Duration::from_millis(start_ms),
                        length: Duration::from_secs(1),
                        histogram: h,
                        line: 1,
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn intervals_at_the_same_offset_add_up() {
        let a = file(&[("latency", 0, &[1, 2]), ("latency", 1000, &[3])]);
        let b = file(&[("latency", 1000, &[4, 5]), ("latency", 2000, &[6])]);
        let merged = merge_hlogs(&[("a".into(), a), ("b".into(), b)]).unwrap();
        let counts: Vec<(u128, u64)> = merged
            .intervals
            .iter()
            .map(|m| (m.start.as_millis(), m.histogram.len()))
            .collect();
        assert_eq!(counts, [(0, 2), (1000, 3), (2000, 1)]);
    }

    #[test]
    fn different_tag_sets_are_refused() {
        let a = file(&[("latency", 0, &[1])]);
        let b = file(&[("service", 0, &[1])]);
        let error = merge_hlogs(&[("a".into(), a), ("b".into(), b)]).unwrap_err();
        assert!(error.contains("b has tags service"), "{error}");
    }

    fn started(mut log: HlogFile, unix_ms: u64) -> HlogFile {
        log.start_time = Some(std::time::UNIX_EPOCH + Duration::from_millis(unix_ms));
        log
    }

    #[test]
    fn different_interval_lengths_are_refused() {
        let a = file(&[("latency", 0, &[1]), ("latency", 1000, &[2])]);
        let mut b = file(&[("latency", 0, &[1]), ("latency", 100, &[2])]);
        for interval in &mut b.intervals {
            interval.length = Duration::from_millis(100);
        }
        let error = merge_hlogs(&[("a".into(), a), ("b".into(), b)]).unwrap_err();
        assert!(
            error.contains("b has intervals of 0.100 s but a of 1.000 s"),
            "{error}"
        );
    }

    #[test]
    fn a_shorter_last_interval_is_still_the_same_length() {
        let a = file(&[("latency", 0, &[1]), ("latency", 1000, &[2])]);
        let mut b = file(&[("latency", 0, &[1]), ("latency", 1000, &[2])]);
        b.intervals[1].length = Duration::from_millis(400);
        assert!(merge_hlogs(&[("a".into(), a), ("b".into(), b)]).is_ok());
    }

    #[test]
    fn logs_are_lined_up_by_their_clocks_and_far_apart_ones_warned_of() {
        // b started 3.4 s after a: its intervals move by 3 whole intervals.
        let a = started(
            file(&[("latency", 0, &[1]), ("latency", 1000, &[2])]),
            10_000,
        );
        let b = started(file(&[("latency", 0, &[3, 4])]), 13_400);
        let merged = merge_hlogs(&[("a".into(), a), ("b".into(), b)]).unwrap();
        let counts: Vec<(u128, u64)> = (merged.intervals.iter())
            .map(|m| (m.start.as_millis(), m.histogram.len()))
            .collect();
        assert_eq!(counts, [(0, 1), (1000, 1), (3000, 2)]);
        assert_eq!(
            merged.start_time,
            Some(std::time::UNIX_EPOCH + Duration::from_secs(10))
        );
        assert!(
            merged.warnings.iter().any(|w| w.contains("3400 ms apart")),
            "{:?}",
            merged.warnings
        );
        // Agents a few milliseconds apart share their intervals, no warning.
        let a = started(file(&[("latency", 0, &[1])]), 10_000);
        let b = started(file(&[("latency", 0, &[2])]), 10_004);
        let merged = merge_hlogs(&[("a".into(), a), ("b".into(), b)]).unwrap();
        assert_eq!(merged.intervals.len(), 1);
        assert!(merged.warnings.is_empty());
    }
}
