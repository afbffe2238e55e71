//! A HAR file (HTTP Archive 1.2, what a browser's DevTools "Save all as
//! HAR" writes) read into a scenario's typed values: one group, a step per
//! recorded request of one origin, in the order they started. A step keeps
//! the request's method, URL, headers and body; the pause before it is the
//! recorded gap since the previous request ended (scaled, or none).
//! Cookies a recorded response set are left to the group's cookie jar; the
//! ones the browser already held are sent as recorded. Everything kept is
//! literal: `{{` in a recorded URL, header or body is written `\{{`.

use crate::scenario::{spanned, GroupToml, ScenarioToml, StepToml};
use crate::template::escape_literal as literal;
use serde::Deserialize;
use std::collections::BTreeMap;

/// How a HAR becomes a scenario.
#[derive(Debug, Clone)]
pub struct HarOptions {
    /// The origin to keep (`https://host:port` or a host); `None`: the
    /// first request's.
    pub origin: Option<String>,
    /// Leave out images, style sheets, scripts, fonts and media.
    pub no_static: bool,
    /// Recorded gaps × this is each step's pause; 0: no pauses.
    pub think_scale: f64,
    /// Virtual users of the group.
    pub connections: i64,
}

impl Default for HarOptions {
    fn default() -> HarOptions {
        HarOptions {
            origin: None,
            no_static: false,
            think_scale: 1.0,
            connections: 1,
        }
    }
}

/// A scenario made from a HAR, and what was left out of it (one line each).
#[derive(Debug)]
pub struct HarScenario {
    /// The scenario: one group, one step per request kept.
    pub scenario: ScenarioToml,
    /// What was left out, one line each.
    pub notes: Vec<String>,
}

/// Why a HAR cannot be read; each names the entry when there is one.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HarError {
    /// The file is not HAR JSON: why.
    #[error("not a HAR file: {0}")]
    NotHar(String),
    /// An entry that cannot be used.
    #[error("entry {entry}: {why}")]
    Entry {
        /// The entry, from 1.
        entry: usize,
        /// Why.
        why: String,
    },
    /// No entry is left to make a step of: why.
    #[error("no request to keep: {0}")]
    Empty(String),
}

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    started_date_time: String,
    #[serde(default)]
    time: f64,
    request: Request,
    #[serde(default)]
    response: Option<Response>,
    #[serde(default, rename = "_resourceType")]
    resource_type: Option<String>,
    /// Chromium: "disk" or "memory" when the browser answered from its cache.
    #[serde(default, rename = "_fromCache")]
    from_cache: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<NameValue>,
    #[serde(default)]
    cookies: Vec<NameValue>,
    #[serde(default)]
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct Response {
    /// 0 when no response came (blocked, aborted, failed).
    #[serde(default = "answered")]
    status: u16,
    #[serde(default)]
    cookies: Vec<NameValue>,
    #[serde(default)]
    content: Option<Content>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    #[serde(default)]
    mime_type: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostData {
    #[serde(default)]
    mime_type: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    params: Vec<NameValue>,
}

#[derive(Deserialize, Clone)]
struct NameValue {
    name: String,
    #[serde(default)]
    value: String,
}

fn answered() -> u16 {
    200
}

/// Headers a browser records that the step must not carry: HTTP/2's
/// pseudo-headers, the hop-by-hop ones (RFC 9110 §7.6.1), and those
/// stampede writes itself (Host, Content-Length) or the jar decides (Cookie).
const LEFT_OUT: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "cookie",
];

/// DevTools' resource types of static assets (`--har-no-static`).
const STATIC_TYPES: &[&str] = &["image", "stylesheet", "script", "font", "media"];

/// One recorded request a replay sends again: of the kept origin, served
/// by the server (not from the browser's cache), in the order they started.
#[derive(Debug, Clone, PartialEq)]
pub struct HarRequest {
    /// Its entry in the file, from 1.
    pub entry: usize,
    /// `startedDateTime`, milliseconds since the epoch.
    pub started_ms: f64,
    /// `time`: the recorded time of the whole exchange, milliseconds.
    pub time_ms: f64,
    /// The method.
    pub method: String,
    /// The URL as recorded.
    pub url: String,
    /// The headers sent again, in the recorded order: pseudo-headers,
    /// hop-by-hop ones, Host, Content-Length and Cookie dropped; a name
    /// recorded twice joined with `, `; the cookies the browser already
    /// held as one `Cookie`; a body's `Content-Type` from its `mimeType`
    /// where no header gave it.
    pub headers: Vec<(String, String)>,
    /// The body, empty for none.
    pub body: String,
    /// The recorded status; `None` where the entry has no response.
    pub status: Option<u16>,
}

/// A HAR's requests to send, and what was left out (one line each).
#[derive(Debug)]
pub struct HarRequests {
    /// The requests kept, in the order they started.
    pub requests: Vec<HarRequest>,
    /// How many entries the file has.
    pub entries: usize,
    /// What was left out, one line each.
    pub notes: Vec<String>,
}

