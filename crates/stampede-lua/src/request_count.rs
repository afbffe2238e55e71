//! How many HTTP/1.1 requests the bytes from `request()` hold (wrk's
//! `script_verify_request`): each head parsed, its body (Content-Length or
//! chunked) skipped, until the bytes end exactly at a request's end. Bytes
//! that are not whole requests are an error naming where parsing stopped
//! and showing the bytes, escaped and truncated.

/// Most headers one request may have.
const MAX_HEADERS: usize = 128;
/// Bytes of a bad request shown in the error.
const SHOWN: usize = 160;

/// Counts the requests in `bytes`, at least 1.
pub(crate) fn count_requests(bytes: &[u8]) -> Result<usize, String> {
    let mut at = 0;
    let mut count = 0;
    while at < bytes.len() || count == 0 {
        at += one_request(&bytes[at..]).map_err(|why| invalid(bytes, at, &why))?;
        count += 1;
    }
    Ok(count)
}

/// The length of the request at the start of `bytes`.
fn one_request(bytes: &[u8]) -> Result<usize, String> {
    // Uninitialised: httparse writes the headers it finds, and filling 128
    // empty ones first would cost more than parsing a small request.
    let mut headers =
        [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let head = match request.parse_with_uninit_headers(bytes, &mut headers) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Err("incomplete request".into()),
        Err(e) => return Err(e.to_string()),
    };
    let mut length = 0usize;
    let mut chunked = false;
    for header in request.headers.iter() {
        if header.name.eq_ignore_ascii_case("content-length") {
            length = std::str::from_utf8(header.value)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .ok_or("invalid Content-Length")?;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = header.value.eq_ignore_ascii_case(b"chunked");
        }
    }
    let rest = &bytes[head..];
    let body = if chunked {
        chunked_length(rest)?
    } else if rest.len() < length {
        return Err(format!("body shorter than its Content-Length {length}"));
    } else {
        length
    };
    Ok(head + body)
}

/// The length of a chunked body at the start of `bytes`, trailers included.
fn chunked_length(bytes: &[u8]) -> Result<usize, String> {
    let mut at = 0;
    loop {
        match httparse::parse_chunk_size(&bytes[at..]) {
            Ok(httparse::Status::Complete((used, 0))) => {
                at += used;
                // Trailers, then the empty line.
                let end = find_blank_line(&bytes[at..]).ok_or("incomplete chunked body")?;
                return Ok(at + end);
            }
            Ok(httparse::Status::Complete((used, size))) => {
                let size = usize::try_from(size).map_err(|_| "chunk too large")?;
                at += used + size;
                if bytes.get(at..at + 2) != Some(b"\r\n") {
                    return Err("incomplete chunked body".into());
                }
                at += 2;
            }
            Ok(httparse::Status::Partial) => return Err("incomplete chunked body".into()),
            Err(_) => return Err("invalid chunk size".into()),
        }
    }
}

/// Where the trailer section ends: after `\r\n` alone on a line.
fn find_blank_line(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let line = bytes[at..].windows(2).position(|w| w == b"\r\n")?;
        at += line + 2;
        if line == 0 {
            return Some(at);
        }
    }
}

/// wrk's message: what went wrong, at line:column, and the bytes.
fn invalid(bytes: &[u8], at: usize, why: &str) -> String {
    let before = &bytes[..at];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let column = 1 + before.iter().rev().take_while(|&&b| b != b'\n').count();
    let mut shown: String = bytes
        .iter()
        .take(SHOWN)
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    if bytes.len() > SHOWN {
        shown.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    format!("request() returned an invalid HTTP request: {why} at {line}:{column}: \"{shown}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_requests_are_counted() {
        let one = "GET /?foo HTTP/1.1\r\nHost: h\r\n\r\n";
        assert_eq!(count_requests(one.as_bytes()), Ok(1));
        let three = format!("{one}{one}{one}");
        assert_eq!(count_requests(three.as_bytes()), Ok(3));
        let post = "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(
            count_requests(format!("{post}{one}{post}").as_bytes()),
            Ok(3)
        );
        let chunked =
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(count_requests(format!("{chunked}{one}").as_bytes()), Ok(2));
    }

    #[test]
    fn bad_bytes_are_named_and_shown() {
        let err = count_requests(b"").unwrap_err();
        assert!(err.contains("incomplete request at 1:1"), "{err}");
        let err = count_requests(b"GET / HTTP/1.1\r\n\r\nhello\x01").unwrap_err();
        assert!(err.contains("at 3:1"), "{err}");
        assert!(err.contains("hello\\x01"), "{err}");
        let err = count_requests(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc").unwrap_err();
        assert!(err.contains("shorter than its Content-Length 9"), "{err}");
        let long = vec![b'x'; 1000];
        let err = count_requests(&long).unwrap_err();
        assert!(err.ends_with("... (1000 bytes)\""), "{err}");
    }
}
