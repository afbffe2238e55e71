//! HTTP/3 over QUIC (`serve --tls --http3`), on quinn + h3 + h3-quinn: the
//! same port number as the TCP listener, over UDP, one SO_REUSEPORT socket
//! and quinn endpoint per worker (the kernel keeps a client's datagrams on
//! one socket by their addresses), the same TLS certificate with ALPN `h3`,
//! session tickets and 0-RTT. Every request stream is answered by the same
//! `routes::handle` as HTTP/1.1 and HTTP/2, through http2.rs's conversion
//! of the HTTP/1.1-shaped response into a head and DATA (HTTP/3 frames them
//! as HTTP/2 does), so routes, counters and the access log behave the same.
//! TCP responses advertise the service with `Alt-Svc` ([`alt_svc`]).

use std::io::Read;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use h3::server::RequestStream;
use http::header::CONTENT_LENGTH;

use crate::context::Worker;
use crate::http2::{produce, to_frames};
use crate::reply::{Reply, Tail};
use crate::routes::{INLINE_BODY, PATTERN};
use crate::transport::{OpenGuard, Peer};
use crate::{Config, TargetError};

/// Request streams a client may have open at once (stampede `--streams`).
const MAX_STREAMS: u32 = 1024;
/// HTTP/3's "no error", for the connections this server closes.
const H3_NO_ERROR: u32 = 0x100;
/// How long browsers and clients may remember the `Alt-Svc` (one day).
const ALT_SVC_MAX_AGE: u32 = 86_400;
/// Socket buffers asked for (capped by the kernel), as the client does.
const SOCKET_BUFFER: usize = 4 << 20;

type Stream = RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

/// The `Alt-Svc` header line for HTTP/3 on `port`, or empty without it.
pub(crate) fn alt_svc(port: Option<u16>) -> Vec<u8> {
    match port {
        Some(port) => format!("Alt-Svc: h3=\":{port}\"; ma={ALT_SVC_MAX_AGE}\r\n").into_bytes(),
        None => Vec::new(),
    }
}

/// The QUIC server configuration: the TCP listener's TLS configuration
/// with ALPN `h3` and 0-RTT allowed, and the stream and idle limits.
pub(crate) fn server_config(
    acceptor: &tokio_rustls::TlsAcceptor,
    cfg: &Config,
) -> Result<quinn::ServerConfig, TargetError> {
    if cfg.tls.as_ref().is_some_and(|t| !t.tls13) {
        // rustls would accept the configuration and QUIC panic on the
        // first handshake: refuse it before the server starts.
        return Err(TargetError::Config(
            "--http3 needs TLS 1.3 (QUIC has no TLS 1.2): drop --tls-max 1.2".into(),
        ));
    }
    let mut tls = (**acceptor.config()).clone();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    // quinn accepts 0 or u32::MAX here: 0-RTT is on, as QUIC defines it.
    tls.max_early_data_size = u32::MAX;
    // rustls takes 0-RTT only on stateful tickets (the session cache, whose
    // entries are single-use, is the replay protection), not stateless ones.
    tls.ticketer = Arc::new(StatefulTicketsOnly);
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).map_err(|e| {
        TargetError::Tls(format!(
            "HTTP/3 needs TLS 1.3 (--tls-max 1.2 turns it off): {e}"
        ))
    })?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    let idle = quinn::IdleTimeout::try_from(cfg.idle_timeout)
        .map_err(|_| TargetError::Config("idle timeout too long for QUIC".into()))?;
    transport
        .max_concurrent_bidi_streams(quinn::VarInt::from_u32(MAX_STREAMS))
        .max_idle_timeout(Some(idle));
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// Turns stateless tickets off so that rustls issues stateful ones.
#[derive(Debug)]
struct StatefulTicketsOnly;

impl rustls::server::ProducesTickets for StatefulTicketsOnly {
    fn enabled(&self) -> bool {
        false
    }
    fn lifetime(&self) -> u32 {
        0
    }
    fn encrypt(&self, _plain: &[u8]) -> Option<Vec<u8>> {
        None
    }
    fn decrypt(&self, _cipher: &[u8]) -> Option<Vec<u8>> {
        None
    }
}

/// Binds `n` UDP sockets sharing `addr`'s port (SO_REUSEPORT), as the TCP
/// listeners do.
pub(crate) fn bind_all(
    addr: SocketAddr,
    n: usize,
) -> Result<Vec<std::net::UdpSocket>, TargetError> {
    use socket2::{Domain, Protocol, Socket, Type};
    let err = |source| TargetError::Bind { addr, source };
    (0..n)
        .map(|_| {
            let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
                .map_err(err)?;
            s.set_reuse_port(true).map_err(err)?;
            let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
            let _ = s.set_send_buffer_size(SOCKET_BUFFER);
            s.bind(&addr.into()).map_err(err)?;
            Ok(s.into())
        })
        .collect()
}

/// The worker's endpoint on its socket (inside its runtime).
pub(crate) fn endpoint(
    (socket, config): (std::net::UdpSocket, quinn::ServerConfig),
) -> std::io::Result<quinn::Endpoint> {
    let runtime = quinn::default_runtime()
        .ok_or_else(|| std::io::Error::other("no async runtime for the QUIC endpoint"))?;
    quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        Some(config),
        socket,
        runtime,
    )
}

