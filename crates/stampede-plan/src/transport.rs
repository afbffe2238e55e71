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
    /// A client certificate to present (`--cert`/`--key`, ab's `-E`).
    pub client_cert: Option<ClientCert>,
    /// Lowest TLS version offered (`--tls-min`); default 1.2.
    pub min_version: Option<TlsVersion>,
    /// Highest TLS version offered (`--tls-max`); default 1.3.
    pub max_version: Option<TlsVersion>,
    /// Cipher suites offered, by rustls name (`--ciphers`); empty: rustls' defaults.
    pub ciphers: Vec<String>,
    /// Key exchange groups offered, by name (`--tls-groups`); empty: rustls' defaults.
    pub groups: Vec<String>,
}

/// A client certificate chain and its private key, both PEM (they may be
/// the same file, as with ab's `-E`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCert {
    /// The certificate chain (PEM).
    pub cert: PathBuf,
    /// The private key (PEM).
    pub key: PathBuf,
}

/// The TLS versions rustls speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

impl TlsVersion {
    /// Parses `1.2` or `1.3` (also `TLS1.2`, `tlsv1.3`).
    pub fn parse(text: &str) -> Result<TlsVersion, crate::PlanError> {
        let lower = text.trim().to_ascii_lowercase();
        let number = lower
            .strip_prefix("tlsv")
            .or_else(|| lower.strip_prefix("tls"))
            .unwrap_or(&lower);
        match number {
            "1.2" => Ok(TlsVersion::Tls12),
            "1.3" => Ok(TlsVersion::Tls13),
            _ => Err(crate::PlanError::Value {
                setting: crate::Setting::TlsVersion,
                text: text.to_string(),
                why: "rustls speaks only 1.2 and 1.3".into(),
            }),
        }
    }

    /// The version as the options write it (`1.2`).
    pub fn label(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "1.2",
            TlsVersion::Tls13 => "1.3",
        }
    }
}

impl Default for TlsSpec {
    fn default() -> Self {
        TlsSpec {
            insecure: false,
            ca_file: None,
            sni: None,
            resume: true,
            client_cert: None,
            min_version: None,
            max_version: None,
            ciphers: Vec::new(),
            groups: Vec::new(),
        }
    }
}

/// A plain HTTP proxy: `http://` targets are requested in absolute form
/// through it; `https://` targets are tunnelled with CONNECT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxySpec {
    /// The proxy's host name or IP address.
    pub host: String,
    /// The proxy's port.
    pub port: u16,
}

impl ProxySpec {
    /// Parses `host:port` (or `[v6]:port`, or `http://host:port`).
    pub fn parse(text: &str) -> Result<ProxySpec, crate::PlanError> {
        let bad = || crate::PlanError::Value {
            setting: crate::Setting::Proxy,
            text: text.to_string(),
            why: "expected HOST:PORT".into(),
        };
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
    /// The proxy to go through (`--proxy`); `None`: direct.
    pub proxy: Option<ProxySpec>,
    /// HTTP/1.1 requests in flight per connection (`--pipeline`); 1 = no pipelining.
    pub pipeline: usize,
    /// Speak HTTP/2: ALPN h2 over TLS, prior knowledge (h2c) over plain TCP.
    pub http2: bool,
    /// HTTP/2 or HTTP/3 streams in flight per connection (`--streams`).
    pub streams: usize,
    /// Speak HTTP/3 over QUIC (UDP; https only): `--http3` (rules in http3.rs).
    pub http3: bool,
    /// HTTP/3: send a resumed connection's first requests as 0-RTT data (`--0rtt`).
    pub zero_rtt: bool,
    /// `--resolve HOST:PORT:ADDR[,ADDR…]`: connect there instead of asking DNS.
    pub resolve: Vec<ResolveOverride>,
    /// When connections are retired and replaced (`--conn-max-requests`, `--conn-max-age`).
    pub lifetime: crate::ConnLifetime,
    /// Which of the name's addresses connections go to, and how often the
    /// name is resolved again (`--dns`, `--dns-ttl`).
    pub dns: crate::DnsPolicy,
    /// Which event loop drives HTTP/1.1 connections (`--io`).
    pub io: IoBackend,
    /// Redirects followed per request (`--redirects N`); 0: none.
    pub redirects: u32,
    /// `--compressed` and `--decode`.
    pub compression: CompressionSpec,
    /// `--sse`: responses watched as streams of events.
    pub stream: crate::StreamSpec,
    /// A WebSocket run (`ws://`, `wss://`): what each message carries.
    pub websocket: Option<crate::WebSocketSpec>,
}

/// Compressed responses (`--compressed`, `--decode`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompressionSpec {
    /// The `Accept-Encoding` the requests carry because of `--compressed`
    /// (or the user's own header of that name); `None`: not asked for.
    pub accept_encoding: Option<String>,
    /// Decode every encoded body and count its decoded bytes (`--decode`).
    pub decode: bool,
}

