//! The close frame's payload (RFC 6455 §5.5.1): nothing, or a two-byte code
//! and a UTF-8 reason. Which codes a peer may send (§7.4).

use crate::error::ProtocolError;

/// 1000: the purpose of the connection is fulfilled.
pub const CLOSE_NORMAL: u16 = 1000;

/// A close frame's code and reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseFrame<'a> {
    /// The status code (§7.4).
    pub code: u16,
    /// Why, for people; may be empty.
    pub reason: &'a str,
}

impl<'a> CloseFrame<'a> {
    /// Reads a close payload: `Ok(None)` for an empty one.
    pub fn parse(payload: &'a [u8]) -> Result<Option<CloseFrame<'a>>, ProtocolError> {
        match payload {
            [] => Ok(None),
            [_] => Err(ProtocolError::BadClosePayload),
            [hi, lo, reason @ ..] => {
                let code = u16::from_be_bytes([*hi, *lo]);
                if !close_code_is_valid(code) {
                    return Err(ProtocolError::BadCloseCode(code));
                }
                let reason = std::str::from_utf8(reason).map_err(|_| ProtocolError::BadUtf8)?;
                Ok(Some(CloseFrame { code, reason }))
            }
        }
    }
}

/// Whether a peer may send `code` in a close frame. The codes §7.4.1
/// defines for the wire, those IANA registered since (1012–1014), and the
/// ranges for libraries and applications (3000–4999); not 1004 (reserved),
/// 1005 and 1006 (never on the wire), 1015 (TLS, never on the wire). The
/// same set as Python's websockets (`frames.py`, `EXTERNAL_CLOSE_CODES`).
pub fn close_code_is_valid(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_payloads_and_codes() {
        assert_eq!(CloseFrame::parse(b""), Ok(None));
        assert_eq!(
            CloseFrame::parse(b"\x03\xe8bye"),
            Ok(Some(CloseFrame {
                code: 1000,
                reason: "bye"
            }))
        );
        assert_eq!(
            CloseFrame::parse(b"\x03"),
            Err(ProtocolError::BadClosePayload)
        );
        assert_eq!(
            CloseFrame::parse(b"\x03\xed"),
            Err(ProtocolError::BadCloseCode(1005))
        );
        assert_eq!(
            CloseFrame::parse(b"\x03\xe8\xff"),
            Err(ProtocolError::BadUtf8)
        );
        let valid: Vec<u16> = (0..6000).filter(|&c| close_code_is_valid(c)).collect();
        assert_eq!(valid.len(), 4 + 8 + 2000);
        for bad in [0, 999, 1004, 1005, 1006, 1015, 2999, 5000] {
            assert!(!close_code_is_valid(bad), "{bad}");
        }
    }
}
