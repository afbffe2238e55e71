//! Request bodies: decoding `Transfer-Encoding: chunked` from the connection buffer
//! (sizes, extensions, trailers) with a cap on the decoded size. Content-Length
//! bodies need no decoding; the connection simply waits for that many bytes.

use crate::request::Bad;

/// Decodes a chunked body at the start of `buf` into `out` (cleared first).
/// `Ok(Some(n))`: complete, `n` encoded bytes consumed; `Ok(None)`: need more bytes.
pub(crate) fn decode_chunked(
    buf: &[u8],
    max_body: usize,
    out: &mut Vec<u8>,
) -> Result<Option<usize>, Bad> {
    out.clear();
    let mut pos = 0;
    loop {
        let (hdr, size) = match httparse::parse_chunk_size(&buf[pos..]) {
            Ok(httparse::Status::Complete(v)) => v,
            Ok(httparse::Status::Partial) => {
                // A size line has no business being longer than this.
                return if buf.len() - pos > 1024 {
                    Err(Bad::Malformed)
                } else {
                    Ok(None)
                };
            }
            Err(_) => return Err(Bad::Malformed),
        };
        let size = usize::try_from(size).map_err(|_| Bad::BodyTooLarge)?;
        pos += hdr;
        if size == 0 {
            return trailers(buf, pos);
        }
        if out.len().saturating_add(size) > max_body {
            return Err(Bad::BodyTooLarge);
        }
        if buf.len() < pos + size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&buf[pos..pos + size]);
        pos += size;
        if &buf[pos..pos + 2] != b"\r\n" {
            return Err(Bad::Malformed);
        }
        pos += 2;
    }
}

/// Skips trailer lines after the last chunk up to the empty line.
fn trailers(buf: &[u8], mut pos: usize) -> Result<Option<usize>, Bad> {
    loop {
        let rest = &buf[pos..];
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return if rest.len() > crate::request::MAX_HEAD {
                Err(Bad::HeadTooLarge)
            } else {
                Ok(None)
            };
        };
        pos += eol + 2;
        if eol == 0 {
            return Ok(Some(pos));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_waits() {
        let mut out = Vec::new();
        let enc = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nX-T: y\r\n\r\nGET";
        assert_eq!(decode_chunked(enc, 100, &mut out), Ok(Some(enc.len() - 3)));
        assert_eq!(out, b"Wikipedia");
        for cut in 0..enc.len() - 3 {
            assert_eq!(
                decode_chunked(&enc[..cut], 100, &mut out),
                Ok(None),
                "cut {cut}"
            );
        }
        assert_eq!(decode_chunked(enc, 5, &mut out), Err(Bad::BodyTooLarge));
        assert_eq!(decode_chunked(b"zz\r\n", 5, &mut out), Err(Bad::Malformed));
        assert_eq!(
            decode_chunked(b"2\r\nabXX0\r\n\r\n", 5, &mut out),
            Err(Bad::Malformed)
        );
    }
}
