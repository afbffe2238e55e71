//! How many HTTP/1.1 requests the bytes from `request()` hold (wrk's
//! `script_verify_request`): each head parsed, its body (Content-Length or
//! chunked) skipped, until the bytes end exactly at a request's end. Bytes
//! that are not whole requests are an error naming where parsing stopped
//! and showing the bytes, escaped and truncated.

use stampede_workload::request_bytes::request_len;

/// Bytes of a bad request shown in the error.
const SHOWN: usize = 160;

/// Counts the requests in `bytes`, at least 1.
pub(crate) fn count_requests(bytes: &[u8]) -> Result<usize, String> {
    let mut at = 0;
    let mut count = 0;
    while at < bytes.len() || count == 0 {
        at += request_len(&bytes[at..]).map_err(|why| invalid(bytes, at, &why))?;
        count += 1;
    }
    Ok(count)
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
