//! The DNS Cache Manager (DNSCacheManager.java, resolve): a host listed
//! among its static hosts gets those addresses, whatever the resolver
//! setting; other hosts go to its DNS servers when it has a custom
//! resolver with servers, else to the system resolver. Static hosts become
//! `stampede run --resolve HOST:PORT:ADDR,...` for the group's server; a
//! host JMeter would ask other DNS servers for is refused; the system
//! resolver is what stampede uses, so that case is only a note.

use crate::model::Step;
use crate::tree::{Element, Prop};

/// The group's `--resolve` values and the note saying what was done, or
/// why the manager cannot be mapped.
pub(crate) fn resolve(e: &Element, steps: &[Step]) -> Result<(Vec<String>, String), String> {
    let what = e.describe();
    let statics: Vec<(&str, &str)> = (e.list("DNSCacheManager.hosts").iter())
        .filter_map(|(_, p)| match p {
            Prop::Element(host) => Some((
                host.text("StaticHost.Name")?.trim(),
                host.raw("StaticHost.Address").unwrap_or("").trim(),
            )),
            _ => None,
        })
        .collect();
    let servers = (e.list("DNSCacheManager.servers").iter())
        .filter(|(_, p)| matches!(p, Prop::Text(t) if !t.trim().is_empty()))
        .count();
    let custom = e.flag("DNSCacheManager.isCustomResolver").unwrap_or(false);
    let mut resolve = Vec::new();
    for (host, port) in steps.iter().filter_map(|s| host_port(&s.url)) {
        let entry = statics
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&host));
        match entry {
            Some((_, addresses)) => {
                // fromStaticHost splits on `\s*,\s*`; a name there would be
                // looked up again, which stampede's --resolve does not do.
                let addresses: Vec<&str> = addresses.split(',').map(str::trim).collect();
                if let Some(name) = addresses.iter().find(|a| a.parse::<std::net::IpAddr>().is_err()) {
                    return Err(format!(
                        "static host {host}'s address '{name}' is not an IP address (only addresses are mapped, as --resolve)"
                    ));
                }
                let value = format!("{host}:{port}:{}", addresses.join(","));
                if !resolve.contains(&value) {
                    resolve.push(value);
                }
            }
            None if custom && servers > 0 => {
                return Err(format!(
                    "host {host} is resolved by the manager's own DNS servers; stampede uses the system resolver (give stampede run --resolve)"
                ))
            }
            None => {}
        }
    }
    let note = match resolve.is_empty() {
        true => format!(
            "{what}: ignored: the hosts are resolved by the system resolver, as stampede resolves them; JMeter caches per thread (clearEachIteration: per iteration), stampede per worker, so only the number of lookups differs"
        ),
        false => format!(
            "{what}: its static hosts are run as --resolve {}",
            resolve.join(" --resolve ")
        ),
    };
    Ok((resolve, note))
}

/// The host and port of a mapped URL (`http://h:8080/p`); the port is the
/// scheme's default when not written.
fn host_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let default = if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, port.parse().ok()?),
        _ => (authority, default),
    };
    Some((host.trim_matches(['[', ']']).to_string(), port))
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_and_port_of_a_url() {
        assert_eq!(
            super::host_port("http://a.test:81/x"),
            Some(("a.test".into(), 81))
        );
        assert_eq!(
            super::host_port("https://a.test/x"),
            Some(("a.test".into(), 443))
        );
        assert_eq!(super::host_port("http://[::1]:9/"), Some(("::1".into(), 9)));
    }
}
