//! `--source-addrs`: local IPv4/IPv6 addresses as a range
//! (`127.0.0.2-127.0.0.9`) or a comma-separated list.

use crate::{PlanError, Setting};
use std::net::{IpAddr, Ipv4Addr};

/// At most this many addresses: more would only hide a typo in a range.
const MAX_ADDRESSES: u32 = 1024;

/// Parses `127.0.0.2-127.0.0.9`, `127.0.0.2,127.0.0.3` or `::1`.
pub fn parse_address_list(text: &str) -> Result<Vec<IpAddr>, PlanError> {
    let invalid = |why: &str| PlanError::Value {
        setting: Setting::SourceAddrs,
        text: text.to_string(),
        why: why.to_string(),
    };
    let mut addrs = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((from, to)) = part.split_once('-') {
            let from: Ipv4Addr = from
                .trim()
                .parse()
                .map_err(|_| invalid("a range is IPv4 FROM-TO"))?;
            let to: Ipv4Addr = to
                .trim()
                .parse()
                .map_err(|_| invalid("a range is IPv4 FROM-TO"))?;
            let (low, high) = (u32::from(from), u32::from(to));
            if high < low || high - low >= MAX_ADDRESSES {
                return Err(invalid(
                    "the range must ascend and hold at most 1024 addresses",
                ));
            }
            addrs.extend((low..=high).map(|n| IpAddr::V4(Ipv4Addr::from(n))));
        } else {
            addrs.push(part.parse().map_err(|_| invalid("not an IP address"))?);
        }
    }
    if addrs.is_empty() {
        return Err(invalid("no address given"));
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_lists() {
        let addrs = parse_address_list("127.0.0.2-127.0.0.4").unwrap();
        assert_eq!(addrs.len(), 3);
        assert_eq!(addrs[2].to_string(), "127.0.0.4");
        assert_eq!(parse_address_list("127.0.0.2, ::1").unwrap().len(), 2);
        for bad in [
            "",
            "x",
            "127.0.0.9-127.0.0.2",
            "10.0.0.0-10.1.0.0",
            "::1-::2",
        ] {
            assert!(parse_address_list(bad).is_err(), "{bad}");
        }
    }
}
