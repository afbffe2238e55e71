//! Maps I/O errors, and timeouts by the stage they ran out in ([`Stage`]),
//! to the [`ErrorKind`] a failed request is counted under: one rule for
//! every path (the tokio connector and slot, the reactors' sweep).

use stampede_metrics::ErrorKind;
use std::io;

/// The class of an error seen while exchanging a request on an open connection.
pub(crate) fn classify_io(error: &io::Error) -> ErrorKind {
    // A TLS alert after the handshake (a server refusing the client's
    // certificate says so on the first read under TLS 1.3) comes from
    // tokio-rustls as an io::Error wrapping the rustls error.
    if error
        .get_ref()
        .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
    {
        return ErrorKind::Tls;
    }
    match error.kind() {
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => ErrorKind::Reset,
        io::ErrorKind::UnexpectedEof => ErrorKind::ClosedEarly,
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
        _ => ErrorKind::Other,
    }
}

/// Said in the sample of an error a server that does not speak HTTP/2
/// causes, on every path.
pub(crate) const NOT_H2_HINT: &str =
    " (does the server speak HTTP/2? over plain TCP stampede uses prior knowledge, h2c)";

/// What a server that does not speak HTTP/2 causes (its HTTP/1.1 answer
/// to the preface is no frame: a protocol or frame-size error of the
/// client's own), said in the error's sample; empty for any other error.
/// The run's own connections and a redirect's side ones say it alike.
pub(crate) fn not_h2_hint(error: &h2::Error) -> &'static str {
    let local = error.is_go_away() && !error.is_remote();
    let framing = matches!(
        error.reason(),
        Some(h2::Reason::PROTOCOL_ERROR) | Some(h2::Reason::FRAME_SIZE_ERROR)
    );
    if local && framing {
        NOT_H2_HINT
    } else {
        ""
    }
}

/// The class of an HTTP/2 error.
pub(crate) fn classify_h2(error: &h2::Error) -> ErrorKind {
    if error.is_reset() {
        ErrorKind::StreamReset
    } else if error.is_go_away() {
        ErrorKind::GoAway
    } else if let Some(io) = error.get_io() {
        // h2 hands every stream a copy of the connection's I/O error made
        // of its kind and text, so the rustls error inside is gone: a TLS
        // alert (a server refusing the client's certificate says so on the
        // first read under TLS 1.3) is known by rustls' own wording.
        if io.kind() == std::io::ErrorKind::InvalidData
            && io.to_string().starts_with("received fatal alert: ")
        {
            return ErrorKind::Tls;
        }
        classify_io(io)
    } else {
        ErrorKind::GoAway
    }
}

/// An HTTP/2 request that failed, as far as sending it again goes: what
/// its `h2::Error` says, and whether the request had left (its HEADERS
/// handed to the connection) when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct H2Failure {
    pub go_away: bool,
    pub reset: bool,
    /// The GOAWAY or RST_STREAM came from the server.
    pub remote: bool,
    pub reason: Option<h2::Reason>,
    pub io: bool,
    pub sent: bool,
}

impl H2Failure {
    pub(crate) fn of(error: &h2::Error, sent: bool) -> Self {
        H2Failure {
            go_away: error.is_go_away(),
            reset: error.is_reset(),
            remote: error.is_remote(),
            reason: error.reason(),
            io: error.is_io(),
            sent,
        }
    }

    /// True when the server never processed the request, so it may go
    /// again (once): a stream the server refused (REFUSED_STREAM, RFC 9113
    /// §8.7); a graceful GOAWAY (NO_ERROR), which the `h2` crate hands only
    /// to the streams above its last-stream-id and to requests sent after
    /// it; a connection that closed (the server closing it idle, without a
    /// GOAWAY) before the request left. A GOAWAY with an error code, a
    /// reset of another kind, a connection lost under a request that left:
    /// the server may have processed it, and it stays an error.
    pub(crate) fn unprocessed(self) -> bool {
        let refused = self.reset && self.remote && self.reason == Some(h2::Reason::REFUSED_STREAM);
        let graceful = self.go_away && self.remote && self.reason == Some(h2::Reason::NO_ERROR);
        refused || graceful || (self.io && !self.sent)
    }

    /// True when the server closed the connection on purpose (a graceful
    /// GOAWAY, an idle close): the next connection counts as a reconnect,
    /// as over HTTP/1.1.
    pub(crate) fn closed_by_server(self) -> bool {
        self.unprocessed() && !self.reset
    }
}

/// The class of an error seen while opening a connection.
pub(crate) fn classify_connect(error: &io::Error) -> ErrorKind {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
        io::ErrorKind::TimedOut => ErrorKind::ConnectTimeout,
        io::ErrorKind::AddrNotAvailable => ErrorKind::AddressUnavailable,
        _ => classify_io(error),
    }
}

