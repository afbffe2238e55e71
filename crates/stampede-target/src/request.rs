//! Parsing one request head from the connection's buffer with httparse, and the
//! checks that decide framing before any body byte is trusted: Content-Length vs
//! Transfer-Encoding (request smuggling shapes are refused), keep-alive, Expect.
//! It does not read bodies (see `body`) nor choose responses (see `routes`).

/// Largest request head accepted; more is answered with 431.
pub(crate) const MAX_HEAD: usize = 16 * 1024;
/// Header lines accepted per request; more is answered with 431.
pub(crate) const MAX_HEADERS: usize = 64;

/// Request methods the server knows; anything else is 501.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Patch,
    Options,
    Trace,
    Connect,
}

impl Method {
    pub(crate) fn parse(s: &str) -> Option<Method> {
        Some(match s {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "PATCH" => Method::Patch,
            "OPTIONS" => Method::Options,
            "TRACE" => Method::Trace,
            "CONNECT" => Method::Connect,
            _ => return None,
        })
    }
}

/// How the request body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    None,
    Length(usize),
    Chunked,
}

/// A parsed request head; slices borrow the connection's read buffer.
#[derive(Debug)]
pub(crate) struct Head<'b> {
    pub method: Method,
    pub method_str: &'b str,
    /// Request target as sent (path and query).
    pub target: &'b str,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1, 2 for HTTP/2 (built by `http2`, not parsed here).
    pub version: u8,
    /// Bytes of the head including the blank line.
    pub head_len: usize,
    pub framing: Framing,
    pub keep_alive: bool,
    pub expect_continue: bool,
    pub if_modified_since: Option<&'b str>,
}

impl Head<'_> {
    /// The path part of the target (no query), with an absolute-form `http://host` removed.
    pub(crate) fn path(&self) -> &str {
        let t = self.target;
        let t = match t
            .strip_prefix("http://")
            .or_else(|| t.strip_prefix("https://"))
        {
            Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
            None => t,
        };
        t.split(['?', '#']).next().unwrap_or(t)
    }
}

/// Why a request is refused before it is routed; each closes the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    /// Malformed request line or header, or an ambiguous body framing (400).
    Malformed,
    /// Head over 16 KiB or too many header lines (431).
    HeadTooLarge,
    /// Declared body over `max_body` (413).
    BodyTooLarge,
    /// Unknown method or transfer coding (501).
    NotImplemented,
}

impl Bad {
    pub(crate) fn status(self) -> u16 {
        match self {
            Bad::Malformed => 400,
            Bad::HeadTooLarge => 431,
            Bad::BodyTooLarge => 413,
            Bad::NotImplemented => 501,
        }
    }
}

/// Result of trying to parse a head from the start of `buf`.
#[derive(Debug)]
pub(crate) enum Parsed<'b> {
    /// Need more bytes.
    Partial,
    Complete(Head<'b>),
    /// Refused; `method`/`target` are filled when the request line was readable (for the log).
    Bad(Bad),
}

