//! What a TLS failure means to the user: rustls' reason, and for the
//! failures people meet first (a self-signed certificate, a CA certificate
//! served as the server's, a plain-HTTP port) what to do about it. One rule
//! for every path: the reactors' sessions and the tokio connector both
//! sample their `tls` errors through [`explain`].

use rustls::{AlertDescription, CertificateError, Error, InvalidMessage, PeerIncompatible};

/// The reason of `error`, with a hint where one helps.
pub(crate) fn explain(error: &Error) -> String {
    match hint(error) {
        Some(hint) => format!("{error} ({hint})"),
        None => error.to_string(),
    }
}

/// [`explain`] for an I/O error that carries a rustls error (as the
/// connectors' streams report them); other errors as they are.
pub(crate) fn explain_io(error: &std::io::Error) -> String {
    match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Error>())
    {
        Some(tls) => explain(tls),
        None => error.to_string(),
    }
}

fn hint(error: &Error) -> Option<&'static str> {
    match error {
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => Some(
            "not signed by a CA this client trusts: give the CA with --cacert FILE, or --insecure",
        ),
        Error::InvalidCertificate(CertificateError::NotValidForName)
        | Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. }) => Some(
            "the certificate does not name this host: use the name it was issued for (--resolve HOST:PORT:ADDR maps it to this address), or --insecure",
        ),
        // webpki's CaUsedAsEndEntity has no variant of its own in rustls.
        Error::InvalidCertificate(CertificateError::Other(other))
            if format!("{other:?}").contains("CaUsedAsEndEntity") =>
        {
            Some(
                "the server's certificate is a CA certificate, as `openssl req -x509` makes by default, and webpki refuses one as a server's: use --insecure, or make it with -addext basicConstraints=critical,CA:FALSE",
            )
        }
        Error::AlertReceived(AlertDescription::ProtocolVersion)
        | Error::PeerIncompatible(PeerIncompatible::ServerDoesNotSupportTls12Or13) => Some(
            "protocol version: the server offers none of the TLS versions this client allows (--tls-min/--tls-max, ab's -f)",
        ),
        Error::InvalidMessage(InvalidMessage::InvalidContentType) => {
            Some("the server did not answer in TLS: if it speaks plain HTTP, use an http:// (or ws://) URL")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_failures_say_what_to_do() {
        let unknown = explain(&Error::InvalidCertificate(CertificateError::UnknownIssuer));
        assert!(
            unknown.contains("--cacert") && unknown.contains("--insecure"),
            "{unknown}"
        );
        let plain = explain(&Error::InvalidMessage(InvalidMessage::InvalidContentType));
        assert!(plain.contains("http://"), "{plain}");
        let version = explain(&Error::AlertReceived(AlertDescription::ProtocolVersion));
        assert!(version.contains("protocol version"), "{version}");
        let other = explain(&Error::DecryptError);
        assert_eq!(
            other,
            Error::DecryptError.to_string(),
            "no hint where none helps"
        );
    }
}