/// Where a request is when its time runs out (each stage has its own
/// timeout: the connect timeout for the first two, the response timeout
/// for the exchange).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Opening the connection (TCP, a proxy's CONNECT aside).
    Connect,
    /// The TLS handshake on an open TCP connection.
    Handshake,
    /// Writing the request and reading its response.
    Exchange,
}

impl Stage {
    /// The class of a request whose time ran out in this stage.
    pub(crate) fn timeout_kind(self) -> ErrorKind {
        match self {
            Stage::Connect => ErrorKind::ConnectTimeout,
            Stage::Handshake => ErrorKind::Tls,
            Stage::Exchange => ErrorKind::Timeout,
        }
    }

    /// What the error's sample says, where the class alone does not tell
    /// (a TLS failure has many causes; a timeout is one).
    pub(crate) fn timeout_reason(self) -> Option<&'static str> {
        match self {
            Stage::Handshake => Some("handshake timed out"),
            Stage::Connect | Stage::Exchange => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_counted_by_the_stage_it_ran_out_in() {
        let table = [
            (Stage::Connect, ErrorKind::ConnectTimeout, None),
            (
                Stage::Handshake,
                ErrorKind::Tls,
                Some("handshake timed out"),
            ),
            (Stage::Exchange, ErrorKind::Timeout, None),
        ];
        for (stage, kind, reason) in table {
            assert_eq!(stage.timeout_kind(), kind, "{stage:?}");
            assert_eq!(stage.timeout_reason(), reason, "{stage:?}");
        }
    }

    #[test]
    fn an_h2_request_goes_again_only_when_the_server_never_processed_it() {
        use h2::Reason;
        let failure = |go_away, reset, reason, io, sent| H2Failure {
            go_away,
            reset,
            remote: go_away || reset,
            reason,
            io,
            sent,
        };
        let no_error = Some(Reason::NO_ERROR);
        // (failure, unprocessed, closed by the server)
        let table = [
            // A graceful GOAWAY: a stream above its last-stream-id, a
            // request sent after it.
            (failure(true, false, no_error, false, true), true, true),
            (failure(true, false, no_error, false, false), true, true),
            // A GOAWAY with an error code stays an error.
            (
                failure(true, false, Some(Reason::PROTOCOL_ERROR), false, true),
                false,
                false,
            ),
            (
                failure(true, false, Some(Reason::ENHANCE_YOUR_CALM), false, false),
                false,
                false,
            ),
            // A refused stream: again, on the same connection.
            (
                failure(false, true, Some(Reason::REFUSED_STREAM), false, true),
                true,
                false,
            ),
            (
                failure(false, true, Some(Reason::CANCEL), false, true),
                false,
                false,
            ),
            (
                failure(false, true, Some(Reason::INTERNAL_ERROR), false, true),
                false,
                false,
            ),
            // The connection closed: before the request left, or under it.
            (failure(false, false, None, true, false), true, true),
            (failure(false, false, None, true, true), false, false),
        ];
        for (failure, unprocessed, by_server) in table {
            assert_eq!(failure.unprocessed(), unprocessed, "{failure:?}");
            assert_eq!(failure.closed_by_server(), by_server, "{failure:?}");
        }
        // A GOAWAY the client itself sent (a protocol error it found) is
        // not the server's: never again.
        let ours = H2Failure {
            remote: false,
            ..failure(true, false, no_error, false, false)
        };
        assert!(!ours.unprocessed());
        // A bare reason (what h2 builds outside a connection) is neither a
        // GOAWAY nor a reset.
        let reason = h2::Error::from(Reason::NO_ERROR);
        assert!(!H2Failure::of(&reason, false).unprocessed());
    }

    #[test]
    fn maps_the_common_errors() {
        let table = [
            (io::ErrorKind::ConnectionReset, ErrorKind::Reset),
            (io::ErrorKind::BrokenPipe, ErrorKind::Reset),
            (io::ErrorKind::UnexpectedEof, ErrorKind::ClosedEarly),
            (io::ErrorKind::PermissionDenied, ErrorKind::Other),
        ];
        for (kind, expected) in table {
            assert_eq!(classify_io(&io::Error::from(kind)), expected);
        }
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(classify_connect(&refused), ErrorKind::ConnectRefused);
        let timed_out = io::Error::from(io::ErrorKind::TimedOut);
        assert_eq!(classify_connect(&timed_out), ErrorKind::ConnectTimeout);
        let no_port = io::Error::from_raw_os_error(libc::EADDRNOTAVAIL);
        assert_eq!(classify_connect(&no_port), ErrorKind::AddressUnavailable);
    }
}
