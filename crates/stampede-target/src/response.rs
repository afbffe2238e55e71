//! Writing response heads and small whole responses into a connection's write buffer
//! (appending, never allocating once the buffer has grown). Knows status lines,
//! reason phrases and the Connection header rules; not which response to send.

/// How the response body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Len {
    Known(usize),
    Chunked,
}

/// What the head needs to know about the exchange.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exchange<'a> {
    /// 0 for HTTP/1.0, 1 for HTTP/1.1, 2 for HTTP/2: the h2 layer frames the body
    /// and drops connection headers, so the head gets neither chunked coding nor a
    /// `Connection` header (the bytes are converted to HEADERS and DATA frames).
    pub version: u8,
    /// Keep the connection open after this response.
    pub keep_alive: bool,
    /// HEAD request: head only, no body bytes.
    pub head_only: bool,
    /// IMF-fixdate of the current second.
    pub date: &'a [u8],
    /// An `Alt-Svc` header line (HTTP/3 on offer: `serve --http3`), or empty.
    pub alt_svc: &'a [u8],
}

/// Appends the decimal digits of `n`.
#[inline]
pub(crate) fn push_num(w: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    w.extend_from_slice(&tmp[i..]);
}

/// Appends `n` in lowercase hex (chunk sizes).
pub(crate) fn push_hex(w: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 16];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b"0123456789abcdef"[(n & 15) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    w.extend_from_slice(&tmp[i..]);
}

pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        414 => "URI Too Long",
        418 => "I'm a teapot",
        426 => "Upgrade Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// True when a response with this status never carries a body (RFC 9110 §6.4.1).
pub(crate) fn bodiless(status: u16) -> bool {
    status == 204 || status == 304 || (100..200).contains(&status)
}

/// Appends a status line and headers. `extra` is zero or more complete header lines.
pub(crate) fn head(
    w: &mut Vec<u8>,
    x: &Exchange,
    status: u16,
    ctype: Option<&str>,
    len: Len,
    extra: &[u8],
) {
    w.extend_from_slice(b"HTTP/1.1 ");
    push_num(w, status as u64);
    w.push(b' ');
    w.extend_from_slice(reason(status).as_bytes());
    w.extend_from_slice(b"\r\nServer: stampede\r\nDate: ");
    w.extend_from_slice(x.date);
    w.extend_from_slice(b"\r\n");
    if let Some(ct) = ctype {
        w.extend_from_slice(b"Content-Type: ");
        w.extend_from_slice(ct.as_bytes());
        w.extend_from_slice(b"\r\n");
    }
    if !bodiless(status) {
        match len {
            Len::Known(n) => {
                w.extend_from_slice(b"Content-Length: ");
                push_num(w, n as u64);
                w.extend_from_slice(b"\r\n");
            }
            Len::Chunked => w.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        }
    }
    w.extend_from_slice(extra);
    w.extend_from_slice(x.alt_svc);
    if !x.keep_alive {
        w.extend_from_slice(b"Connection: close\r\n");
    } else if x.version == 0 {
        w.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    w.extend_from_slice(b"\r\n");
}

/// Appends a whole response with a small body; returns the body bytes sent.
pub(crate) fn whole(w: &mut Vec<u8>, x: &Exchange, status: u16, ctype: &str, body: &[u8]) -> usize {
    head(w, x, status, Some(ctype), Len::Known(body.len()), b"");
    if x.head_only || bodiless(status) {
        0
    } else {
        w.extend_from_slice(body);
        body.len()
    }
}

/// Appends a short text/plain error or status response (`404 Not Found\n`).
pub(crate) fn plain(w: &mut Vec<u8>, x: &Exchange, status: u16) -> usize {
    let mut msg = [0u8; 64];
    let r = reason(status).as_bytes();
    let n = r.len().min(58);
    msg[..3].copy_from_slice(&[
        b'0' + (status / 100) as u8,
        b'0' + (status / 10 % 10) as u8,
        b'0' + (status % 10) as u8,
    ]);
    msg[3] = b' ';
    msg[4..4 + n].copy_from_slice(&r[..n]);
    msg[4 + n] = b'\n';
    whole(w, x, status, "text/plain", &msg[..5 + n])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        let x = Exchange {
            version: 0,
            keep_alive: true,
            head_only: false,
            date: b"Tue, 10 Oct 2000 13:55:36 GMT",
            alt_svc: b"",
        };
        let mut w = Vec::new();
        let n = plain(&mut w, &x, 404);
        assert_eq!(n, 14);
        let s = String::from_utf8(w).unwrap();
        assert!(s.starts_with("HTTP/1.1 404 Not Found\r\n"), "{s}");
        assert!(s.contains("Content-Length: 14\r\nConnection: keep-alive\r\n\r\n404 Not Found\n"));
        let mut w = Vec::new();
        push_hex(&mut w, 255);
        push_num(&mut w, 0);
        assert_eq!(w, b"ff0");
    }
}
