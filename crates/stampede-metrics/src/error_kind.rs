//! The classes a failed request is counted under: a `Copy` enum, never a string key.

/// Why a request got no usable response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// The target actively refused the TCP connection (nothing listening).
    ConnectRefused,
    /// No TCP connection within `--connect-timeout` (HTTP/3: no QUIC
    /// handshake within it; a closed UDP port is silent, so it shows here).
    ConnectTimeout,
    /// No complete response within `--timeout` (HTTP/3: also the QUIC idle
    /// timeout, the server silent for that long with requests in flight).
    Timeout,
    /// The peer reset the connection (RST) while a request was in flight.
    Reset,
    /// The peer closed the connection before the response was complete.
    ClosedEarly,
    /// The bytes received were not a valid HTTP/1.x response.
    MalformedResponse,
    /// No local address/port was free to connect from (EADDRNOTAVAIL): the
    /// ephemeral port range is used up, usually by TIME_WAIT sockets of
    /// `--no-keepalive` runs. Remedies: `--source-addrs`, keep-alive,
    /// `net.ipv4.tcp_tw_reuse=1`.
    AddressUnavailable,
    /// The TLS handshake failed (unknown CA, expired or wrong-host certificate,
    /// no common protocol); a sample of the reasons is kept in `error_samples`.
    Tls,
    /// The proxy refused or failed the CONNECT tunnel, or could not be reached.
    Proxy,
    /// HTTP/2: the server reset the request's stream (RST_STREAM); HTTP/3:
    /// RESET_STREAM or STOP_SENDING on the request's QUIC stream.
    StreamReset,
    /// HTTP/2: the server shut the connection down (GOAWAY) with the request
    /// in flight, or another connection-level HTTP/2 error; HTTP/3: GOAWAY,
    /// or the QUIC connection closed by the server (CONNECTION_CLOSE, its
    /// error code in the samples).
    GoAway,
    /// A redirect past `--redirects N` hops (or a loop).
    RedirectLimit,
    /// The body did not decode by its `Content-Encoding` (corrupt, cut
    /// short, or a coding stampede does not decode); only bodies that are
    /// decoded can fail so: `--decode`, or a check that reads the body.
    UndecodableBody,
    /// WebSocket: the server did not accept the upgrade (an answer other
    /// than 101, or a wrong `Sec-WebSocket-Accept`).
    WsUpgradeRefused,
    /// WebSocket: a frame that breaks RFC 6455 (masked from the server, a
    /// reserved opcode or bit, an oversized control frame, bad UTF-8).
    WsProtocol,
    /// HTTP/2 on the reactors: the server broke the protocol (a bad frame
    /// size, an HPACK error, a frame on a stream it never opened, a window
    /// overflow, a response that breaks a stream's rules); the connection
    /// ends, and a sample names the offending frame type and the rule.
    Protocol,
    /// Anything else (local resource limits...).
    Other,
}

impl ErrorKind {
    /// Every class, in report order.
    pub const ALL: [ErrorKind; 17] = [
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::ClosedEarly,
        ErrorKind::MalformedResponse,
        ErrorKind::AddressUnavailable,
        ErrorKind::Tls,
        ErrorKind::Proxy,
        ErrorKind::StreamReset,
        ErrorKind::GoAway,
        ErrorKind::RedirectLimit,
        ErrorKind::UndecodableBody,
        ErrorKind::WsUpgradeRefused,
        ErrorKind::WsProtocol,
        ErrorKind::Protocol,
        ErrorKind::Other,
    ];

    /// Number of classes, the length of per-class counter arrays.
    pub const COUNT: usize = Self::ALL.len();

    /// The key used in JSON results and text reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::ClosedEarly => "closed_early",
            ErrorKind::MalformedResponse => "malformed_response",
            ErrorKind::AddressUnavailable => "address_unavailable",
            ErrorKind::Tls => "tls",
            ErrorKind::Proxy => "proxy",
            ErrorKind::StreamReset => "stream_reset",
            ErrorKind::GoAway => "goaway",
            ErrorKind::RedirectLimit => "redirect_limit",
            ErrorKind::UndecodableBody => "undecodable_body",
            ErrorKind::WsUpgradeRefused => "ws_upgrade_refused",
            ErrorKind::WsProtocol => "ws_protocol",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Other => "other",
        }
    }

    /// Position in [`ErrorKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_and_indices_match_order() {
        let mut keys = std::collections::BTreeSet::new();
        for (position, kind) in ErrorKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), position);
            assert!(keys.insert(kind.as_str()), "{} twice", kind.as_str());
        }
    }
}
