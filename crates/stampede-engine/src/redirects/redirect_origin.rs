//! The origins a redirect may lead to (`--redirects N`): an
//! [`Origin`] (scheme, host, port) read from a `Location`, and each
//! worker's [`OriginBook`] of the other origins its hops went to, each with
//! the [`Connector`] that reaches it. The book is filled on a hop's first
//! visit to an origin and kept for the run: the name is resolved once per
//! worker by the engine's rules (a `--resolve HOST:PORT:ADDR` override
//! first, else the system resolver, its first address), and an https origin
//! gets the plan's TLS options (`--insecure`, `--cacert`, `--cert`, versions,
//! ciphers, groups) with the new host as its server name (SNI) (`--sni`
//! names the run's own target only); over HTTP/2 the other origin is
//! reached over HTTP/2 too. The resolver is asked on the worker's
//! thread (it blocks once per new name; a literal address does not).
//!
//! Nothing here runs for a request that does not hop to another origin.

use crate::net::source_addrs::SourceAddrs;
use crate::net::transport::{build_tls_client, Connector, Endpoint};
use stampede_plan::{ResolveOverride, TlsSpec};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

/// Where requests go: scheme, host (lowercase, an IPv6 address in
/// brackets) and port (the scheme's default when the authority has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub https: bool,
    pub host: String,
    pub port: u16,
}

