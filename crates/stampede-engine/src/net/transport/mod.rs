//! How a connection reaches the target: TCP (optionally from `--source-addrs`)
//! or a Unix socket, directly or through a proxy, then TLS when the URL is
//! https. The [`Connector`] is built once per worker; `connect` is called for
//! every new connection and reports what each phase took.

mod proxy;
pub(crate) mod quic;
mod stream;
mod tls;
mod tls_choice;

pub(crate) use stream::Stream;

/// The parts of a [`Connector`] that cross to a worker thread.
#[derive(Debug, Clone)]
pub(crate) struct ConnectorSpec {
    pub endpoint: Endpoint,
    /// The target's addresses with `--dns`/`--dns-ttl` (dns.rs): each new
    /// connection takes one instead of `endpoint`'s.
    pub addresses: Option<std::sync::Arc<crate::net::dns::AddressBook>>,
    pub source_addrs: Vec<std::net::IpAddr>,
    pub tls: Option<TlsClient>,
    pub tunnel_to: Option<String>,
    pub connect_timeout: Duration,
    pub require_h2: bool,
}

impl ConnectorSpec {
    /// The worker's connector; `worker` offsets its rotation of source
    /// addresses, `seed` (the worker's, new each run) draws `--dns random`.
    pub(crate) fn build(&self, worker: usize, seed: u64) -> Connector {
        Connector {
            endpoint: self.endpoint.clone(),
            picker: self
                .addresses
                .as_ref()
                .map(|book| book.picker(worker, seed)),
            source_addrs: SourceAddrs::new(self.source_addrs.clone(), worker),
            tls: self.tls.clone(),
            tunnel_to: self.tunnel_to.clone(),
            connect_timeout: self.connect_timeout,
            require_h2: self.require_h2,
        }
    }
}
pub(crate) use tls::{build_tls_client, HandshakeReport, TlsClient};

use crate::net::outcome_class::{classify_connect, Stage};
use crate::net::source_addrs::SourceAddrs;
use stampede_metrics::ErrorKind;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::net::UnixStream;

/// Where the bytes go first.
#[derive(Debug, Clone)]
pub(crate) enum Endpoint {
    /// The target itself, or the proxy.
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Everything needed to open one connection.
#[derive(Debug)]
pub(crate) struct Connector {
    pub endpoint: Endpoint,
    /// Hands each new connection its address (`--dns`); `None`: `endpoint`.
    pub picker: Option<crate::net::dns::AddressPicker>,
    pub source_addrs: SourceAddrs,
    pub tls: Option<TlsClient>,
    /// `host:port` to CONNECT to through a proxy (https through a proxy only).
    pub tunnel_to: Option<String>,
    pub connect_timeout: Duration,
    /// HTTP/2 over TLS: fail unless ALPN chose h2.
    pub require_h2: bool,
}

/// A failure to connect: its class and, for TLS and proxies, the reason.
#[derive(Debug)]
pub(crate) struct ConnectFailure {
    pub kind: ErrorKind,
    pub reason: Option<String>,
}

/// What opening a connection took, phase by phase.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectTimes {
    /// TCP or Unix connect (and the proxy tunnel, if any).
    pub connect: Duration,
    pub tls: Option<Duration>,
}

impl Connector {
    /// Runs `open` with where the next connection goes: `endpoint`, or with
    /// `--dns` the next of the target's addresses (counted as its connection).
    pub(crate) fn with_next_endpoint<R>(&self, open: impl FnOnce(&Endpoint) -> R) -> R {
        match &self.picker {
            None => open(&self.endpoint),
            Some(picker) => open(&Endpoint::Tcp(picker.next())),
        }
    }

    /// Opens a connection, each phase within `timeout` (the connector's
    /// `connect_timeout`, or a scenario step's own).
    pub(crate) async fn connect_within(
        &self,
        timeout: Duration,
    ) -> Result<(Stream, ConnectTimes), ConnectFailure> {
        let start = Instant::now();
        let mut stream = match tokio::time::timeout(timeout, self.open()).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(failure)) => return Err(failure),
            Err(_) => return Err(timed_out(Stage::Connect)),
        };
        if let Some(authority) = &self.tunnel_to {
            let tunnel = proxy::open_tunnel(&mut stream, authority);
            match tokio::time::timeout(timeout, tunnel).await {
                Ok(Ok(())) => {}
                Ok(Err(reason)) => return Err(failure(ErrorKind::Proxy, Some(reason))),
                Err(_) => return Err(failure(ErrorKind::Proxy, Some("CONNECT timed out".into()))),
            }
        }
        let connect = start.elapsed();
        let Some(tls) = &self.tls else {
            return Ok((stream, ConnectTimes { connect, tls: None }));
        };
        let handshake_start = Instant::now();
        let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
        let handshake = connector.connect(tls.server_name.clone(), stream);
        match tokio::time::timeout(timeout, handshake).await {
            Ok(Ok(tls_stream))
                if self.require_h2 && tls_stream.get_ref().1.alpn_protocol() != Some(b"h2") =>
            {
                Err(failure(
                    ErrorKind::Tls,
                    Some(
                        "the server did not choose h2 in ALPN: it does not speak HTTP/2 over TLS"
                            .into(),
                    ),
                ))
            }
            Ok(Ok(tls_stream)) => {
                tls.negotiated.note(tls_stream.get_ref().1);
                Ok((
                    Stream::Tls(Box::new(tls_stream)),
                    ConnectTimes {
                        connect,
                        tls: Some(handshake_start.elapsed()),
                    },
                ))
            }
            Ok(Err(e)) => Err(failure(
                ErrorKind::Tls,
                Some(crate::net::tls_errors::explain_io(&e)),
            )),
            Err(_) => Err(timed_out(Stage::Handshake)),
        }
    }

    async fn open(&self) -> Result<Stream, ConnectFailure> {
        match &self.endpoint {
            Endpoint::Tcp(addr) => {
                let addr = self.picker.as_ref().map_or(*addr, |p| p.next());
                let stream = self.source_addrs.connect(addr).await.map_err(|e| {
                    let kind = classify_connect(&e);
                    let kind = if self.tunnel_to.is_some() && kind == ErrorKind::ConnectRefused {
                        ErrorKind::Proxy
                    } else {
                        kind
                    };
                    failure(kind, Some(e.to_string()))
                })?;
                // Requests are written in one piece; Nagle would only delay bodies.
                let _ = stream.set_nodelay(true);
                Ok(Stream::Tcp(stream))
            }
            Endpoint::Unix(path) => {
                UnixStream::connect(path)
                    .await
                    .map(Stream::Unix)
                    .map_err(|e| {
                        failure(
                            classify_connect(&e),
                            Some(format!("{}: {e}", path.display())),
                        )
                    })
            }
        }
    }
}

fn failure(kind: ErrorKind, reason: Option<String>) -> ConnectFailure {
    ConnectFailure { kind, reason }
}

/// A connect whose time ran out in `stage`, counted as the reactors count
/// it (outcome_class.rs).
fn timed_out(stage: Stage) -> ConnectFailure {
    failure(
        stage.timeout_kind(),
        stage.timeout_reason().map(String::from),
    )
}
