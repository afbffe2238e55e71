//! QUIC for HTTP/3 (quinn): the client configuration, built once per run
//! from the same rustls configuration as TCP TLS (`--insecure`, `--cacert`,
//! `--cert`, resumption) with ALPN `h3` and, for `--0rtt`, early data; the
//! transport parameters; and one UDP endpoint per worker thread, bound in
//! that worker's runtime so its I/O driver runs on the worker's own loop.
//! What UDP offload (GSO/GRO) the kernel gives quinn is asked here too
//! ([`offload_notice`], with the run's notices).

use super::TlsClient;
use crate::error::EngineError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Socket buffers asked for (the kernel caps them at net.core.[rw]mem_max):
/// one socket carries all of a worker's connections, and the 208 KiB
/// default drops datagrams when a few hundred streams answer at once.
const SOCKET_BUFFER: usize = 4 << 20;
/// Stream and connection receive windows: large enough that a response of
/// a few MiB is not held back by flow control on loopback.
const STREAM_WINDOW: u32 = 16 << 20;
/// Bidirectional streams the server may open to us: HTTP/3 servers open none.
const SERVER_BIDI_STREAMS: u32 = 0;

/// The quinn client configuration of a run.
pub(crate) fn client_config(
    tls: &TlsClient,
    zero_rtt: bool,
    idle_timeout: Duration,
) -> Result<quinn::ClientConfig, EngineError> {
    let mut rustls_config = (*tls.config).clone();
    rustls_config.alpn_protocols = vec![b"h3".to_vec()];
    rustls_config.enable_early_data = zero_rtt;
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(rustls_config).map_err(|e| {
        EngineError::tls_caused(
            "HTTP/3 needs TLS 1.3 with TLS13_AES_128_GCM_SHA256 offered (QUIC's initial suite)",
            e,
        )
    })?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport_config(idle_timeout)));
    Ok(config)
}

/// Transport parameters: the idle timeout (a silent server fails the
/// connection after it), keep-alives well inside it (an idle connection of
/// the open model stays open between bursts), and wide windows.
fn transport_config(idle_timeout: Duration) -> quinn::TransportConfig {
    let mut transport = quinn::TransportConfig::default();
    let idle = quinn::IdleTimeout::try_from(idle_timeout)
        .unwrap_or_else(|_| quinn::VarInt::from_u32(u32::MAX).into());
    transport
        .max_idle_timeout(Some(idle))
        .keep_alive_interval(Some(idle_timeout / 3))
        .max_concurrent_bidi_streams(quinn::VarInt::from_u32(SERVER_BIDI_STREAMS))
        .stream_receive_window(quinn::VarInt::from_u32(STREAM_WINDOW))
        .receive_window(quinn::VarInt::MAX);
    transport
}

/// The idle timeout of a run's connections: no shorter than a request may
/// take (`--timeout`) or a handshake (`--connect-timeout`), so that those
/// timers, not QUIC's, decide a slow request's class.
pub(crate) fn idle_timeout(timeout: Duration, connect_timeout: Duration) -> Duration {
    timeout.max(connect_timeout) + Duration::from_secs(1)
}

/// The local address of a worker's endpoint: the `--source-addrs` address
/// its turn gives, or the unspecified address of the target's family.
pub(crate) fn bind_address(
    remote: SocketAddr,
    source_addrs: &[IpAddr],
    worker: usize,
) -> SocketAddr {
    let ip = match source_addrs {
        [] if remote.is_ipv6() => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        [] => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        addrs => addrs[worker % addrs.len()],
    };
    SocketAddr::new(ip, 0)
}

/// Opens the worker's endpoint on a UDP socket at `local`; must run inside
/// the worker's tokio runtime (quinn spawns its driver there).
pub(crate) fn worker_endpoint(local: SocketAddr) -> std::io::Result<quinn::Endpoint> {
    let socket = udp_socket(local)?;
    let runtime = quinn::default_runtime().ok_or_else(|| {
        std::io::Error::other("no async runtime for the QUIC endpoint (not on a worker thread)")
    })?;
    quinn::Endpoint::new(quinn::EndpointConfig::default(), None, socket, runtime)
}

fn udp_socket(local: SocketAddr) -> std::io::Result<std::net::UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    // Best effort: a smaller buffer than asked only drops datagrams sooner.
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER);
    socket.bind(&local.into())?;
    Ok(socket.into())
}

/// The UDP offload the kernel gives quinn on a socket like the workers':
/// the most segments one GSO send carries and one GRO receive returns (1:
/// none). quinn uses both whenever they are above 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpOffload {
    /// The most segments one GSO send carries.
    pub gso_segments: usize,
    /// The most segments one GRO receive returns.
    pub gro_segments: usize,
}

/// Asks the kernel through quinn-udp, on a throwaway UDP socket; `None`
/// when none could be opened.
pub fn udp_offload() -> Option<UdpOffload> {
    let socket = udp_socket(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)).ok()?;
    let state = quinn::udp::UdpSocketState::new((&socket).into()).ok()?;
    Some(UdpOffload {
        gso_segments: state.max_gso_segments(),
        gro_segments: state.gro_segments(),
    })
}

/// The line a run's notices carry about UDP offload.
pub fn offload_notice() -> String {
    match udp_offload() {
        Some(o) => format!(
            "HTTP/3: UDP offload {} (GSO up to {} segments per send, GRO {} per receive; quinn uses each above 1)",
            match (o.gso_segments > 1, o.gro_segments > 1) {
                (true, true) => "GSO and GRO",
                (true, false) => "GSO only",
                (false, true) => "GRO only",
                (false, false) => "unavailable",
            },
            o.gso_segments,
            o.gro_segments
        ),
        None => "HTTP/3: could not ask the kernel about UDP offload".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_bind_the_targets_family_or_the_given_sources() {
        let v4: SocketAddr = "127.0.0.1:443".parse().unwrap();
        let v6: SocketAddr = "[::1]:443".parse().unwrap();
        assert_eq!(bind_address(v4, &[], 3).to_string(), "0.0.0.0:0");
        assert_eq!(bind_address(v6, &[], 0).to_string(), "[::]:0");
        let sources: Vec<IpAddr> = vec!["127.0.0.2".parse().unwrap(), "127.0.0.3".parse().unwrap()];
        assert_eq!(bind_address(v4, &sources, 1).ip(), sources[1]);
        assert_eq!(bind_address(v4, &sources, 2).ip(), sources[0]);
    }

    #[test]
    fn the_idle_timeout_outlasts_the_request_and_handshake_timers() {
        let idle = idle_timeout(Duration::from_secs(10), Duration::from_secs(2));
        assert!(idle > Duration::from_secs(10));
        assert!(udp_offload().is_some_and(|o| o.gso_segments >= 1));
    }
}
