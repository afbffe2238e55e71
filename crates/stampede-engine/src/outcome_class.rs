//! Maps I/O errors to the [`ErrorKind`] a failed request is counted under.

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

#[cfg(test)]
mod tests {
    use super::*;

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
