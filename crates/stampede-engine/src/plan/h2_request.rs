//! The HTTP/2 form of a request, built once per plan: pseudo-headers from
//! the target, connection-specific headers dropped (RFC 9113 §8.2.2; HTTP/3
//! has the same rule, RFC 9114 §4.2, and sends this form too). A leaf:
//! the worker's plan carries these, so nothing here imports the engine.

use crate::error::EngineError;
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
    let uri = target_uri(method, path, authority, base)?;
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
                .advance_with(rest, |data, _| body.extend_from_slice(data))
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

/// The URI (`:scheme`, `:authority`, `:path`) of a rendered request's
/// request line (RFC 9112 §3.2): origin form (`/path?q`) on the scheme of
/// `base` and the authority of its Host field (or `base`'s); absolute form
/// (`http://host/path`, as to a proxy) with the URL's own scheme and
/// authority (a Host field is then ignored, §3.2.2); asterisk form
/// (`OPTIONS *`) as a URI whose path is `*` (the `http` crate carries it;
/// RFC 9113 §8.3.1). CONNECT (authority form) is
/// refused: it opens a tunnel, not a request a load test can repeat.
fn target_uri(
    method: &str,
    target: &str,
    host: Option<String>,
    base: &H2Request,
) -> Result<http::Uri, String> {
    if method.eq_ignore_ascii_case("CONNECT") {
        return Err("HTTP/2 request: CONNECT is not supported over HTTP/2 scripts".into());
    }
    let bad = |e: &dyn std::fmt::Display| format!("HTTP/2 request target '{target}': {e}");
    if target.starts_with('/') || target == "*" {
        let scheme = base.uri.scheme_str().unwrap_or("http");
        let authority = host
            .or_else(|| base.uri.authority().map(|a| a.to_string()))
            .unwrap_or_default();
        if target == "*" {
            if method != "OPTIONS" {
                return Err(bad(&"'*' is the request target of OPTIONS alone"));
            }
            let mut parts = http::uri::Parts::default();
            parts.scheme = Some(scheme.parse().map_err(|e| bad(&e))?);
            parts.authority = Some(authority.parse().map_err(|e| bad(&e))?);
            parts.path_and_query = Some(http::uri::PathAndQuery::from_static("*"));
            return http::Uri::from_parts(parts).map_err(|e| bad(&e));
        }
        return format!("{scheme}://{authority}{target}")
            .parse()
            .map_err(|e| bad(&e));
    }
    let uri: http::Uri = target.parse().map_err(|e| bad(&e))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(_)) => Ok(uri),
        _ => Err(bad(
            &"not a path ('/...'), an absolute http(s) URL or '*' (OPTIONS)",
        )),
    }
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

    /// The request line's target in each of its forms (RFC 9112 §3.2), as
    /// HTTP/2's `:scheme`, `:authority` and `:path` (what the `h2` crate
    /// sends: the URI's path and query, `*` for OPTIONS without one), or
    /// the error that refuses it.
    #[test]
    fn each_request_target_form_maps_to_http2_pseudo_headers() {
        let base = base();
        type Row = (
            &'static str,
            Result<(&'static str, &'static str, &'static str), &'static str>,
        );
        let table: [Row; 9] = [
            (
                "GET /echo?a=1 HTTP/1.1\r\nHost: h:81\r\n\r\n",
                Ok(("http", "h:81", "/echo?a=1")),
            ),
            (
                "GET /x HTTP/1.1\r\n\r\n",
                Ok(("http", "127.0.0.1:3000", "/x")),
            ),
            (
                "GET http://abs.example/echo?abs HTTP/1.1\r\nHost: other\r\n\r\n",
                Ok(("http", "abs.example", "/echo?abs")),
            ),
            (
                "GET https://abs.example:8443 HTTP/1.1\r\n\r\n",
                Ok(("https", "abs.example:8443", "/")),
            ),
            (
                "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
                Ok(("http", "h", "*")),
            ),
            ("GET * HTTP/1.1\r\n\r\n", Err("OPTIONS alone")),
            (
                "CONNECT abs.example:443 HTTP/1.1\r\nHost: abs.example:443\r\n\r\n",
                Err("CONNECT is not supported over HTTP/2 scripts"),
            ),
            (
                "GET ftp://abs.example/f HTTP/1.1\r\n\r\n",
                Err("not a path"),
            ),
            ("GET echo HTTP/1.1\r\n\r\n", Err("not a path")),
        ];
        for (rendered, expected) in table {
            let got = from_rendered(rendered.as_bytes(), &base).map(|r| {
                let method = r.method.clone();
                let parts = http::uri::Parts::from(r.uri);
                let path = parts.path_and_query.map(|p| p.as_str().to_string());
                // The h2 crate's rule for `:path` (frame/headers.rs, Pseudo::request).
                let path = match path.as_deref() {
                    Some(p) if !p.is_empty() => p.to_string(),
                    _ if method == http::Method::OPTIONS => "*".to_string(),
                    _ => "/".to_string(),
                };
                (
                    parts.scheme.map(|s| s.to_string()).unwrap_or_default(),
                    parts.authority.map(|a| a.to_string()).unwrap_or_default(),
                    path,
                )
            });
            match (got, expected) {
                (Ok((scheme, authority, path)), Ok(want)) => {
                    assert_eq!(
                        (scheme.as_str(), authority.as_str(), path.as_str()),
                        want,
                        "{rendered}"
                    )
                }
                (Err(error), Err(want)) => assert!(error.contains(want), "{rendered}: {error}"),
                (got, want) => panic!("{rendered}: got {got:?}, want {want:?}"),
            }
        }
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
