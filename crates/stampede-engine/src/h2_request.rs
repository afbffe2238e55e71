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
    for field in head.headers.iter() {
        let name = field.name.to_ascii_lowercase();
        if name == "host" {
            authority = Some(String::from_utf8_lossy(field.value).into_owned());
            continue;
        }
        if CONNECTION_SPECIFIC.contains(&name.as_str()) || name == "content-length" {
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
    Ok(H2Request {
        method: http::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?,
        uri,
        headers,
        body: Bytes::copy_from_slice(&bytes[body_start..]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_request_reads_back_into_http2_parts() {
        let target = Target::parse("http://127.0.0.1:3000/").unwrap();
        let spec = RequestSpec {
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            http10: false,
        };
        let base = prepare(&target, &spec).unwrap();
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
}
