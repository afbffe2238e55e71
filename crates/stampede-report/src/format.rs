//! Number formatting shared by the human-readable renderers.

/// A latency in µs as the shortest readable unit: `850us`, `1.23ms`, `2.50s`.
pub fn format_latency_us(micros: f64) -> String {
    if micros < 1000.0 {
        format!("{micros:.0}us")
    } else if micros < 1_000_000.0 {
        format!("{:.2}ms", micros / 1000.0)
    } else {
        format!("{:.2}s", micros / 1_000_000.0)
    }
}

/// Bytes in binary units: `512B`, `1.50KiB`, `61.20MiB`.
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0}{}", UNITS[0])
    } else {
        format!("{value:.2}{}", UNITS[unit])
    }
}

/// An integer with thousands separators: `1,234,567`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, singular for exactly one: `1 thread`, `2 threads`,
/// `1,024 connections`. `noun` is the singular; the plural adds an `s`.
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", format_count(n))
    }
}

/// A named plan's title (`checkout.toml · 3 steps`): its name and how many
/// requests it walks (a scenario's steps are its mix's targets); `None` for
/// an unnamed plan, whose title is its request.
pub(crate) fn plan_title(result: &stampede_metrics::RunResult) -> Option<String> {
    let name = result.plan.name.as_deref()?;
    let steps = result.targets.len().max(1) as u64;
    Some(format!("{name} · {}", counted(steps, "step")))
}

/// A per-second rate with two decimals and separators: `12,345.67`.
pub fn format_rate(rate: f64) -> String {
    let whole = rate.trunc() as u64;
    let cents = ((rate - rate.trunc()) * 100.0).round() as u64;
    let (whole, cents) = if cents == 100 {
        (whole + 1, 0)
    } else {
        (whole, cents)
    };
    format!("{}.{cents:02}", format_count(whole))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_latency_us(850.0), "850us");
        assert_eq!(format_latency_us(1234.0), "1.23ms");
        assert_eq!(format_latency_us(2_500_000.0), "2.50s");
        assert_eq!(format_bytes(512.0), "512B");
        assert_eq!(format_bytes(1536.0), "1.50KiB");
        assert_eq!(format_count(1_234_567), "1,234,567");
        assert_eq!(format_count(12), "12");
        assert_eq!(format_rate(12345.678), "12,345.68");
        assert_eq!(format_rate(0.999), "1.00");
        assert_eq!(counted(1, "thread"), "1 thread");
        assert_eq!(counted(0, "error"), "0 errors");
        assert_eq!(counted(1234, "connection"), "1,234 connections");
    }
}
