//! The HTTP/2 form of a request, built once per plan: pseudo-headers from
//! the target, connection-specific headers dropped (RFC 9113 §8.2.2; HTTP/3
//! has the same rule, RFC 9114 §4.2, and sends this form too). A leaf:
//! the worker's plan carries these, so nothing here imports the engine.

use crate::EngineError;
use bytes::Bytes;
use stampede_plan::{RequestSpec, Target};

/// A request ready to send over HTTP/2 (built once per plan).
#[derive(Debug, Clone)]
pub(crate) struct H2Request {
    pub method: http::Method,
    pub uri: http::Uri,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

/// What the HTTP/2 slots of a worker share.
#[derive(Debug)]
pub(crate) struct H2Context {
    /// The plan's request, or each request of its mix.
    pub requests: Vec<H2Request>,
    pub streams: usize,
}

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2) or carries as pseudo-headers.
const CONNECTION_SPECIFIC: [&str; 6] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// Builds the HTTP/2 form of a request: `:authority` from the Host header
/// the user gave (or the URL's), connection-specific headers dropped.
pub(crate) fn prepare(target: &Target, request: &RequestSpec) -> Result<H2Request, EngineError> {
    let authority = request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("host"))
        .map_or(target.authority.clone(), |h| h.value.clone());
    let scheme = match target.scheme {
        stampede_plan::Scheme::Http => "http",
        stampede_plan::Scheme::Https => "https",
    };
    let uri: http::Uri = format!("{scheme}://{authority}{}", target.path_and_query)
        .parse()
        .map_err(|e| EngineError::http2_caused("URL", e))?;
    let method = http::Method::from_bytes(request.method.as_bytes())
        .map_err(|e| EngineError::http2_caused(format!("method '{}'", request.method), e))?;
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::USER_AGENT,
        http::HeaderValue::from_static(concat!("stampede/", env!("CARGO_PKG_VERSION"))),
    );
    for header in &request.headers {
        let name = header.name.to_ascii_lowercase();
        if CONNECTION_SPECIFIC.contains(&name.as_str()) {
            continue;
        }
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| EngineError::http2_caused(format!("header '{}'", header.name), e))?;
        let value = http::HeaderValue::from_str(&header.value).map_err(|e| {
            EngineError::http2_caused(format!("the value of header '{}'", header.name), e)
        })?;
        if name == http::header::USER_AGENT {
            headers.remove(http::header::USER_AGENT);
        }
        headers.append(name, value);
    }
    Ok(H2Request {
        method,
        uri,
        headers,
        body: Bytes::copy_from_slice(&request.body),
    })
}

/// Reads a request a workload rendered in HTTP/1.1 form (request line,
/// header fields, body) back into HTTP/2's parts: `:authority` from its
/// Host, the scheme of `base` (the plan's request), connection-specific
/// and framing fields dropped (HTTP/2 frames the body itself). The bytes
/// are the session's own, so an error means a value HTTP/2 cannot carry.
pub(crate) fn from_rendered(bytes: &[u8], base: &H2Request) -> Result<H2Request, String> {
    read_rendered(bytes, base, Framing::ToEnd).map(|(request, _)| request)
}

/// The first request in `bytes` (a wrk script's `request()` may return
/// several, pipelined), read as [`from_rendered`] reads one, and the
/// length it took: its body framed by Content-Length or chunked coding
/// (decoded, as HTTP/2 carries the body's bytes alone); without either it
/// has no body (RFC 9112 §6.3), and the next request starts after its head.
pub(crate) fn next_rendered(bytes: &[u8], base: &H2Request) -> Result<(H2Request, usize), String> {
    read_rendered(bytes, base, Framing::Empty)
}

