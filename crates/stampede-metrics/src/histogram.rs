//! Latency histograms (HDR, 1 µs to 1 h, 3 significant digits), their summary
//! figures, and the lossless text encoding used in result files
//! (HDR V2 + deflate, base64), so saved runs can be merged and re-analysed.

use crate::MetricsError;
use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency in microseconds.
pub type LatencyHistogram = Histogram<u64>;

/// Highest latency recorded: one hour, in µs; longer values are clamped.
/// Kept with the encoder, whose canonical form spans it.
pub(crate) use crate::histogram_encoder::MAX_TRACKED_US;

/// An empty latency histogram: 3 significant digits, growing to the largest
/// value recorded. Starting small matters: a histogram sized for the full hour
/// is ~190 KiB of counters, and every worker starts fresh ones several times
/// a second; zeroing them was 23% of the load generator's user-space
/// instructions (callgrind). Typical latencies need a fifth of that.
pub fn new_latency_histogram() -> LatencyHistogram {
    Histogram::new(3).expect("3 significant digits are valid")
}

/// Records `micros` (at least 1, at most `MAX_TRACKED_US`: an hour).
#[inline]
pub fn record_latency(histogram: &mut LatencyHistogram, micros: u64) {
    // Growing can only fail past usize on 32-bit targets; the value is
    // clamped far below that, so a failure would be an invariant breach.
    let _ = histogram.record(micros.clamp(1, MAX_TRACKED_US));
}

/// Encodes a histogram as base64 of its HDR V2 deflate serialization.
pub fn encode_histogram(histogram: &LatencyHistogram) -> String {
    // Canonical form: the full one-hour range, whatever range this histogram
    // grew to, so that equal contents always encode to equal text (merging a
    // single result gives it back byte for byte).
    // A histogram read from elsewhere may hold values beyond the hour: then
    // it is encoded as it is.
    let mut text = String::new();
    crate::histogram_encoder::encode_with_thread_encoder(histogram, 3, &mut text);
    text
}

/// Decodes what [`encode_histogram`] wrote.
pub fn decode_histogram(text: &str) -> Result<LatencyHistogram, MetricsError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| MetricsError::Histogram(e.to_string()))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| MetricsError::Histogram(format!("{e:?}")))
}

/// The figures every report shows, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Lowest.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// Highest.
    pub max: u64,
    /// Median.
    pub p50: u64,
    /// 66th percentile.
    pub p66: u64,
    /// 75th percentile.
    pub p75: u64,
    /// 80th percentile.
    pub p80: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 98th percentile.
    pub p98: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// 99.99th percentile.
    pub p99_99: u64,
    /// Share of samples within mean ± stdev, in percent (wrk's "+/- Stdev").
    pub within_stdev_pct: f64,
}

impl LatencySummary {
    /// Summarizes a histogram; all zero when it is empty.
    pub fn of(histogram: &LatencyHistogram) -> LatencySummary {
        if histogram.is_empty() {
            return LatencySummary::default();
        }
        let q = |quantile: f64| histogram.value_at_quantile(quantile);
        let mean = histogram.mean();
        let stdev = histogram.stdev();
        let (low, high) = (mean - stdev, mean + stdev);
        let within: u64 = histogram
            .iter_recorded()
            .filter(|v| {
                let value = v.value_iterated_to() as f64;
                value >= low && value <= high
            })
            .map(|v| v.count_at_value())
            .sum();
        LatencySummary {
            min: histogram.min(),
            mean,
            stdev,
            max: histogram.max(),
            p50: q(0.50),
            p66: q(0.66),
            p75: q(0.75),
            p80: q(0.80),
            p90: q(0.90),
            p95: q(0.95),
            p98: q(0.98),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            within_stdev_pct: 100.0 * within as f64 / histogram.len() as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_losslessly() {
        let mut histogram = new_latency_histogram();
        for value in [1, 10, 100, 1_000, 123_456, 59_000_000] {
            histogram.record_n(value, 3).unwrap();
        }
        let decoded = decode_histogram(&encode_histogram(&histogram)).unwrap();
        assert_eq!(decoded.len(), histogram.len());
        assert_eq!(decoded.max(), histogram.max());
        assert_eq!(
            decoded.value_at_quantile(0.5),
            histogram.value_at_quantile(0.5)
        );
    }

    #[test]
    fn summary_of_a_known_distribution() {
        let mut histogram = new_latency_histogram();
        for value in 1..=1000u64 {
            histogram.record(value).unwrap();
        }
        let summary = LatencySummary::of(&histogram);
        assert_eq!(summary.min, 1);
        assert_eq!(summary.max, 1000);
        assert!((summary.mean - 500.5).abs() < 1.0);
        assert_eq!(summary.p50, 500);
        assert_eq!(summary.p99, 990);
        // A uniform distribution has ~57.7% of its mass within one stdev.
        assert!((summary.within_stdev_pct - 57.7).abs() < 1.0);
    }

    #[test]
    fn grows_to_what_is_recorded_and_clamps_at_one_hour() {
        let mut histogram = new_latency_histogram();
        record_latency(&mut histogram, 250);
        let small = histogram.distinct_values();
        record_latency(&mut histogram, u64::MAX);
        assert!(
            histogram.distinct_values() > small,
            "grew for the large value"
        );
        assert!(histogram.equivalent(histogram.max(), MAX_TRACKED_US));
        let mut total = new_latency_histogram();
        total.add(&histogram).unwrap();
        assert_eq!(total.len(), 2);
    }

    #[test]
    fn garbage_does_not_decode() {
        assert!(decode_histogram("not base64!").is_err());
        assert!(decode_histogram("aGVsbG8=").is_err());
    }
}
