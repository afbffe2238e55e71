//! One unit per table column: a column of latencies is shown in µs, ms or s
//! chosen by the magnitude of the whole column, with the unit in the
//! header, so a reader compares digits down a column instead of decoding
//! "850us" next to "1.23ms". Does not format single figures (cards say
//! their own unit through `crate::format`).

/// The unit a latency column is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LatencyUnit {
    Micros,
    Millis,
    Seconds,
}

impl LatencyUnit {
    /// The unit for a column of latencies in µs: the largest value decides,
    /// so every cell stays readable without an exponent.
    pub(crate) fn for_column(values_us: &[f64]) -> LatencyUnit {
        let top = values_us
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        if top < 1_000.0 {
            LatencyUnit::Micros
        } else if top < 1_000_000.0 {
            LatencyUnit::Millis
        } else {
            LatencyUnit::Seconds
        }
    }

    pub(crate) fn symbol(self) -> &'static str {
        match self {
            LatencyUnit::Micros => "µs",
            LatencyUnit::Millis => "ms",
            LatencyUnit::Seconds => "s",
        }
    }

    /// A value in µs written in this unit, without the symbol.
    pub(crate) fn format(self, micros: f64) -> String {
        match self {
            LatencyUnit::Micros => format!("{micros:.0}"),
            LatencyUnit::Millis => format!("{:.2}", micros / 1_000.0),
            LatencyUnit::Seconds => format!("{:.3}", micros / 1_000_000.0),
        }
    }

    /// A header with the unit: `p99 (ms)`.
    pub(crate) fn header(self, name: &str) -> String {
        format!("{name} ({})", self.symbol())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_value_picks_the_unit() {
        assert_eq!(
            LatencyUnit::for_column(&[120.0, 850.0]),
            LatencyUnit::Micros
        );
        let unit = LatencyUnit::for_column(&[850.0, 1_234.0, 99_000.0]);
        assert_eq!(unit, LatencyUnit::Millis);
        assert_eq!(unit.format(850.0), "0.85");
        assert_eq!(unit.format(1_234.0), "1.23");
        assert_eq!(unit.header("p99"), "p99 (ms)");
        assert_eq!(
            LatencyUnit::for_column(&[2_500_000.0, 900.0]),
            LatencyUnit::Seconds
        );
        assert_eq!(LatencyUnit::for_column(&[]), LatencyUnit::Micros);
    }
}