/// Reads the request at the start of `bytes`; `unframed`: what its body is
/// when no field frames it.
fn read_rendered(
    bytes: &[u8],
    base: &H2Request,
    unframed: Framing,
) -> Result<(H2Request, usize), String> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut head = httparse::Request::new(&mut fields);
    let body_start = match head.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err("HTTP/2 request: incomplete head".into()),
        Err(e) => return Err(format!("HTTP/2 request: {e}")),
    };
    let method = head.method.unwrap_or("GET");
    let path = head.path.unwrap_or("/");
    let mut headers = http::HeaderMap::new();
    let mut authority = None;
    let mut framing = unframed;
    for field in head.headers.iter() {
        let name = field.name.to_ascii_lowercase();
        if name == "host" {
            authority = Some(String::from_utf8_lossy(field.value).into_owned());
            continue;
        }
        if name == "content-length" {
            let length = std::str::from_utf8(field.value)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .ok_or("HTTP/2 request: invalid Content-Length")?;
            framing = Framing::Length(length);
            continue;
        }
        if name == "transfer-encoding" && field.value.eq_ignore_ascii_case(b"chunked") {
            framing = Framing::Chunked;
        }
        if CONNECTION_SPECIFIC.contains(&name.as_str()) {
            continue;
        }
        let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?;
        let value = http::HeaderValue::from_bytes(field.value).map_err(|e| e.to_string())?;
        headers.append(name, value);
    }
    let scheme = base.uri.scheme_str().unwrap_or("http");
    let authority = authority
        .or_else(|| base.uri.authority().map(|a| a.to_string()))
        .unwrap_or_default();
    let uri = format!("{scheme}://{authority}{path}")
        .parse()
        .map_err(|e| format!("HTTP/2 request URL: {e}"))?;
    let rest = &bytes[body_start..];
    let (body, taken) = match framing {
        Framing::ToEnd => (Bytes::copy_from_slice(rest), rest.len()),
        Framing::Empty => (Bytes::new(), 0),
        Framing::Length(length) if length <= rest.len() => {
            (Bytes::copy_from_slice(&rest[..length]), length)
        }
        Framing::Length(length) => {
            return Err(format!(
                "HTTP/2 request: body shorter than its Content-Length {length}"
            ))
        }
        Framing::Chunked => {
            let mut decoder = crate::http1::ChunkedDecoder::default();
            let mut body = Vec::new();
            let (taken, _) = decoder
                .advance_with(rest, |data| body.extend_from_slice(data))
                .map_err(|_| "HTTP/2 request: malformed chunked body")?;
            if !decoder.is_done() {
                return Err("HTTP/2 request: chunked body cut short".into());
            }
            (Bytes::from(body), taken)
        }
    };
    let request = H2Request {
        method: http::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?,
        uri,
        headers,
        body,
    };
    Ok((request, body_start + taken))
}

/// How a rendered request's body is delimited.
enum Framing {
    /// No Content-Length nor chunked coding, one request alone (rendered
    /// by a template): the bytes that are left.
    ToEnd,
    /// No Content-Length nor chunked coding in a script's pipelined bytes:
    /// no body.
    Empty,
    Length(usize),
    Chunked,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan's request a rendered one takes its scheme and authority from.
    fn base() -> H2Request {
        let target = Target::parse("http://127.0.0.1:3000/").unwrap();
        let spec = RequestSpec {
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            http10: false,
        };
        prepare(&target, &spec).unwrap()
    }

    #[test]
    fn a_rendered_request_reads_back_into_http2_parts() {
        let base = base();
        let rendered = b"POST /login?u=7 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nUser-Agent: t\r\n\
            Connection: close\r\nContent-Length: 2\r\nX-Id: 7\r\n\r\n{}";
        let request = from_rendered(rendered, &base).unwrap();
        assert_eq!(request.method, http::Method::POST);
        assert_eq!(request.uri.to_string(), "http://127.0.0.1:3000/login?u=7");
        assert_eq!(request.headers["x-id"], "7");
        assert!(request.headers.get("connection").is_none());
        assert!(request.headers.get("content-length").is_none());
        assert_eq!(&request.body[..], b"{}");
    }

    #[test]
    fn pipelined_requests_are_read_one_after_another() {
        let base = base();
        let bytes: &[u8] = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n\
            POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc\
            PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n1\r\nz\r\n0\r\n\r\n\
            GET /d HTTP/1.1\r\nHost: h\r\n\r\n";
        let mut at = 0;
        let mut seen = Vec::new();
        while at < bytes.len() {
            let (request, taken) = next_rendered(&bytes[at..], &base).unwrap();
            seen.push((
                request.method.to_string(),
                request.uri.path().to_string(),
                request.body.to_vec(),
            ));
            assert!(request.headers.get("transfer-encoding").is_none());
            at += taken;
        }
        assert_eq!(
            seen,
            [
                ("GET".into(), "/a".into(), Vec::new()),
                ("POST".into(), "/b".into(), b"abc".to_vec()),
                ("PUT".into(), "/c".into(), b"xyz".to_vec()),
                ("GET".into(), "/d".into(), Vec::new()),
            ]
        );
        let short = next_rendered(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab", &base);
        assert!(short.unwrap_err().contains("Content-Length 9"));
        let cut = next_rendered(
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            &base,
        );
        assert!(cut.unwrap_err().contains("cut short"));
    }
}