/// Accepts QUIC connections until the worker stops, within the connection cap.
pub(crate) async fn accept(endpoint: &quinn::Endpoint, w: &Rc<Worker>) {
    use std::sync::atomic::Ordering;
    while let Some(incoming) = endpoint.accept().await {
        let open = w.registry.open.fetch_add(1, Ordering::Relaxed);
        if open >= w.cfg.max_connections {
            w.registry.open.fetch_sub(1, Ordering::Relaxed);
            w.stats().refused();
            incoming.refuse();
            continue;
        }
        w.stats().accepted();
        w.open.set(w.open.get() + 1);
        let peer = Peer::ip(incoming.remote_address().ip());
        let guard = OpenGuard::new(w.clone());
        tokio::task::spawn_local(serve(incoming, peer, w.clone(), guard));
    }
}

/// One connection: the handshake, then its request streams until the
/// client closes, the idle timeout, or shutdown (GOAWAY, then the streams
/// in flight get `shutdown_grace` to finish).
async fn serve(incoming: quinn::Incoming, peer: Peer, w: Rc<Worker>, guard: OpenGuard) {
    let _guard = guard;
    let quic = match tokio::time::timeout(w.cfg.header_timeout, incoming).await {
        Ok(Ok(quic)) => quic,
        _ => {
            w.stats().tls_failure();
            return;
        }
    };
    w.stats().tls_handshake();
    let Ok(mut conn) = h3::server::builder()
        .build::<_, Bytes>(h3_quinn::Connection::new(quic.clone()))
        .await
    else {
        return;
    };
    w.stats().h3_connection();
    let mut streams = tokio::task::JoinSet::new();
    let stop = w.stop_notify.notified();
    tokio::pin!(stop);
    if !w.stopping.get() {
        loop {
            tokio::select! {
                biased;
                accepted = conn.accept() => match accepted {
                    Ok(Some(resolver)) => {
                        w.stats().h3_stream();
                        streams.spawn_local(stream(resolver, peer, w.clone()));
                    }
                    // The client closed, the idle timeout, or an error.
                    Ok(None) | Err(_) => break,
                },
                Some(_) = streams.join_next(), if !streams.is_empty() => {}
                _ = &mut stop => break,
            }
        }
    }
    if w.stopping.get() {
        let _ = conn.shutdown(0).await;
        let finish = async { while streams.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(w.cfg.shutdown_grace, finish).await;
        quic.close(quinn::VarInt::from_u32(H3_NO_ERROR), b"shutting down");
    }
}

/// One request stream: read the body, answer through `routes`, send.
async fn stream(
    resolver: h3::server::RequestResolver<h3_quinn::Connection, Bytes>,
    peer: Peer,
    w: Rc<Worker>,
) {
    let Ok((request, mut s)) = resolver.resolve_request().await else {
        return;
    };
    let (parts, ()) = request.into_parts();
    let body = read_body(&parts, &mut s, &w).await;
    let mut out = Vec::new();
    let o = produce(&w, &peer, &parts, body, &mut out, 3);
    let _ = send(s, out, o.reply).await;
}

/// The request body, whole, or the status to answer instead.
async fn read_body(
    parts: &http::request::Parts,
    s: &mut Stream,
    w: &Worker,
) -> Result<Vec<u8>, u16> {
    let max = w.cfg.max_body;
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(413);
    }
    let mut buf = Vec::with_capacity(declared.unwrap_or(0).min(max as u64) as usize);
    let read = async {
        while let Some(mut chunk) = s.recv_data().await.map_err(|_| 400u16)? {
            if buf.len() + chunk.remaining() > max {
                return Err(413);
            }
            while chunk.has_remaining() {
                let piece = chunk.chunk();
                buf.extend_from_slice(piece);
                let n = piece.len();
                chunk.advance(n);
            }
        }
        Ok(())
    };
    match tokio::time::timeout(w.cfg.body_timeout, read).await {
        Ok(Ok(())) => Ok(buf),
        Ok(Err(status)) => Err(status),
        Err(_) => Err(408),
    }
}

/// Sends the response: head, the body produced, then what the reply leaves
/// to stream (a delay first, a pattern or a file in pieces).
async fn send(mut s: Stream, out: Vec<u8>, reply: Reply) -> Result<(), h3::error::StreamError> {
    let Some((response, body)) = to_frames(out) else {
        s.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
        return Ok(());
    };
    let tail = match reply {
        Reply::Done => None,
        Reply::Delay(d) => {
            tokio::time::sleep(d).await;
            None
        }
        Reply::Stream(t) => Some(t),
        // websocket.rs refuses the upgrade on every version but HTTP/1.1.
        Reply::Upgrade(_) => None,
    };
    s.send_response(response).await?;
    if !body.is_empty() {
        s.send_data(body).await?;
    }
    match tail {
        None => {}
        Some(Tail::Pattern { mut remaining, .. }) => {
            while remaining > 0 {
                let k = remaining.min(INLINE_BODY as u64) as usize;
                remaining -= k as u64;
                s.send_data(Bytes::from_static(&PATTERN[..k])).await?;
            }
        }
        Some(Tail::File {
            mut file,
            mut remaining,
        }) => {
            while remaining > 0 {
                let mut buf = vec![0u8; remaining.min(INLINE_BODY as u64) as usize];
                // A blocking read, but of page-cache-hot data in the common case.
                let n = match file.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        s.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                        return Ok(());
                    }
                    Ok(n) => n,
                };
                buf.truncate(n);
                remaining -= n as u64;
                s.send_data(Bytes::from(buf)).await?;
            }
        }
        Some(Tail::Pieces(mut pieces)) => {
            while let Some((due, piece)) = pieces.next_due(std::time::Instant::now()) {
                tokio::time::sleep_until(due.into()).await;
                s.send_data(Bytes::from(piece)).await?;
            }
        }
    }
    s.finish().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alt_svc_names_the_port_or_nothing() {
        assert_eq!(alt_svc(Some(8443)), b"Alt-Svc: h3=\":8443\"; ma=86400\r\n");
        assert!(alt_svc(None).is_empty());
    }
}