impl Origin {
    /// The origin of `scheme://authority` (`scheme` lowercase); `None` for
    /// another scheme or an authority that does not parse.
    pub(crate) fn parse(scheme: &str, authority: &str) -> Option<Origin> {
        let https = match scheme {
            "http" => false,
            "https" => true,
            _ => return None,
        };
        let authority = authority.rsplit('@').next().unwrap_or(authority);
        let authority = authority.to_ascii_lowercase();
        let default = if https { 443 } else { 80 };
        let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
            let (inner, after) = rest.split_once(']')?;
            let port = match after.strip_prefix(':') {
                Some(p) if !p.is_empty() => p.parse().ok()?,
                _ if after.is_empty() || after == ":" => default,
                _ => return None,
            };
            (format!("[{inner}]"), port)
        } else {
            match authority.rsplit_once(':') {
                Some((host, "")) => (host.to_string(), default),
                Some((host, port)) => (host.to_string(), port.parse().ok()?),
                None => (authority.clone(), default),
            }
        };
        (!host.is_empty()).then_some(Origin { https, host, port })
    }

    /// The value of the `Host` header a request to this origin carries.
    pub(crate) fn host_header(&self) -> String {
        let default = if self.https { 443 } else { 80 };
        if self.port == default {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The host as the resolver and TLS take it (no brackets).
    fn bare_host(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }
}

/// What a worker needs to reach another origin, from the plan.
#[derive(Debug, Clone, Default)]
pub(crate) struct ForeignRules {
    /// `--resolve` overrides (applied to any host they name).
    pub resolve: Vec<ResolveOverride>,
    /// The plan's TLS options (or rustls' defaults), for https origins.
    pub tls: Option<TlsSpec>,
    pub connect_timeout: Duration,
    /// The run speaks HTTP/2: another origin is reached over HTTP/2 too
    /// (TLS offers only h2 in ALPN and requires it; plain TCP, prior
    /// knowledge).
    pub http2: bool,
}

/// One other origin a hop went to and how to reach it (or why not).
#[derive(Debug)]
struct Known {
    origin: Origin,
    route: Result<Rc<Connector>, String>,
}

/// A worker's other origins, by the id hops name them with.
#[derive(Debug, Default)]
pub(crate) struct OriginBook {
    known: Vec<Known>,
}

/// At most this many other origins per worker: a redirect to one more is
/// not followed (counted offsite), so a server naming a new origin in every
/// answer cannot make the client resolve without end.
const MAX_ORIGINS: usize = 64;

impl OriginBook {
    /// The id of `origin`, reached by `rules` (resolved and set up on its
    /// first visit); `Ok(None)` when the book is full; `Err`: why it cannot be reached.
    pub(crate) fn intern(
        &mut self,
        origin: &Origin,
        rules: &ForeignRules,
    ) -> Result<Option<u16>, String> {
        let at = match self.known.iter().position(|k| &k.origin == origin) {
            Some(at) => at,
            None if self.known.len() >= MAX_ORIGINS => return Ok(None),
            None => {
                self.known.push(Known {
                    origin: origin.clone(),
                    route: route_to(origin, rules).map(Rc::new),
                });
                self.known.len() - 1
            }
        };
        match &self.known[at].route {
            Ok(_) => Ok(Some(at as u16)),
            Err(why) => Err(why.clone()),
        }
    }

    /// The origin of id `id`.
    pub(crate) fn origin(&self, id: u16) -> Option<&Origin> {
        self.known.get(usize::from(id)).map(|k| &k.origin)
    }

    /// The connector that reaches origin `id`.
    pub(crate) fn connector(&self, id: u16) -> Option<Rc<Connector>> {
        let known = self.known.get(usize::from(id))?;
        known.route.as_ref().ok().cloned()
    }
}

/// A connector for `origin`: its address by the engine's resolver rules,
/// TLS for https with its own server name.
fn route_to(origin: &Origin, rules: &ForeignRules) -> Result<Connector, String> {
    let host = origin.bare_host();
    let overridden = rules
        .resolve
        .iter()
        .find(|r| r.host.eq_ignore_ascii_case(host) && r.port == origin.port);
    let addr = match overridden {
        Some(r) => SocketAddr::new(r.addrs[0], origin.port),
        None => crate::net::dns::resolve_host(host, origin.port)
            .map_err(|e| e.to_string())?
            .remove(0),
    };
    let tls = if origin.https {
        let spec = TlsSpec {
            sni: None,
            ..rules.tls.clone().unwrap_or_default()
        };
        Some(build_tls_client(&spec, host, rules.http2).map_err(|e| e.to_string())?)
    } else {
        None
    };
    Ok(Connector {
        endpoint: Endpoint::Tcp(addr),
        picker: None,
        source_addrs: SourceAddrs::default(),
        tls,
        tunnel_to: None,
        connect_timeout: rules.connect_timeout,
        require_h2: rules.http2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(https: bool, host: &str, port: u16) -> Origin {
        Origin {
            https,
            host: host.into(),
            port,
        }
    }

    #[test]
    fn authorities_parse_with_default_ports() {
        assert_eq!(
            Origin::parse("http", "Example.TEST"),
            Some(origin(false, "example.test", 80))
        );
        assert_eq!(
            Origin::parse("https", "127.0.0.1:8443"),
            Some(origin(true, "127.0.0.1", 8443))
        );
        assert_eq!(
            Origin::parse("https", "[::1]"),
            Some(origin(true, "[::1]", 443))
        );
        assert_eq!(
            Origin::parse("http", "[::1]:81"),
            Some(origin(false, "[::1]", 81))
        );
        assert_eq!(Origin::parse("ftp", "example.test"), None);
        assert_eq!(Origin::parse("http", "host:port"), None);
        assert_eq!(origin(true, "a", 443).host_header(), "a");
        assert_eq!(origin(false, "a", 443).host_header(), "a:443");
    }

    #[test]
    fn the_book_resolves_once_and_names_what_fails() {
        let mut book = OriginBook::default();
        let rules = ForeignRules {
            resolve: vec![ResolveOverride {
                host: "elsewhere.test".into(),
                port: 81,
                addrs: vec!["127.0.0.2".parse().unwrap()],
            }],
            ..ForeignRules::default()
        };
        let away = origin(false, "elsewhere.test", 81);
        assert_eq!(book.intern(&away, &rules), Ok(Some(0)));
        assert_eq!(book.intern(&away, &rules), Ok(Some(0)));
        let connector = book.connector(0).unwrap();
        assert!(matches!(connector.endpoint, Endpoint::Tcp(a) if a.to_string() == "127.0.0.2:81"));
        let literal = origin(false, "127.0.0.1", 9);
        assert_eq!(book.intern(&literal, &rules), Ok(Some(1)));
        let unknown = origin(false, "no-such-host.invalid", 80);
        assert!(book.intern(&unknown, &rules).is_err());
    }
}
