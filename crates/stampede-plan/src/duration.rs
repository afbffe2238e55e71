//! Durations as people type them: `500ms`, `10s`, `2m`, `1h`, `1.5s`, `90` (seconds).

use crate::PlanError;
use std::time::Duration;

/// Parses `500ms`, `10s`, `2m`, `1h`, `250us`, `1.5s`; a bare number means seconds
/// (what wrk, ab and webbench users type).
pub fn parse_duration(text: &str) -> Result<Duration, PlanError> {
    let err = || PlanError::Duration(text.to_string());
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number.parse().map_err(|_| err())?;
    let seconds_per_unit = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds > 10.0 * 365.0 * 86400.0 {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Formats a duration the way [`parse_duration`] reads it back (`10s`, `1.5s`, `250ms`).
pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_secs_f64() * 1000.0;
    if ms < 1000.0 {
        format!("{}ms", trim_float(ms))
    } else {
        format!("{}s", trim_float(ms / 1000.0))
    }
}

fn trim_float(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_units_people_type() {
        let table = [
            ("500ms", 500_000),
            ("10s", 10_000_000),
            ("2m", 120_000_000),
            ("1h", 3_600_000_000),
            ("1.5s", 1_500_000),
            ("90", 90_000_000),
            ("250us", 250),
        ];
        for (text, micros) in table {
            assert_eq!(parse_duration(text).unwrap().as_micros(), micros, "{text}");
        }
    }

    #[test]
    fn rejects_garbage() {
        for text in ["", "s", "10x", "-1s", "1..2s", "ten seconds"] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for text in ["10s", "1.5s", "250ms"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
    }
}
