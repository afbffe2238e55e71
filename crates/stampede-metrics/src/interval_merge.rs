//! Agents' interval logs merged per interval, exactly: the intervals that
//! start at the same offset from their own log's start time are one
//! interval, their histograms added (HDR addition loses nothing), so each
//! merged interval's percentiles are those of all the agents' requests in it.

use crate::{HlogFile, LatencyHistogram};
use std::collections::BTreeMap;
use std::time::Duration;

/// One merged interval of one tag.
#[derive(Debug, Clone)]
pub struct MergedInterval {
    /// The tag the intervals share.
    pub tag: String,
    /// Since the log's start time.
    pub start: Duration,
    /// The longest of the merged intervals' lengths.
    pub length: Duration,
    /// The merged intervals' histograms added, µs.
    pub histogram: LatencyHistogram,
}

/// Merges logs (each with its name, for errors): the same tags in each,
/// intervals aligned by their start offset (to the millisecond, the
/// format's precision). The result is ordered by start, then by the first
/// log's tag order.
pub fn merge_hlogs(files: &[(String, HlogFile)]) -> Result<Vec<MergedInterval>, String> {
    let Some((first_name, first)) = files.first() else {
        return Ok(Vec::new());
    };
    let tags = first.tags();
    let mut sorted_tags = tags.clone();
    sorted_tags.sort();
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
    }
    let mut merged: BTreeMap<(u128, usize), MergedInterval> = BTreeMap::new();
    for (name, file) in files {
        for interval in &file.intervals {
            let order = tags.iter().position(|t| *t == interval.tag).unwrap_or(0);
            let key = (interval.start.as_millis(), order);
            let slot = merged.entry(key).or_insert_with(|| MergedInterval {
                tag: interval.tag.clone(),
                start: Duration::from_millis(interval.start.as_millis() as u64),
                length: interval.length,
                histogram: LatencyHistogram::new_from(&interval.histogram),
            });
            slot.length = slot.length.max(interval.length);
            slot.histogram
                .add(&interval.histogram)
                .map_err(|e| format!("{name} line {}: {e:?}", interval.line))?;
        }
    }
    Ok(merged.into_values().collect())
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
}
