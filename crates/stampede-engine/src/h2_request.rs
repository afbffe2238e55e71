//! The HTTP/2 form of a request, built once per plan: pseudo-headers from
//! the target, connection-specific headers dropped (RFC 9113 §8.2.2; HTTP/3
//! has the same rule, RFC 9114 §4.2, and sends this form too). A leaf:
//! the worker's plan carries these, so nothing here imports the engine.

use crate::EngineError;
use bytes::Bytes;
use stampede_plan::{RequestSpec, Target};

/// A request ready to send over HTTP/2 (built once per plan).
#[derive(Debug, Clone)]
pub struct H2Request {
    pub method: http::Method,
    pub uri: http::Uri,
    pub headers: http::HeaderMap,
    pub body: Bytes,
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
pub fn prepare(target: &Target, request: &RequestSpec) -> Result<H2Request, EngineError> {
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
