//! Why a response did not parse as HTTP/1.x, for the error's sample: the
//! first bytes, and what they look like when they are another protocol (a
//! TLS record from an https port, an HTTP/2 frame from a prior-knowledge
//! h2c port). One rule for every path that reads HTTP/1.x: the tokio
//! slot over TCP and over TLS (connection.rs) and the reactors' books
//! (exchange/ledger.rs) take the sample by [`malformed_start`].

use super::{ResponseError, ResponseProgress};

/// How many of a response's first bytes the sample is made from.
const SAMPLE_BYTES: usize = 32;

/// The bytes a malformed response's sample is made from: the start of
/// `read`, when `read` were the response's first bytes (`first`) and
/// parsing them (`progress`) found they are not HTTP/1.x. `None` otherwise
/// (a response that began well and broke later has no start to show).
pub(crate) fn malformed_start<'a>(
    first: bool,
    progress: &Result<ResponseProgress, ResponseError>,
    read: &'a [u8],
) -> Option<&'a [u8]> {
    let malformed = first && matches!(progress, Err(ResponseError::Malformed));
    malformed.then(|| &read[..read.len().min(SAMPLE_BYTES)])
}

/// Whether `first` begins a TLS record: handshake (22) or alert (21),
/// version 3.x. What a TLS port answers a plain request with.
pub(crate) fn is_tls_record(first: &[u8]) -> bool {
    matches!(first, [21 | 22, 3, ..])
}

/// The reason for a malformed response whose first bytes were `first`.
pub(crate) fn malformed_reason(first: &[u8]) -> String {
    let hint = match first {
        _ if is_tls_record(first) => Some("the server answered in TLS: use an https:// URL"),
        // An HTTP/2 frame header whose type (the fourth byte) is SETTINGS.
        [_, _, _, 4, ..] if first.len() >= 9 && !first.starts_with(b"HTTP") => {
            Some("the server answered in HTTP/2: add --http2")
        }
        _ => None,
    };
    let shown: String = first
        .iter()
        .take(24)
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    match hint {
        Some(hint) => format!("not an HTTP/1.x response ({hint}); it began \"{shown}\""),
        None => format!("not an HTTP/1.x response; it began \"{shown}\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_first_bytes_that_are_not_http_are_a_start_to_show() {
        let read = [b'x'; 40];
        let malformed = Err(ResponseError::Malformed);
        assert_eq!(malformed_start(true, &malformed, &read), Some(&read[..32]));
        assert_eq!(
            malformed_start(true, &malformed, b"SPDY"),
            Some(&b"SPDY"[..])
        );
        assert_eq!(
            malformed_start(false, &malformed, &read),
            None,
            "began well"
        );
        let cut = Err(ResponseError::ClosedEarly);
        assert_eq!(malformed_start(true, &cut, &read), None);
        assert_eq!(
            malformed_start(true, &Ok(ResponseProgress::Partial), &read),
            None
        );
    }

    #[test]
    fn other_protocols_are_named() {
        assert!(malformed_reason(&[22, 3, 3, 0, 90]).contains("https://"));
        assert!(malformed_reason(&[21, 3, 1, 0, 2, 2, 40]).contains("https://"));
        let settings = [0, 0, 18, 4, 0, 0, 0, 0, 0, 0, 3];
        assert!(malformed_reason(&settings).contains("--http2"));
        let junk = malformed_reason(b"SSH-2.0-OpenSSH_9.2\r\n");
        assert!(
            junk.contains("SSH-2.0") && !junk.contains("https"),
            "{junk}"
        );
    }
}
