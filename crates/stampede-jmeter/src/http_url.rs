//! An HTTP Request sampler's URL as JMeter builds it
//! (HTTPSamplerBase.getUrl): a path that starts with `http://` or
//! `https://` is the whole URL; otherwise protocol, domain, port (left out
//! when it is the protocol's default) and the path, with a `/` before it
//! only when it has none, then the query string for GET, DELETE and
//! OPTIONS. The path's first character is known after `${...}` is
//! substituted: when a run-time value begins the path, the scenario's URL
//! puts its slot right after the host and stampede adds the `/` per
//! request by the same rule.

use crate::functions::Translated;
use crate::MapError;

/// The sampler's address fields (with HTTP Request Defaults filled in).
pub(crate) struct Address<'a> {
    /// `'name' (class)`, for messages.
    pub sampler: &'a str,
    pub protocol: Option<String>,
    pub domain: Option<String>,
    pub port: Option<String>,
    pub path: Translated,
}

/// Methods whose arguments getUrl puts in the query string.
pub(crate) fn query_method(method: &str) -> bool {
    matches!(method, "GET" | "DELETE" | "OPTIONS")
}

/// The URL as stampede template text; `query` is getQueryString's text
/// (empty when the method sends none).
pub(crate) fn url(
    address: &Address,
    query: &str,
    notes: &mut Vec<String>,
) -> Result<String, MapError> {
    // getPath: spaces as %20 (a value filled at run time is encoded when sent).
    let path = address.path.map_literals(|text| text.replace(' ', "%20"));
    let lead = path.leading_literal();
    if lead.starts_with("http://") || lead.starts_with("https://") {
        let after = lead.find("://").map_or(0, |i| i + 3);
        if path.has_slots() && !lead[after..].contains(['/', '?']) {
            return Err(MapError::Unsupported(
                "the host changes per request; stampede needs it fixed".into(),
            ));
        }
        // The whole URL: getUrl adds no query string to it.
        return Ok(path.template());
    }
    let sampler = address.sampler;
    let domain = address.domain.as_deref().map(str::trim).unwrap_or("");
    if domain.is_empty() {
        return Err(MapError::Bad(format!(
            "{sampler}: no server name (HTTPSampler.domain), and no HTTP Request Defaults give one"
        )));
    }
    if domain.contains("${") {
        return Err(MapError::Bad(format!(
            "{sampler}: the server name '{domain}' holds a variable no user-defined variable or property sets"
        )));
    }
    let protocol = match address.protocol.as_deref().map(str::trim) {
        None | Some("") => "http".to_string(),
        Some(p) => p.to_ascii_lowercase(),
    };
    if protocol != "http" && protocol != "https" {
        return Err(MapError::Unsupported(format!(
            "protocol {protocol} is not mapped (http or https)"
        )));
    }
    let host = if domain.contains(':') && !domain.starts_with('[') {
        format!("[{domain}]")
    } else {
        domain.to_string()
    };
    let port = port(address, &protocol, notes)?;
    let mut url = format!("{protocol}://{host}{port}");
    // A path that begins with a run-time value: its slot follows the host
    // and the `/` is decided per request (stampede-workload's URL rule).
    let slot_first = lead.is_empty() && path.has_slots();
    if !lead.starts_with('/') && !slot_first {
        url.push('/');
    }
    let path = path.template();
    url.push_str(&path);
    if !query.is_empty() {
        url.push(if path.contains('?') { '&' } else { '?' });
        url.push_str(query);
    }
    Ok(url)
}

/// `:port`, or nothing for the protocol's default (isProtocolDefaultPort):
/// no port, 0, 80 for http, 443 for https, and, as getPortIfSpecified
/// reads it, a port that is not a number.
fn port(address: &Address, protocol: &str, notes: &mut Vec<String>) -> Result<String, MapError> {
    let Some(written) = address.port.as_deref() else {
        return Ok(String::new());
    };
    let written = written.trim();
    if written.is_empty() {
        return Ok(String::new());
    }
    let Ok(number) = written.parse::<i32>() else {
        notes.push(format!(
            "{}: port '{written}' is not a number: the protocol's default port is used, as JMeter does",
            address.sampler
        ));
        return Ok(String::new());
    };
    match (protocol, number) {
        (_, 0) | ("http", 80) | ("https", 443) => Ok(String::new()),
        (_, 1..=65535) => Ok(format!(":{number}")),
        _ => Err(MapError::Bad(format!(
            "{}: HTTPSampler.port is '{written}', not a port number",
            address.sampler
        ))),
    }
}