/// Parses the head at the start of `buf`.
pub(crate) fn parse<'b>(buf: &'b [u8], max_body: usize) -> Parsed<'b> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > MAX_HEAD {
                Parsed::Bad(Bad::HeadTooLarge)
            } else {
                Parsed::Partial
            };
        }
        Err(httparse::Error::TooManyHeaders) => return Parsed::Bad(Bad::HeadTooLarge),
        Err(_) => return Parsed::Bad(Bad::Malformed),
    };
    if head_len > MAX_HEAD {
        return Parsed::Bad(Bad::HeadTooLarge);
    }
    let (Some(method_str), Some(target), Some(version)) = (req.method, req.path, req.version)
    else {
        return Parsed::Bad(Bad::Malformed);
    };
    let Some(method) = Method::parse(method_str) else {
        return Parsed::Bad(Bad::NotImplemented);
    };
    let origin_or_absolute =
        target.starts_with('/') || target.starts_with("http://") || target.starts_with("https://");
    let asterisk = target == "*" && method == Method::Options;
    if !(origin_or_absolute || asterisk) {
        return Parsed::Bad(Bad::Malformed);
    }
    let mut content_length: Option<usize> = None;
    let mut chunked = false;
    let mut saw_te = false;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;
    let mut ims = None;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let Some(n) = parse_length(h.value) else {
                return Parsed::Bad(Bad::Malformed);
            };
            // Duplicated Content-Length must agree (RFC 9112 §6.3); otherwise smuggling.
            if content_length.is_some_and(|prev| prev != n) {
                return Parsed::Bad(Bad::Malformed);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            if saw_te {
                return Parsed::Bad(Bad::Malformed);
            }
            saw_te = true;
            let v = trim(h.value);
            if v.eq_ignore_ascii_case(b"chunked") {
                chunked = true;
            } else {
                return Parsed::Bad(Bad::NotImplemented);
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for tok in h.value.split(|&c| c == b',') {
                let tok = trim(tok);
                if tok.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if tok.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive_token = true;
                }
            }
        } else if name.eq_ignore_ascii_case(b"expect") {
            if trim(h.value).eq_ignore_ascii_case(b"100-continue") {
                expect_continue = version == 1;
            } else {
                return Parsed::Bad(Bad::Malformed);
            }
        } else if name.eq_ignore_ascii_case(b"if-modified-since") {
            ims = std::str::from_utf8(h.value).ok();
        }
    }
    // Both framings at once is the classic smuggling shape: refuse rather than pick one.
    if saw_te && content_length.is_some() {
        return Parsed::Bad(Bad::Malformed);
    }
    if chunked && version == 0 {
        return Parsed::Bad(Bad::Malformed);
    }
    let framing = match (chunked, content_length) {
        (true, _) => Framing::Chunked,
        (false, Some(0)) | (false, None) => Framing::None,
        (false, Some(n)) if n > max_body => return Parsed::Bad(Bad::BodyTooLarge),
        (false, Some(n)) => Framing::Length(n),
    };
    let keep_alive = if version == 1 {
        !close
    } else {
        keep_alive_token && !close
    };
    Parsed::Complete(Head {
        method,
        method_str,
        target,
        version,
        head_len,
        framing,
        keep_alive,
        expect_continue: expect_continue && framing != Framing::None,
        if_modified_since: ims,
    })
}

fn trim(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &v[start..end]
}

/// Strict decimal: digits only (no sign, no spaces inside), no overflow.
fn parse_length(v: &[u8]) -> Option<usize> {
    let v = trim(v);
    if v.is_empty() || v.len() > 18 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(v.iter().fold(0usize, |n, d| n * 10 + (d - b'0') as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(raw: &str) -> Bad {
        match parse(raw.as_bytes(), 1000) {
            Parsed::Bad(b) => b,
            other => panic!("{raw:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn framing_and_keep_alive() {
        let Parsed::Complete(h) = parse(b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n", 10) else {
            panic!()
        };
        assert!(h.keep_alive);
        assert_eq!(h.path(), "/a");
        assert_eq!(h.framing, Framing::None);
        let Parsed::Complete(h) = parse(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 10)
        else {
            panic!()
        };
        assert!(h.keep_alive);
        let Parsed::Complete(h) = parse(b"GET / HTTP/1.0\r\n\r\n", 10) else {
            panic!()
        };
        assert!(!h.keep_alive);
        let Parsed::Complete(h) = parse(
            b"POST /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            10,
        ) else {
            panic!()
        };
        assert_eq!(h.framing, Framing::Length(5));
        assert!(matches!(
            parse(b"GET / HTTP/1.1\r\nHost: x\r\n", 10),
            Parsed::Partial
        ));
    }

    #[test]
    fn refusals() {
        let table = [
            ("GARBAGE\r\n\r\n", Bad::Malformed),
            ("GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", Bad::Malformed),
            ("BREW / HTTP/1.1\r\n\r\n", Bad::NotImplemented),
            (
                "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
                Bad::Malformed,
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
                Bad::Malformed,
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
                Bad::Malformed,
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n",
                Bad::BodyTooLarge,
            ),
            (
                "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
                Bad::NotImplemented,
            ),
            ("GET relative HTTP/1.1\r\n\r\n", Bad::Malformed),
        ];
        for (raw, want) in table {
            assert_eq!(bad(raw), want, "{raw:?}");
        }
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(MAX_HEAD + 10));
        assert_eq!(bad(&big), Bad::HeadTooLarge);
    }
}