impl CompressionSpec {
    /// True when the run asked for compressed responses.
    pub fn asked(&self) -> bool {
        self.accept_encoding.is_some() || self.decode
    }
}

/// The event loop behind a worker's connections, as asked for (`--io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoBackend {
    /// A reactor where the run allows it (HTTP/1.1 plain or over TLS, closed
    /// or open model, no pipelining): io_uring where the kernel offers it, else epoll (the
    /// engine settles which); tokio otherwise.
    #[default]
    Auto,
    /// Always the epoll reactor; a run it cannot drive is refused.
    Epoll,
    /// Always the io_uring reactor; a run it cannot drive is refused.
    Uring,
    /// Always tokio (the path every protocol and load model supports).
    Tokio,
}

impl IoBackend {
    /// Parses `auto`, `epoll`, `uring` or `tokio`.
    pub fn parse(text: &str) -> Result<IoBackend, crate::PlanError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(IoBackend::Auto),
            "epoll" => Ok(IoBackend::Epoll),
            "uring" | "io_uring" | "io-uring" => Ok(IoBackend::Uring),
            "tokio" => Ok(IoBackend::Tokio),
            _ => Err(crate::PlanError::Value {
                setting: crate::Setting::Io,
                text: text.to_string(),
                why: "expected auto, epoll, uring or tokio".into(),
            }),
        }
    }

    /// The option's word for the backend (`auto`, `epoll`, `uring`, `tokio`).
    pub fn as_str(self) -> &'static str {
        match self {
            IoBackend::Auto => "auto",
            IoBackend::Epoll => "epoll",
            IoBackend::Uring => "uring",
            IoBackend::Tokio => "tokio",
        }
    }
}

/// The event loop that drives a run: `--io` settled against what the run needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventLoop {
    /// The epoll reactor.
    Epoll,
    /// The io_uring reactor.
    Uring,
    /// tokio.
    Tokio,
}

impl EventLoop {
    /// The name recorded in results (`plan.io`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventLoop::Epoll => "epoll",
            EventLoop::Uring => "uring",
            EventLoop::Tokio => "tokio",
        }
    }
}

/// One `--resolve HOST:PORT:ADDR[,ADDR…]` (curl's syntax, which also
/// takes several addresses: `--dns` picks among them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveOverride {
    /// The host name the override is for.
    pub host: String,
    /// The port the override is for.
    pub port: u16,
    /// In the order given; never empty.
    pub addrs: Vec<std::net::IpAddr>,
}

impl ResolveOverride {
    /// Parses `example.test:8443:127.0.0.1` or
    /// `example.test:8443:127.0.0.1,[::1]` (an IPv6 address may be bracketed).
    pub fn parse(text: &str) -> Result<ResolveOverride, crate::PlanError> {
        let bad = |why: &str| crate::PlanError::Value {
            setting: crate::Setting::Resolve,
            text: text.to_string(),
            why: why.into(),
        };
        let shape = "expected HOST:PORT:ADDRESS[,ADDRESS...]";
        let mut parts = text.splitn(3, ':');
        let host = parts
            .next()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad(shape))?;
        let port = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| bad(shape))?;
        let list = parts.next().ok_or_else(|| bad(shape))?;
        let addrs = list
            .split(',')
            .map(|a| {
                let a = a.trim();
                a.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse()
                    .map_err(|_| bad(&format!("'{a}' is not an IP address")))
            })
            .collect::<Result<Vec<std::net::IpAddr>, _>>()?;
        Ok(ResolveOverride {
            host: host.to_ascii_lowercase(),
            port,
            addrs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_resolve_overrides() {
        let r = ResolveOverride::parse("Example.test:8443:127.0.0.1").unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.addrs[0].to_string().as_str()),
            ("example.test", 8443, "127.0.0.1")
        );
        assert_eq!(
            ResolveOverride::parse("h:1:[::1]").unwrap().addrs[0].to_string(),
            "::1"
        );
        let several = ResolveOverride::parse("h:1:127.0.0.1,127.0.0.2, [::1]").unwrap();
        let several: Vec<String> = several.addrs.iter().map(|a| a.to_string()).collect();
        assert_eq!(several, ["127.0.0.1", "127.0.0.2", "::1"]);
        let error = ResolveOverride::parse("h:1:127.0.0.1,127.0.0.300")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("'127.0.0.300' is not an IP address"),
            "{error}"
        );
        for bad in [
            "h:1",
            "h:x:127.0.0.1",
            ":1:127.0.0.1",
            "h:1:nope",
            "h:1:127.0.0.1,",
        ] {
            assert!(ResolveOverride::parse(bad).is_err(), "{bad}");
        }
    }

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
