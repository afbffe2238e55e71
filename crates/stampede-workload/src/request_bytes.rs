//! Where one HTTP/1.1 request ends in bytes that may hold several (a wrk
//! script's `request()` may pipeline them): its head parsed, its body
//! framed by Content-Length or chunked coding. One rule for the Lua crate,
//! which counts a script's requests and refuses bytes that are no request,
//! and the engine, which cuts a batch to the requests `-n` has left.

/// Most headers one request may have.
const MAX_HEADERS: usize = 128;

/// The length of the request at the start of `bytes`, or why they are not
/// a whole request.
pub fn request_len(bytes: &[u8]) -> Result<usize, String> {
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

/// The length of the first `n` requests of `bytes` (all of them when
/// there are fewer), by [`request_len`]; bytes that are no request end it.
pub fn first_requests_len(bytes: &[u8], n: usize) -> usize {
    let mut at = 0;
    for _ in 0..n {
        match request_len(&bytes[at..]) {
            Ok(len) if len > 0 => at += len,
            _ => break,
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_cut_after_its_first_requests() {
        let get = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
        let post = "POST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
        let chunked =
            "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        let batch = format!("{get}{post}{chunked}");
        let bytes = batch.as_bytes();
        assert_eq!(first_requests_len(bytes, 0), 0);
        assert_eq!(first_requests_len(bytes, 1), get.len());
        assert_eq!(first_requests_len(bytes, 2), get.len() + post.len());
        assert_eq!(first_requests_len(bytes, 3), bytes.len());
        assert_eq!(first_requests_len(bytes, 9), bytes.len());
        assert_eq!(first_requests_len(b"junk", 2), 0);
    }
}
