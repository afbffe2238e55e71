//! Each second's histograms in a result (`timeseries[].histograms`): the
//! interval log's `latency` series, by its tag name, encoded as the log
//! encodes it (HDR V2 deflate, base64). They make a merge of results
//! exact per second: the agents' histograms of one second add up, and the
//! merged second's percentiles are those of all its responses.

use crate::{decode_histogram, encode_histogram, LatencyHistogram, MetricsError, Snapshot};
use std::collections::BTreeMap;

/// The series a second keeps, by the interval log's tag names: `latency`
/// (from the intended send), the one its percentiles are of. The other
/// series of the log (`service`, `ttfb`, `connect`, `tls`) stay in the
/// `.hlog`: each would add as much again to the file (a 60 s run's result
/// at 5000 requests/s: 63 KB without histograms, 136 KB with `latency`,
/// 265 KB with `service` and `ttfb` too). Reading takes any tag, so that
/// series added later merge alike.
pub const SECOND_TAGS: [&str; 1] = ["latency"];

/// The histogram of `tag` in a snapshot (`None` for a tag not kept).
fn series<'a>(snapshot: &'a Snapshot, tag: &str) -> Option<&'a LatencyHistogram> {
    match tag {
        "latency" => Some(&snapshot.latency),
        _ => None,
    }
}

/// One second's histograms, encoded: `latency` always, even when empty
/// (so that a result written with them has the key in every second). Runs
/// in the aggregator once a second, never per request: about 0.7 ms for a
/// second of 5000 responses spread over three decades (release build),
/// 0.07% of one core whatever the rate.
pub fn encode_second(merged: &Snapshot) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for tag in SECOND_TAGS {
        if let Some(histogram) = series(merged, tag) {
            out.insert(tag.to_string(), encode_histogram(histogram));
        }
    }
    out
}

/// True when every second of a series has its histograms (a result written
/// before they were kept has none); an empty series has nothing to miss.
pub fn has_second_histograms(series: &[crate::SecondPoint]) -> bool {
    series.iter().all(|p| p.histograms.contains_key("latency"))
}

/// The histograms of one second added up over several inputs, by tag.
#[derive(Debug, Default)]
pub struct SecondSums {
    sums: BTreeMap<String, LatencyHistogram>,
}

impl SecondSums {
    /// Adds one input's encoded histograms of this second.
    pub fn add(&mut self, encoded: &BTreeMap<String, String>) -> Result<(), MetricsError> {
        for (tag, text) in encoded {
            let histogram = decode_histogram(text)?;
            match self.sums.get_mut(tag) {
                Some(sum) => sum
                    .add(&histogram)
                    .map_err(|e| MetricsError::Histogram(format!("{tag}: {e:?}")))?,
                None => {
                    self.sums.insert(tag.clone(), histogram);
                }
            }
        }
        Ok(())
    }

    /// The summed latency histogram (empty when no input had the second).
    pub fn latency(&self) -> LatencyHistogram {
        self.sums
            .get("latency")
            .cloned()
            .unwrap_or_else(crate::new_latency_histogram)
    }

    /// The sums encoded again, `latency` always, as [`encode_second`] does.
    pub fn encode(&self) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = self
            .sums
            .iter()
            .filter(|(tag, h)| *tag == "latency" || !h.is_empty())
            .map(|(tag, h)| (tag.clone(), encode_histogram(h)))
            .collect();
        out.entry("latency".to_string())
            .or_insert_with(|| encode_histogram(&crate::new_latency_histogram()));
        out
    }
}

/// The p50, p90, p99 and max of a histogram, 0 when it is empty (as a
/// second's point gives them).
pub fn second_percentiles(histogram: &LatencyHistogram) -> [u64; 4] {
    if histogram.is_empty() {
        return [0; 4];
    }
    [
        histogram.value_at_quantile(0.5),
        histogram.value_at_quantile(0.9),
        histogram.value_at_quantile(0.99),
        histogram.max(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(latencies: &[u64], connects: &[u64]) -> Snapshot {
        let mut s = Snapshot::default();
        for &v in latencies {
            s.latency.record(v).unwrap();
            s.service.record(v / 2 + 1).unwrap();
        }
        for &v in connects {
            s.connect.record(v).unwrap();
        }
        s
    }

    #[test]
    fn latency_is_kept_in_every_second_even_an_empty_one() {
        let empty = encode_second(&Snapshot::default());
        assert_eq!(empty.keys().collect::<Vec<_>>(), ["latency"]);
        assert!(decode_histogram(&empty["latency"]).unwrap().is_empty());
        let busy = encode_second(&snapshot(&[100, 200], &[50]));
        assert_eq!(busy.keys().collect::<Vec<_>>(), ["latency"]);
        let latency = decode_histogram(&busy["latency"]).unwrap();
        assert_eq!(latency.len(), 2);
    }

    #[test]
    fn sums_add_every_tag_and_encode_as_one_second_would() {
        let a = snapshot(&[100, 200, 300], &[]);
        let b = snapshot(&[5_000], &[40]);
        let mut sums = SecondSums::default();
        sums.add(&encode_second(&a)).unwrap();
        sums.add(&encode_second(&b)).unwrap();
        let mut both = a.clone();
        both.merge(&b);
        assert_eq!(sums.encode(), encode_second(&both));
        assert_eq!(
            second_percentiles(&sums.latency()),
            second_percentiles(&both.latency)
        );
        assert_eq!(second_percentiles(&sums.latency())[3], 5_003);
        // A tag this version does not write still adds up.
        let mut other = SecondSums::default();
        let service = |s: &Snapshot| [("service".to_string(), encode_histogram(&s.service))].into();
        other.add(&service(&a)).unwrap();
        other.add(&service(&b)).unwrap();
        assert_eq!(other.encode()["service"], encode_histogram(&both.service));
        let mut broken = encode_second(&a);
        broken.insert("latency".into(), "not base64!".into());
        assert!(SecondSums::default().add(&broken).is_err());
    }

    #[test]
    fn an_old_series_lacks_them() {
        let old = crate::merge::empty_second(0);
        assert!(!has_second_histograms(std::slice::from_ref(&old)));
        let mut new = crate::merge::empty_second(1);
        new.histograms = encode_second(&Snapshot::default());
        assert!(has_second_histograms(std::slice::from_ref(&new)));
        assert!(!has_second_histograms(&[new, old]));
        assert!(has_second_histograms(&[]));
    }
}
