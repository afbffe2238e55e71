//! The HTTP/3 part of a worker's plan, built once per run: the requests in
//! their HTTP/3 form (the HTTP/2 form's rules: pseudo-headers, no
//! connection-specific fields, RFC 9114 §4.2), the quinn client
//! configuration, where to connect and as whom. A leaf, as worker_plan.rs.

use crate::error::EngineError;
use crate::net::transport::{quic, ConnectorSpec, Endpoint};
use crate::plan::h2_request::{prepare, H2Request};
use stampede_plan::Plan;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// What every worker of an HTTP/3 run needs (each opens its own endpoint).
#[derive(Debug, Clone)]
pub(crate) struct H3Plan {
    pub requests: Vec<H2Request>,
    pub streams: usize,
    pub client: quinn::ClientConfig,
    pub remote: SocketAddr,
    /// The name the certificate must carry (`--sni`, else the URL's host).
    pub server_name: String,
    pub zero_rtt: bool,
    pub source_addrs: Vec<IpAddr>,
    pub connect_timeout: Duration,
    /// One request per connection (`--no-keepalive`, with `--streams 1`).
    pub keepalive: bool,
}

/// The HTTP/3 plan of `plan`, if it asks for HTTP/3.
pub(crate) fn build(plan: &Plan, connector: &ConnectorSpec) -> Result<Option<H3Plan>, EngineError> {
    let transport = &plan.transport;
    if !transport.http3 {
        return Ok(None);
    }
    let (Endpoint::Tcp(remote), Some(tls)) = (&connector.endpoint, &connector.tls) else {
        return Err(EngineError::tls(
            "HTTP/3 needs an https:// URL on a host and port",
        ));
    };
    let requests = if plan.mix.is_empty() {
        vec![prepare(&plan.target, &plan.request)?]
    } else {
        plan.mix
            .iter()
            .map(|entry| prepare(&entry.target, &entry.request))
            .collect::<Result<_, _>>()?
    };
    let idle = quic::idle_timeout(plan.timeout, plan.connect_timeout);
    let server_name = transport
        .tls
        .as_ref()
        .and_then(|spec| spec.sni.clone())
        .unwrap_or_else(|| plan.target.host.clone());
    Ok(Some(H3Plan {
        requests,
        streams: transport.streams.max(1),
        client: quic::client_config(tls, transport.zero_rtt, idle)?,
        remote: *remote,
        server_name,
        zero_rtt: transport.zero_rtt,
        source_addrs: plan.source_addrs.clone(),
        connect_timeout: plan.connect_timeout,
        keepalive: plan.keepalive,
    }))
}
