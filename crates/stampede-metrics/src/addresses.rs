//! Which of the target's addresses a run's connections went to (`--dns`,
//! `--dns-ttl`, several `--resolve` addresses, a name with several
//! addresses): the result's `dns` object, and its merge over agents.

use serde::{Deserialize, Serialize};

/// How the target's name became addresses, and how many connections each got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DnsUse {
    /// `first`, `round-robin` or `random` (`--dns`).
    pub mode: String,
    /// `--dns-ttl` in seconds, when the name was resolved again during the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ttl_s: Option<f64>,
    /// Times the name was resolved (the first time included).
    pub resolutions: u64,
    /// Re-resolutions that failed (the addresses in use were kept).
    #[serde(default)]
    pub failures: u64,
    /// Every address the name gave during the run, in the order first seen.
    pub addresses: Vec<AddressUse>,
}

/// One address and the connections opened (or tried) to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressUse {
    /// `127.0.0.1:8080` or `[::1]:8080`.
    pub address: String,
    /// Connections the client opened or tried to open to it (each is one
    /// of `connections.attempts`).
    pub connections: u64,
}

/// Agents' `dns` objects as one: connections added up per address (in
/// the order first seen), resolutions and failures summed.
pub fn merge_dns<'a>(uses: impl Iterator<Item = &'a DnsUse>) -> Option<DnsUse> {
    uses.fold(None, |merged: Option<DnsUse>, one| {
        let Some(mut merged) = merged else {
            return Some(one.clone());
        };
        merged.resolutions += one.resolutions;
        merged.failures += one.failures;
        for address in &one.addresses {
            match merged
                .addresses
                .iter_mut()
                .find(|a| a.address == address.address)
            {
                Some(known) => known.connections += address.connections,
                None => merged.addresses.push(address.clone()),
            }
        }
        Some(merged)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dns(addresses: &[(&str, u64)]) -> DnsUse {
        DnsUse {
            mode: "round-robin".into(),
            ttl_s: None,
            resolutions: 1,
            failures: 0,
            addresses: addresses
                .iter()
                .map(|&(address, connections)| AddressUse {
                    address: address.into(),
                    connections,
                })
                .collect(),
        }
    }

    #[test]
    fn agents_add_up_per_address() {
        let a = dns(&[("127.0.0.1:80", 3), ("127.0.0.2:80", 4)]);
        let b = dns(&[("127.0.0.2:80", 1), ("127.0.0.3:80", 5)]);
        let merged = merge_dns([&a, &b].into_iter()).unwrap();
        assert_eq!(merged.resolutions, 2);
        assert_eq!(
            merged.addresses,
            dns(&[
                ("127.0.0.1:80", 3),
                ("127.0.0.2:80", 5),
                ("127.0.0.3:80", 5)
            ])
            .addresses
        );
        assert!(merge_dns(std::iter::empty()).is_none());
    }
}
