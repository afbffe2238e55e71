//! Each second's histograms in a result (`timeseries[].histograms`): the
//! interval log's `latency` series, by its tag name, encoded as the log
//! encodes it (HDR V2 deflate, base64). They make a merge of results
//! exact per second: the agents' histograms of one second add up, and the
//! merged second's percentiles are those of all its responses.

use crate::{decode_histogram, encode_histogram, LatencyHistogram, MetricsError, Snapshot};
use std::collections::BTreeMap;

/// The series a second keeps, by the interval log's tag names: `latency`
/// (from the intended send), the one its percentiles are of, and `service`
/// (from the actual send: what the server took), so that a window or a
/// merge of results has both exactly. The log's other series (`ttfb`,
/// `connect`, `tls`, per target) stay in the `.hlog`: each would add about
/// as much again to the file (a 60 s run's result at 5000 requests/s: 63 KB
/// without histograms, 136 KB with `latency`, about 200 KB with `service`
/// too). Reading takes any tag, so that series added later merge alike.
pub const SECOND_TAGS: [&str; 2] = ["latency", "service"];

/// The histogram of `tag` in a snapshot (`None` for a tag not kept).
fn series<'a>(snapshot: &'a Snapshot, tag: &str) -> Option<&'a LatencyHistogram> {
    match tag {
        "latency" => Some(&snapshot.latency),
        "service" => Some(&snapshot.service),
        _ => None,
    }
}

/// One second's histograms, encoded: every tag of [`SECOND_TAGS`], even
/// empty (so that a result written with them has the keys in every
/// second, and a merge can tell a second with no responses from a result
/// that never kept the tag). Runs in the aggregator once a second, never
/// per request: about 0.7 ms a histogram for a second of 5000 responses
/// spread over three decades (release build), 0.07% of one core each
/// whatever the rate.
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
        self.sum("latency")
            .unwrap_or_else(crate::new_latency_histogram)
    }

    /// The summed histogram of `tag`, if some input had it.
    pub fn sum(&self, tag: &str) -> Option<LatencyHistogram> {
        self.sums.get(tag).cloned()
    }

    /// The sums encoded again as [`encode_second`] does: `latency` always,
    /// the other [`SECOND_TAGS`] whenever an input had them (even empty),
    /// any other tag when it holds something.
    pub fn encode(&self) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = self
            .sums
            .iter()
            .filter(|(tag, h)| SECOND_TAGS.contains(&tag.as_str()) || !h.is_empty())
            .map(|(tag, h)| (tag.clone(), encode_histogram(h)))
            .collect();
        out.entry("latency".to_string())
            .or_insert_with(|| encode_histogram(&crate::new_latency_histogram()));
        out
    }
}

/// The tags every second of every series carries (a result written before
/// a tag was kept lacks it): the only ones whose sums are exact. `latency`
/// is among them whenever [`has_second_histograms`] holds for each series.
pub fn tags_in_every_second<'a>(
    series: impl IntoIterator<Item = &'a [crate::SecondPoint]>,
) -> Vec<String> {
    let mut common: Option<Vec<String>> = None;
    for point in series.into_iter().flatten() {
        let kept = common.get_or_insert_with(|| point.histograms.keys().cloned().collect());
        kept.retain(|tag| point.histograms.contains_key(tag));
    }
    common.unwrap_or_default()
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
    fn latency_and_service_are_kept_in_every_second_even_an_empty_one() {
        let empty = encode_second(&Snapshot::default());
        assert_eq!(empty.keys().collect::<Vec<_>>(), ["latency", "service"]);
        assert!(decode_histogram(&empty["latency"]).unwrap().is_empty());
        assert!(decode_histogram(&empty["service"]).unwrap().is_empty());
        let busy = encode_second(&snapshot(&[100, 200], &[50]));
        assert_eq!(busy.keys().collect::<Vec<_>>(), ["latency", "service"]);
        let latency = decode_histogram(&busy["latency"]).unwrap();
        assert_eq!(latency.len(), 2);
        let service = decode_histogram(&busy["service"]).unwrap();
        assert_eq!(
            (service.len(), service.min(), service.max()),
            (2, 51, 101),
            "the service times, not the latencies"
        );
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
        assert_eq!(
            encode_histogram(&sums.sum("service").unwrap()),
            encode_histogram(&both.service)
        );
        assert_eq!(sums.sum("service").unwrap().max(), 2_501);
        // An empty service time is kept as the second wrote it.
        let mut quiet = SecondSums::default();
        quiet.add(&encode_second(&Snapshot::default())).unwrap();
        assert_eq!(quiet.encode(), encode_second(&Snapshot::default()));
        // A tag this version does not write still adds up.
        let mut other = SecondSums::default();
        let connect = |s: &Snapshot| [("connect".to_string(), encode_histogram(&s.connect))].into();
        other.add(&connect(&a)).unwrap();
        other.add(&connect(&b)).unwrap();
        assert_eq!(other.encode()["connect"], encode_histogram(&both.connect));
        let mut broken = encode_second(&a);
        broken.insert("latency".into(), "not base64!".into());
        assert!(SecondSums::default().add(&broken).is_err());
    }

    #[test]
    fn only_tags_every_second_has_are_common() {
        let mut new = crate::merge::empty_second(0);
        new.histograms = encode_second(&Snapshot::default());
        let mut older = crate::merge::empty_second(1);
        older
            .histograms
            .insert("latency".into(), new.histograms["latency"].clone());
        let both = [new.clone(), new.clone()];
        assert_eq!(tags_in_every_second([&both[..]]), ["latency", "service"]);
        let mixed = [new.clone(), older];
        assert_eq!(tags_in_every_second([&both[..], &mixed[..]]), ["latency"]);
        assert!(tags_in_every_second([&[][..]]).is_empty());
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
