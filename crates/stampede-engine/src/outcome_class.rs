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
