//! The loads of `stampede sweep`'s ladder as the user writes them: rates
//! `FROM:TO:STEP` or a list, connections as a list, each checked with one
//! line naming what is wrong.

use anyhow::bail;

/// Parses `1000:20000:1000` or `1000,2000,5000`.
pub fn parse_rates(spec: &str) -> anyhow::Result<Vec<f64>> {
    let bad = || {
        anyhow::anyhow!(
            "invalid rate steps '{spec}': expected FROM:TO:STEP or a comma-separated list"
        )
    };
    let rates: Vec<f64> = if spec.contains(':') {
        let parts: Vec<f64> = spec
            .split(':')
            .map(|p| p.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let [from, to, step] = parts[..] else {
            return Err(bad());
        };
        if !(from > 0.0 && to >= from && step > 0.0) {
            return Err(bad());
        }
        let count = ((to - from) / step).floor() as usize + 1;
        if count > 1000 {
            bail!("rate steps '{spec}' make {count} steps; at most 1000");
        }
        (0..count).map(|i| from + step * i as f64).collect()
    } else {
        spec.split(',')
            .map(|p| p.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?
    };
    if rates.is_empty() || rates.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(bad());
    }
    Ok(rates)
}

/// Parses `50,100,200`.
pub fn parse_connection_list(spec: &str) -> anyhow::Result<Vec<u64>> {
    let list: Vec<u64> = spec
        .split(',')
        .map(|p| p.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            anyhow::anyhow!("invalid connection steps '{spec}': expected e.g. 50,100,200")
        })?;
    if list.is_empty() || list.contains(&0) {
        bail!("invalid connection steps '{spec}': every step needs at least 1 connection");
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rate_ranges_and_lists() {
        assert_eq!(
            parse_rates("1000:3000:1000").unwrap(),
            vec![1000.0, 2000.0, 3000.0]
        );
        assert_eq!(parse_rates("5, 10").unwrap(), vec![5.0, 10.0]);
        for bad in ["", "1:2", "3:1:1", "0:10:1", "a,b", "1:1000000:1"] {
            assert!(parse_rates(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_connection_list("50,100").unwrap(), vec![50, 100]);
        assert!(parse_connection_list("0,1").is_err());
    }
}