/// Reads `text` (a HAR file's content) into a scenario.
pub fn scenario_from_har(text: &str, options: &HarOptions) -> Result<HarScenario, HarError> {
    let read = requests_from_har(text, options)?;
    let mut steps = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut previous_end: Option<f64> = None;
    for request in &read.requests {
        let mut name = format!("{} {}", request.method, path_of(&request.url));
        let base = name.clone();
        let mut n = 1;
        while names.contains(&name) {
            n += 1;
            name = format!("{base} ({n})");
        }
        names.push(name.clone());
        let mut step = StepToml::new(name, literal(&request.url));
        if request.method != "GET" {
            step.method = Some(spanned(request.method.clone()));
        }
        let mut headers = toml::Table::new();
        for (name, value) in &request.headers {
            headers.insert(name.clone(), toml::Value::String(literal(value)));
        }
        if !request.body.is_empty() {
            step.body = Some(spanned(literal(&request.body)));
        }
        if !headers.is_empty() {
            step.headers = Some(spanned(headers));
        }
        let (started, took) = (request.started_ms, request.time_ms);
        if let Some(end) = previous_end {
            let gap = (started - end) * options.think_scale;
            if gap >= 1.0 {
                step.think = Some(spanned(format!("{}ms", gap.round() as u64)));
            }
        }
        previous_end = Some(previous_end.map_or(started + took, |e: f64| e.max(started + took)));
        steps.push(step);
    }
    let mut group = GroupToml::named("har");
    group.connections = Some(spanned(options.connections.max(1)));
    group.cookies = Some(true);
    group.step = steps;
    Ok(HarScenario {
        scenario: ScenarioToml { group: vec![group] },
        notes: read.notes,
    })
}

/// Reads `text` (a HAR file's content) into the requests of one origin
/// the server served, each as `run --har` sends it (`think_scale` and
/// `connections` are not read). `stampede replay --format har` sends them
/// at their recorded offsets.
pub fn requests_from_har(text: &str, options: &HarOptions) -> Result<HarRequests, HarError> {
    let har: Har = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| HarError::NotHar(e.to_string()))?;
    let total = har.log.entries.len();
    let mut entries = Vec::new();
    for (index, entry) in har.log.entries.into_iter().enumerate() {
        let started = start_ms(&entry.started_date_time).ok_or_else(|| HarError::Entry {
            entry: index + 1,
            why: format!(
                "startedDateTime '{}' is not an RFC 3339 time",
                entry.started_date_time
            ),
        })?;
        entries.push((index + 1, started, entry));
    }
    // Entries are in the order they started (the spec asks it; sorted
    // anyway, so a merged or edited file reads the same).
    entries.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut notes = Vec::new();
    let mut other_origins: BTreeMap<String, usize> = BTreeMap::new();
    let (mut not_http, mut static_assets, mut not_sent) = (0, 0, 0);
    let mut no_body = 0;
    let mut keep_origin = options.origin.as_deref().map(normalize_origin);
    let mut set_by_responses: Vec<String> = Vec::new();
    let mut kept: Vec<(usize, f64, f64, &Entry, Vec<String>)> = Vec::new();
    for (number, started, entry) in &entries {
        let Some(origin) = origin_of(&entry.request.url) else {
            not_http += 1;
            continue;
        };
        // Answered from the browser's cache, or never answered (blocked,
        // aborted): the server did not serve it, so the replay does not send it.
        let unanswered = entry.response.as_ref().is_some_and(|r| r.status == 0);
        if entry.from_cache.is_some() || unanswered {
            not_sent += 1;
            continue;
        }
        let wanted = keep_origin.get_or_insert_with(|| origin.clone());
        if !same_origin(wanted, &origin) {
            *other_origins.entry(origin).or_default() += 1;
            continue;
        }
        if options.no_static && is_static(entry) {
            static_assets += 1;
            continue;
        }
        // Cookies the browser held before this request that no earlier
        // response of the recording set: sent as recorded.
        let held: Vec<String> = recorded_cookies(&entry.request)
            .into_iter()
            .filter(|(name, _)| !set_by_responses.contains(name))
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        if let Some(response) = &entry.response {
            set_by_responses.extend(response.cookies.iter().map(|c| c.name.clone()));
        }
        kept.push((*number, *started, entry.time.max(0.0), entry, held));
    }
    if not_http > 0 {
        notes.push(format!(
            "left out {} that {} not http or https (data:, blob:, ws:, extensions)",
            requests(not_http),
            if not_http == 1 { "is" } else { "are" }
        ));
    }
    if !other_origins.is_empty() {
        let list: Vec<String> = other_origins
            .iter()
            .map(|(origin, n)| format!("{origin} ({n})"))
            .collect();
        notes.push(format!(
            "left out requests to other origins (a scenario's steps go to one): {}",
            list.join(", ")
        ));
    }
    if not_sent > 0 {
        notes.push(format!(
            "left out {} the server never served (from the browser's cache, or aborted)",
            requests(not_sent)
        ));
    }
    if static_assets > 0 {
        let noun = if static_assets == 1 {
            "asset"
        } else {
            "assets"
        };
        notes.push(format!(
            "left out {static_assets} static {noun} (--har-no-static)"
        ));
    }
    if kept.is_empty() {
        return Err(HarError::Empty(match keep_origin {
            Some(origin) => format!("the HAR has no request to {origin}"),
            None => "the HAR has no http or https request".into(),
        }));
    }
    let mut out = Vec::with_capacity(kept.len());
    for (number, started, took, entry, held) in kept {
        let request = &entry.request;
        let mut headers: Vec<(String, String)> = Vec::new();
        for header in &request.headers {
            let lower = header.name.to_ascii_lowercase();
            if lower.starts_with(':') || LEFT_OUT.contains(&lower.as_str()) {
                continue;
            }
            match headers.iter_mut().find(|(name, _)| *name == header.name) {
                // A name recorded twice: one field, values joined (RFC 9110 §5.3).
                Some((_, earlier)) => {
                    earlier.push_str(", ");
                    earlier.push_str(&header.value);
                }
                None => headers.push((header.name.clone(), header.value.clone())),
            }
        }
        if !held.is_empty() {
            headers.push(("Cookie".into(), held.join("; ")));
        }
        let mut body = String::new();
        if let Some(post) = &request.post_data {
            let form = post
                .mime_type
                .starts_with("application/x-www-form-urlencoded");
            body = match (&post.text, post.params.is_empty()) {
                (Some(text), _) => text.clone(),
                // HAR 1.2 keeps a form's fields decoded in `params`: encoded
                // again as a browser sends them.
                (None, false) if form => post
                    .params
                    .iter()
                    .map(|p| format!("{}={}", form_encode(&p.name), form_encode(&p.value)))
                    .collect::<Vec<_>>()
                    .join("&"),
                (None, false) => {
                    // A multipart body's parts (files) are not in the HAR.
                    no_body += 1;
                    String::new()
                }
                (None, true) => String::new(),
            };
            let has_type = headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
            if !body.is_empty() && !has_type && !post.mime_type.is_empty() {
                headers.push(("Content-Type".into(), post.mime_type.clone()));
            }
        }
        out.push(HarRequest {
            entry: number,
            started_ms: started,
            time_ms: took,
            method: request.method.clone(),
            url: request.url.clone(),
            headers,
            body,
            status: entry.response.as_ref().map(|r| r.status),
        });
    }
    if no_body > 0 {
        notes.push(format!(
            "sent {} without its body: the HAR keeps a multipart form's fields, not its bytes",
            requests(no_body)
        ));
    }
    Ok(HarRequests {
        requests: out,
        entries: total,
        notes,
    })
}

