//! Parsing of human durations for the serve flags (`500ms`, `10s`, `2m`, `1h`, `1.5s`).
//! Kept here so that the target depends on no other workspace crate.

use std::time::Duration;

/// A duration string that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: expected a number with a unit (us, ms, s, m, h), e.g. 500ms, 10s, 2m")]
pub struct DurationError {
    input: String,
}

/// Parses `N<unit>` with unit `us`, `ms`, `s`, `m` or `h`; a bare number means seconds.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let err = || DurationError {
        input: input.to_string(),
    };
    let s = input.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return Err(err());
    }
    let value: f64 = num.parse().map_err(|_| err())?;
    let secs_per_unit = match unit.trim() {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    let secs = value * secs_per_unit;
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        let table = [
            ("500ms", Duration::from_millis(500)),
            ("10s", Duration::from_secs(10)),
            ("2m", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
            ("7", Duration::from_secs(7)),
            ("1.5s", Duration::from_millis(1500)),
            ("250us", Duration::from_micros(250)),
        ];
        for (s, d) in table {
            assert_eq!(parse_duration(s).unwrap(), d, "{s}");
        }
        for bad in ["", "ms", "10x", "-1s", "1..2s", "s10"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
