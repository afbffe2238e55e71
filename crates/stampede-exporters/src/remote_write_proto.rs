//! Prometheus remote-write 1.0's wire format: the `WriteRequest` protobuf
//! (prometheus/prompb/remote.proto and types.proto, only the fields 1.0
//! needs) as hand-written prost messages, so no protoc is needed, and the
//! snappy block compression the protocol asks for. [`flatten`] turns the
//! shared series list (metrics_series.rs) into the sample names a scrape
//! of `--metrics` gives (`_total`, `_bucket{le}`, `_sum`, `_count`).

use crate::metrics_series::{self, Family, Labels, Values};
use prost::Message;
use std::collections::BTreeMap;

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    /// `timeseries`: every series of the push.
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// `prometheus.TimeSeries`: labels sorted by name, samples by time.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    /// `labels`: the series' name (`__name__`) and labels.
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    /// `samples`: its values, oldest first.
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, prost::Message)]
pub struct Label {
    /// `name`: the label's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// `value`: the label's value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`: the timestamp in milliseconds since the epoch.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// `value`: the sample's value.
    #[prost(double, tag = "1")]
    pub value: f64,
    /// `timestamp`: when it was taken, in milliseconds since the Unix epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// One series' labels (with `__name__`, sorted) and its value at one instant.
pub type Point = (Vec<Label>, f64);

/// Every sample of the families, labelled with the run's labels.
pub fn flatten(families: &[Family], run_labels: &Labels) -> Vec<Point> {
    let mut points = Vec::new();
    let mut add = |name: String, own: &[(&str, String)], value: f64| {
        let mut labels: Vec<Label> = std::iter::once(("__name__", name))
            .chain(run_labels.iter().cloned())
            .chain(own.iter().cloned())
            .map(|(name, value)| Label {
                name: name.to_string(),
                value,
            })
            .collect();
        labels.sort();
        points.push((labels, value));
    };
    for family in families {
        let name = family.name;
        match &family.values {
            Values::Counter(members) => {
                for (labels, value) in members {
                    add(format!("{name}_total"), labels, *value as f64);
                }
            }
            Values::Gauge(members) => {
                for (labels, value) in members {
                    add(name.to_string(), labels, *value);
                }
            }
            Values::Histogram {
                sum,
                count,
                buckets,
            } => {
                let mut cumulative = 0;
                for (bound, n) in buckets {
                    cumulative += n;
                    let le = [("le", metrics_series::le_label(*bound))];
                    add(format!("{name}_bucket"), &le, cumulative as f64);
                }
                add(format!("{name}_sum"), &[], *sum);
                add(format!("{name}_count"), &[], *count as f64);
            }
        }
    }
    points
}

/// One request holding every point of `readings` (oldest first, each at
/// its timestamp), snappy-compressed as the protocol sends it.
pub fn encode(readings: &[(i64, Vec<Point>)]) -> Result<Vec<u8>, snap::Error> {
    let mut series: BTreeMap<&[Label], Vec<Sample>> = BTreeMap::new();
    for (timestamp, points) in readings {
        for (labels, value) in points {
            series.entry(labels).or_default().push(Sample {
                value: *value,
                timestamp: *timestamp,
            });
        }
    }
    let request = WriteRequest {
        timeseries: series
            .into_iter()
            .map(|(labels, samples)| TimeSeries {
                labels: labels.to_vec(),
                samples,
            })
            .collect(),
    };
    snap::raw::Encoder::new().compress_vec(&request.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics_feed::Reading;

    #[test]
    fn a_request_decodes_back_with_one_series_per_label_set_and_samples_in_order() {
        let reading = Reading {
            requests: vec![("success", "200".into(), 7)],
            ..Reading::default()
        };
        let run = metrics_series::run_labels("abc", Some(1));
        let points = flatten(&metrics_series::families(&reading), &run);
        let body = encode(&[(1000, points.clone()), (2000, points)]).expect("encodes");
        let raw = snap::raw::Decoder::new()
            .decompress_vec(&body)
            .expect("snappy");
        let request = WriteRequest::decode(raw.as_slice()).expect("protobuf");
        let requests = request
            .timeseries
            .iter()
            .find(|s| {
                s.labels
                    .iter()
                    .any(|l| l.value == "stampede_requests_total")
            })
            .expect("the request counter");
        let names: Vec<&str> = requests.labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["__name__", "agent", "code", "outcome", "run_id"]);
        let samples: Vec<(f64, i64)> = requests
            .samples
            .iter()
            .map(|s| (s.value, s.timestamp))
            .collect();
        assert_eq!(samples, [(7.0, 1000), (7.0, 2000)]);
        let infinite = request.timeseries.iter().any(|s| {
            s.labels.iter().any(|l| l.name == "le" && l.value == "+Inf")
                && s.labels
                    .iter()
                    .any(|l| l.value == "stampede_latency_seconds_bucket")
        });
        assert!(infinite);
    }
}
