//! What an HTTP/3 failure is counted as, and the reason kept in its sample:
//! the QUIC connection closed by the server (its error code named), a stream
//! reset, the handshake or idle timeout, a stateless reset, a TLS failure
//! carried in CRYPTO_ERROR. One rule for the handshake and the requests
//! (h3_conn.rs, h3_client.rs); the classes are stampede's own, documented in
//! stampede-metrics' ErrorKind.

use stampede_metrics::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

/// QUIC's CRYPTO_ERROR range: 0x100 + the TLS alert (RFC 9001 §4.8).
const CRYPTO_ERRORS: std::ops::RangeInclusive<u64> = 0x100..=0x1ff;
/// TLS alert no_application_protocol: the server offers no `h3` in ALPN.
const NO_APPLICATION_PROTOCOL: u64 = 0x100 + 120;
/// HTTP/3's "no error" (a graceful close).
const H3_NO_ERROR: u64 = 0x100;

/// A failure's class and the reason to keep as its sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub kind: ErrorKind,
    pub reason: String,
}

fn failure(kind: ErrorKind, reason: String) -> Failure {
    Failure { kind, reason }
}

/// No handshake within `--connect-timeout`: most often nothing listens on
/// that UDP port, which QUIC cannot tell from a slow server.
pub(crate) fn handshake_timeout(remote: SocketAddr, waited: Duration) -> Failure {
    failure(
        ErrorKind::ConnectTimeout,
        format!(
            "no QUIC handshake with {remote} within {waited:?}: is an HTTP/3 server listening on UDP port {}? (a closed UDP port is silent to QUIC; `stampede serve --tls --http3` serves one)",
            remote.port()
        ),
    )
}

/// A handshake that failed (the timeout is [`handshake_timeout`]).
pub(crate) fn handshake_failed(
    error: &quinn::ConnectionError,
    remote: SocketAddr,
    waited: Duration,
) -> Failure {
    match error {
        quinn::ConnectionError::TimedOut => handshake_timeout(remote, waited),
        quinn::ConnectionError::ConnectionClosed(close)
            if u64::from(close.error_code) == NO_APPLICATION_PROTOCOL =>
        {
            failure(
                ErrorKind::Tls,
                "the server speaks QUIC but offers no h3 in ALPN: it does not serve HTTP/3".into(),
            )
        }
        other => connection_closed(other),
    }
}

/// Whether a connection that ended this way was closed on purpose by the
/// server (an idle or graceful close), so the next one is a reconnect.
pub(crate) fn is_graceful(error: &quinn::ConnectionError) -> bool {
    match error {
        quinn::ConnectionError::ApplicationClosed(close) => {
            u64::from(close.error_code) == H3_NO_ERROR
        }
        quinn::ConnectionError::ConnectionClosed(close) => u64::from(close.error_code) == 0,
        _ => false,
    }
}

/// The class of a request that failed because its QUIC connection ended.
pub(crate) fn connection_closed(error: &quinn::ConnectionError) -> Failure {
    use quinn::ConnectionError as E;
    match error {
        E::ApplicationClosed(close) => failure(
            ErrorKind::GoAway,
            format!(
                "the server closed the QUIC connection: {}{}",
                h3::error::Code::from(u64::from(close.error_code)),
                reason_suffix(&close.reason)
            ),
        ),
        E::ConnectionClosed(close) if CRYPTO_ERRORS.contains(&u64::from(close.error_code)) => {
            failure(
                ErrorKind::Tls,
                format!("the server refused the TLS handshake: {close}"),
            )
        }
        E::ConnectionClosed(close) => failure(
            ErrorKind::GoAway,
            format!("the server closed the QUIC connection: {close}"),
        ),
        E::TimedOut => failure(
            ErrorKind::Timeout,
            "QUIC idle timeout: the server sent nothing for longer than the idle timeout".into(),
        ),
        E::Reset => failure(
            ErrorKind::Reset,
            "QUIC stateless reset: the server no longer knows the connection (restarted?)".into(),
        ),
        E::TransportError(error) if CRYPTO_ERRORS.contains(&u64::from(error.code)) => {
            failure(ErrorKind::Tls, explain_tls(&error.reason))
        }
        E::TransportError(error) => failure(
            ErrorKind::Other,
            format!("the server broke the QUIC protocol: {error}"),
        ),
        E::VersionMismatch => failure(
            ErrorKind::Other,
            "the server speaks no QUIC version this client does".into(),
        ),
        E::LocallyClosed | E::CidsExhausted => failure(ErrorKind::Other, error.to_string()),
    }
}

