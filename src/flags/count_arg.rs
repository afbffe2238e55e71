//! The parser of count options (`-n`, `-c`, `-t`, `--redirects`,
//! `--pipeline`, `--streams`, `--conn-max-requests`, `--repeat`). Those
//! args allow negative numbers (`allow_negative_numbers`), so `-1` reaches
//! this parser and is refused with the range it is outside of, instead of
//! clap's "unexpected argument '-1'" whose tip (`-- -1`) would start the
//! script's arguments. clap's own u64 parser cannot say that: it fails on
//! the sign ("invalid digit").

/// A whole number in `0..=u64::MAX`.
pub fn count_u64(text: &str) -> Result<u64, String> {
    count(text, u64::MAX)
}

/// A whole number in `1..=u64::MAX` (a count of times something is done).
pub fn positive_u64(text: &str) -> Result<u64, String> {
    match count(text, u64::MAX)? {
        0 => Err("must be at least 1".to_string()),
        n => Ok(n),
    }
}

/// A whole number in `0..=u32::MAX`.
pub fn count_u32(text: &str) -> Result<u32, String> {
    count(text, u64::from(u32::MAX)).map(|n| n as u32)
}

/// A whole number in `0..=usize::MAX`.
pub fn count_usize(text: &str) -> Result<usize, String> {
    count(text, usize::MAX as u64).map(|n| n as usize)
}

fn count(text: &str, max: u64) -> Result<u64, String> {
    let value: i128 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number"))?;
    if value < 0 || value > i128::from(max) {
        return Err(format!("{value} is not in 0..={max}"));
    }
    Ok(value as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_and_too_large_name_the_range() {
        assert_eq!(count_u32("-1"), Err("-1 is not in 0..=4294967295".into()));
        assert_eq!(
            count_u32("4294967296"),
            Err("4294967296 is not in 0..=4294967295".into())
        );
        assert_eq!(count_u64("12"), Ok(12));
        assert_eq!(count_usize("0"), Ok(0));
        assert_eq!(positive_u64("0"), Err("must be at least 1".into()));
        assert_eq!(positive_u64("3"), Ok(3));
        assert!(count_u64("1.5").is_err());
    }
}