fn requests(n: usize) -> String {
    if n == 1 {
        "1 request".into()
    } else {
        format!("{n} requests")
    }
}

/// `application/x-www-form-urlencoded` as browsers write it: a space as `+`,
/// every byte but letters, digits and `*-._` percent-encoded.
fn form_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                (b as char).to_string()
            }
            b' ' => "+".into(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `scheme://host[:port]` of an http or https URL, lower-cased.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    Some(format!("{scheme}://{}", authority.to_ascii_lowercase()))
}

/// An origin given as a bare host matches that host on any scheme and port.
fn normalize_origin(text: &str) -> String {
    text.trim_end_matches('/').to_ascii_lowercase()
}

fn same_origin(wanted: &str, origin: &str) -> bool {
    if wanted.contains("://") {
        return wanted == origin;
    }
    let host_port = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    host_port == wanted || host_port.split(':').next() == Some(wanted)
}

fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = rest.find('/').map_or("/", |at| &rest[at..]);
    path.split(['?', '#']).next().unwrap_or(path)
}

fn is_static(entry: &Entry) -> bool {
    if let Some(kind) = &entry.resource_type {
        return STATIC_TYPES.contains(&kind.as_str());
    }
    let mime = entry
        .response
        .as_ref()
        .and_then(|r| r.content.as_ref())
        .map(|c| c.mime_type.to_ascii_lowercase())
        .unwrap_or_default();
    mime.starts_with("image/")
        || mime.starts_with("font/")
        || mime.starts_with("video/")
        || mime.starts_with("audio/")
        || mime.starts_with("text/css")
        || mime.contains("javascript")
}

/// The cookies a request carried: its `cookies` list, else its Cookie header.
fn recorded_cookies(request: &Request) -> Vec<(String, String)> {
    if !request.cookies.is_empty() {
        return request
            .cookies
            .iter()
            .map(|c| (c.name.clone(), c.value.clone()))
            .collect();
    }
    request
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("cookie"))
        .flat_map(|h| h.value.split(';'))
        .filter_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

/// Milliseconds since the epoch of an RFC 3339 time.
fn start_ms(text: &str) -> Option<f64> {
    let parsed =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(parsed.unix_timestamp_nanos() as f64 / 1e6)
}

#[cfg(test)]
mod tests;