/// The class of a failed request: its stream reset, a GOAWAY, or its
/// connection's end (`closed`, quinn's reason, when the connection is gone).
/// The flag says whether the connection can carry no more requests.
pub(crate) fn stream_failed(
    error: &h3::error::StreamError,
    closed: Option<quinn::ConnectionError>,
) -> (Failure, bool) {
    use h3::error::StreamError as S;
    if let Some(reason) = closed {
        return (connection_closed(&reason), true);
    }
    match error {
        S::RemoteTerminate { code, .. } => (
            failure(
                ErrorKind::StreamReset,
                format!("the server reset the request's stream: {code}"),
            ),
            false,
        ),
        S::RemoteClosing { .. } => (
            failure(
                ErrorKind::GoAway,
                "the server is closing the connection (GOAWAY): no new requests on it".into(),
            ),
            true,
        ),
        S::ConnectionError {
            0: h3::error::ConnectionError::Timeout { .. },
            ..
        } => (connection_closed(&quinn::ConnectionError::TimedOut), true),
        S::ConnectionError { 0: other, .. } => (
            failure(ErrorKind::GoAway, format!("HTTP/3 connection: {other}")),
            true,
        ),
        other => (failure(ErrorKind::Other, format!("HTTP/3: {other}")), false),
    }
}

fn reason_suffix(reason: &[u8]) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(" ({})", String::from_utf8_lossy(reason))
    }
}

/// quinn carries a local TLS failure as text: the certificate errors people
/// meet first get the same hint as over TCP (tls_errors.rs).
fn explain_tls(reason: &str) -> String {
    use rustls::{CertificateError, Error};
    let known = [
        Error::InvalidCertificate(CertificateError::UnknownIssuer),
        Error::InvalidCertificate(CertificateError::NotValidForName),
    ];
    match known.iter().find(|e| reason.contains(&e.to_string())) {
        Some(error) => crate::net::tls_errors::explain(error),
        None => reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn application_close(code: u32) -> quinn::ConnectionError {
        quinn::ConnectionError::ApplicationClosed(quinn::ApplicationClose {
            error_code: quinn::VarInt::from_u32(code),
            reason: bytes::Bytes::from_static(b"bye"),
        })
    }

    #[test]
    fn every_quic_ending_has_its_class() {
        let closed = connection_closed(&application_close(0x100));
        assert_eq!(closed.kind, ErrorKind::GoAway);
        assert!(
            closed.reason.contains("H3_NO_ERROR (bye)"),
            "{}",
            closed.reason
        );
        assert!(is_graceful(&application_close(0x100)));
        assert!(!is_graceful(&application_close(0x102)));
        let idle = connection_closed(&quinn::ConnectionError::TimedOut);
        assert_eq!(idle.kind, ErrorKind::Timeout);
        assert!(idle.reason.contains("idle timeout"));
        assert_eq!(
            connection_closed(&quinn::ConnectionError::Reset).kind,
            ErrorKind::Reset
        );
        let remote: SocketAddr = "127.0.0.1:4433".parse().unwrap();
        let silent = handshake_failed(
            &quinn::ConnectionError::TimedOut,
            remote,
            Duration::from_secs(2),
        );
        assert_eq!(silent.kind, ErrorKind::ConnectTimeout);
        assert!(silent.reason.contains("UDP port 4433"), "{}", silent.reason);
    }

    #[test]
    fn an_untrusted_certificate_names_cacert_and_insecure() {
        let reason = "invalid peer certificate: UnknownIssuer";
        let explained = explain_tls(reason);
        assert!(explained.contains("--cacert") && explained.contains("--insecure"));
    }
}
