//! Where a redirect's `Location` points (redirect.rs): absolute
//! (`http://host/p`), scheme-relative (`//host/p`), absolute-path (`/p`) or
//! relative (`p`, `../p`, `?q`), resolved against the URL of the request it
//! answers as RFC 3986 §5.2 says; the fragment dropped.

use crate::redirects::redirect_origin::Origin;

/// The origin (`None`: `from` itself) and path (with query) `location`
/// names, read from a response to `current_path` on `from`; `None` when it
/// names a scheme other than http and https (not followed).
pub(crate) fn resolve(
    location: &[u8],
    from: &Origin,
    current_path: &[u8],
) -> Option<(Option<Origin>, Vec<u8>)> {
    let text = String::from_utf8_lossy(location);
    let lower = text.to_ascii_lowercase();
    let scheme_end = lower
        .find("://")
        .filter(|&i| i > 0 && lower[..i].bytes().all(|b| b.is_ascii_alphabetic()));
    let (scheme, rest) = match scheme_end {
        Some(at) => (&lower[..at], Some(&text[at + 3..])),
        None => (
            if from.https { "https" } else { "http" },
            text.strip_prefix("//"),
        ),
    };
    let Some(rest) = rest else {
        return Some((None, relative_to(current_path, &text).into_bytes()));
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let origin = Origin::parse(scheme, authority)?;
    let origin = (origin != *from).then_some(origin);
    Some((origin, absolute_path(path).into_bytes()))
}

/// A path for the request line: the fragment dropped, `/` when empty.
fn absolute_path(path: &str) -> String {
    let path = path.split('#').next().unwrap_or("");
    if path.is_empty() {
        "/".to_string()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    }
}

/// `reference` resolved against `base` (a request path), RFC 3986 §5.2
/// for the path-only references a same-origin Location holds.
fn relative_to(base: &[u8], reference: &str) -> String {
    let reference = reference.split('#').next().unwrap_or("");
    let base = String::from_utf8_lossy(base);
    let (base_path, _base_query) = base.split_once('?').unwrap_or((&base, ""));
    if reference.starts_with('/') {
        return remove_dot_segments(reference);
    }
    if reference.is_empty() {
        return base.to_string();
    }
    if let Some(query) = reference.strip_prefix('?') {
        return format!("{base_path}?{query}");
    }
    let directory = match base_path.rfind('/') {
        Some(at) => &base_path[..=at],
        None => "/",
    };
    remove_dot_segments(&format!("{directory}{reference}"))
}

/// `/a/./b/../c` → `/a/c` (the query kept as it is).
fn remove_dot_segments(path: &str) -> String {
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if i == last {
                    out.push("");
                }
            }
            other => out.push(other),
        }
    }
    let mut text = format!("/{}", out.join("/"));
    if let Some(query) = query {
        text.push('?');
        text.push_str(query);
    }
    text
}
