//! The random id that names one result ([`new_run_id`]): in the result file
//! (`run_id`), the summary's header and every `--metrics` series, so a
//! scraped series and a saved file can be matched. Sixteen hex digits from
//! the operating system's random source (getrandom: no seeding to get wrong,
//! no userspace generator to keep).

/// A fresh run id: 64 random bits as 16 lowercase hex digits. Falls back to
/// the clock and process id where the system offers no random source (the
/// id must be unique, not secret).
pub fn new_run_id() -> String {
    let mut bytes = [0u8; 8];
    let value = match getrandom::fill(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => fallback(),
    };
    format!("{value:016x}")
}

fn fallback() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_sixteen_hex_digits_and_differ() {
        let (a, b) = (new_run_id(), new_run_id());
        assert_eq!(a.len(), 16);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
