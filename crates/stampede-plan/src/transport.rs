//! How requests reach the target: TCP or a Unix socket, plain or TLS, direct
//! or through a proxy, and how many requests share a connection at once.

use std::path::PathBuf;

/// TLS settings of an `https://` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSpec {
    /// Accept any certificate (`--insecure`): for self-signed test servers.
    pub insecure: bool,
    /// Trust these PEM certificates instead of the system roots (`--cacert`).
    pub ca_file: Option<PathBuf>,
    /// Server name sent and verified (`--sni`); default: the URL's host.
    pub sni: Option<String>,
    /// Resume TLS sessions on reconnect; `false` measures full handshakes.
    pub resume: bool,
}

impl Default for TlsSpec {
    fn default() -> Self {
        TlsSpec {
            insecure: false,
            ca_file: None,
            sni: None,
            resume: true,
        }
    }
}

/// A plain HTTP proxy: `http://` targets are requested in absolute form
/// through it; `https://` targets are tunnelled with CONNECT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxySpec {
    pub host: String,
    pub port: u16,
}

impl ProxySpec {
    /// Parses `host:port` (or `[v6]:port`, or `http://host:port`).
    pub fn parse(text: &str) -> Result<ProxySpec, crate::PlanError> {
        let bad =
            || crate::PlanError::Invalid(format!("invalid proxy '{text}': expected HOST:PORT"));
        let trimmed = text
            .trim()
            .trim_start_matches("http://")
            .trim_end_matches('/');
        let (host, port) = trimmed.rsplit_once(':').ok_or_else(bad)?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port: u16 = port.parse().map_err(|_| bad())?;
        if host.is_empty() || port == 0 {
            return Err(bad());
        }
        Ok(ProxySpec {
            host: host.to_string(),
            port,
        })
    }
}

/// Everything about the way to the target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TransportSpec {
    /// Connect to this Unix socket instead of the URL's host and port.
    pub unix_socket: Option<PathBuf>,
    /// Present exactly when the URL is `https://`.
    pub tls: Option<TlsSpec>,
    pub proxy: Option<ProxySpec>,
    /// HTTP/1.1 requests in flight per connection (`--pipeline`); 1 = no pipelining.
    pub pipeline: usize,
    /// Speak HTTP/2: ALPN h2 over TLS, prior knowledge (h2c) over plain TCP.
    pub http2: bool,
    /// HTTP/2 streams in flight per connection (`--streams`).
    pub streams: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proxies() {
        let proxy = ProxySpec::parse("127.0.0.1:3128").unwrap();
        assert_eq!((proxy.host.as_str(), proxy.port), ("127.0.0.1", 3128));
        assert_eq!(ProxySpec::parse("http://[::1]:8080/").unwrap().host, "::1");
        for bad in ["", "host", "host:0", ":80", "host:x"] {
            assert!(ProxySpec::parse(bad).is_err(), "{bad}");
        }
    }
}
