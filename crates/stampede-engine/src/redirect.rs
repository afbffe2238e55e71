//! Following redirects (`--redirects N`, issue 23): which responses are a
//! hop, where a hop goes, and the request that goes there. One rulebook for
//! both paths (the reactors' books and the tokio slot):
//!
//! - 301, 302 and 303 are followed with a GET without a body (what browsers
//!   and curl do for 301/302 after a POST, and what 303 asks); 307 and 308
//!   repeat the method and the body;
//! - `Location` may be absolute (`http://host/p`), scheme-relative
//!   (`//host/p`), absolute-path (`/p`) or relative (`p`, `../p`, `?q`),
//!   resolved against the request's own path;
//! - a hop to the same origin goes on the same connection pool; a hop to
//!   another origin is not followed: the 3xx is the request's response, and
//!   it is counted as an offsite redirect (the engine connects to one origin);
//! - after `N` hops a further redirect is the `redirect_limit` error.

/// The hops of a connection's request in flight, kept the same way by
/// both paths: how many so far, and the next hop's request (two buffers
/// swapped, so following a chain does not allocate).
#[derive(Debug, Default)]
pub struct Hops {
    count: u32,
    request: Vec<u8>,
    spare: Vec<u8>,
}

impl Hops {
    /// A new request: no hop yet.
    pub fn reset(&mut self) {
        self.count = 0;
    }

    /// The hop's request, once the request in flight has hopped.
    pub fn request(&self) -> Option<&[u8]> {
        (self.count > 0).then_some(&self.request[..])
    }

    /// Decides on a `status` response carrying `location` to the request in
    /// flight (`original`, its bytes before any hop): a hop's request is
    /// made ready and counted; an offsite redirect is counted and is the
    /// response.
    pub fn follow(
        &mut self,
        rule: &RedirectRule,
        status: u16,
        location: Option<&[u8]>,
        original: &[u8],
        recorder: &mut stampede_metrics::Recorder,
    ) -> Follow {
        let current: &[u8] = if self.count > 0 {
            &self.request
        } else {
            original
        };
        let follow = rule.follow(status, location, request_path(current), self.count);
        match &follow {
            Follow::Hop { path, keep_method } => {
                hop_request(current, path, *keep_method, &mut self.spare);
                std::mem::swap(&mut self.request, &mut self.spare);
                self.count += 1;
                recorder.record_redirect();
            }
            Follow::Offsite => recorder.record_offsite_redirect(),
            Follow::No | Follow::Limit => {}
        }
        follow
    }
}

/// Statuses that redirect.
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// What to do with a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Follow {
    /// Not a redirect (or redirects are off): the response is the answer.
    No,
    /// Send this path next; `keep_method`: 307/308 repeat method and body.
    Hop { path: Vec<u8>, keep_method: bool },
    /// A redirect to another origin: not followed.
    Offsite,
    /// One hop more than `--redirects` allows.
    Limit,
}

/// The origin requests go to, and how many hops a request may take.
#[derive(Debug, Clone)]
pub struct RedirectRule {
    pub max_hops: u32,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// `host:port` as the request's Host names it (lowercase host).
    pub authority: String,
    /// The scheme's default port: `host` alone names the same origin.
    pub default_port: u16,
}

impl RedirectRule {
    /// What to do with a `status` response carrying `location`, to a
    /// request for `current_path` that has taken `hops` hops so far.
    pub fn follow(
        &self,
        status: u16,
        location: Option<&[u8]>,
        current_path: &[u8],
        hops: u32,
    ) -> Follow {
        if self.max_hops == 0 || !is_redirect(status) {
            return Follow::No;
        }
        let Some(location) = location.map(<[u8]>::trim_ascii).filter(|l| !l.is_empty()) else {
            return Follow::No;
        };
        let Some(path) = self.resolve(location, current_path) else {
            return Follow::Offsite;
        };
        if hops >= self.max_hops {
            return Follow::Limit;
        }
        Follow::Hop {
            path,
            keep_method: matches!(status, 307 | 308),
        }
    }

    /// The path (and query) `location` names on this origin; `None` when it
    /// names another origin.
    fn resolve(&self, location: &[u8], current_path: &[u8]) -> Option<Vec<u8>> {
        let text = String::from_utf8_lossy(location);
        let lower = text.to_ascii_lowercase();
        let rest = if let Some(after) = lower
            .find("://")
            .filter(|&i| lower[..i].bytes().all(|b| b.is_ascii_alphabetic()))
        {
            if &lower[..after] != self.scheme {
                return None;
            }
            Some(&text[after + 3..])
        } else {
            text.strip_prefix("//")
        };
        if let Some(rest) = rest {
            let (authority, path) = match rest.find(['/', '?', '#']) {
                Some(at) => (&rest[..at], &rest[at..]),
                None => (rest, "/"),
            };
            if !self.same_authority(authority) {
                return None;
            }
            return Some(absolute_path(path).into_bytes());
        }
        Some(relative_to(current_path, &text).into_bytes())
    }

    fn same_authority(&self, authority: &str) -> bool {
        let authority = authority.to_ascii_lowercase();
        authority == self.authority
            || format!("{authority}:{}", self.default_port) == self.authority
    }
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

/// The hop's request from the request that was redirected (`original`, a
/// whole HTTP/1.x request): its request line names `path`, and unless
/// `keep_method` it is a GET without a body (Content-Length,
/// Transfer-Encoding and Content-Type dropped). Other headers are kept.
pub fn hop_request(original: &[u8], path: &[u8], keep_method: bool, out: &mut Vec<u8>) {
    out.clear();
    let head_end = find(original, b"\r\n\r\n").map_or(original.len(), |at| at + 4);
    let (head, body) = original.split_at(head_end);
    let line_end = find(head, b"\r\n").unwrap_or(head.len());
    let line = &head[..line_end];
    let mut words = line.splitn(3, |&b| b == b' ');
    let method = words.next().unwrap_or(b"GET");
    let _target = words.next();
    let version = words.next().unwrap_or(b"HTTP/1.1");
    // A HEAD stays a HEAD (it has no body to drop).
    let keep_method = keep_method || method == b"HEAD";
    out.extend_from_slice(if keep_method { method } else { b"GET" });
    out.push(b' ');
    out.extend_from_slice(path);
    out.push(b' ');
    out.extend_from_slice(version);
    let mut at = line_end;
    while at + 2 <= head.len() {
        let end = find(&head[at + 2..], b"\r\n").map_or(head.len(), |i| at + 2 + i);
        let field = &head[at + 2..end];
        if field.is_empty() {
            break;
        }
        let dropped = !keep_method
            && [
                &b"content-length:"[..],
                b"transfer-encoding:",
                b"content-type:",
            ]
            .iter()
            .any(|name| {
                field.len() >= name.len() && field[..name.len()].eq_ignore_ascii_case(name)
            });
        if !dropped {
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(field);
        }
        at = end;
    }
    out.extend_from_slice(b"\r\n\r\n");
    if keep_method {
        out.extend_from_slice(body);
    }
}

/// The request target of a whole request's request line.
pub fn request_path(request: &[u8]) -> &[u8] {
    let line_end = find(request, b"\r\n").unwrap_or(request.len());
    request[..line_end]
        .split(|&b| b == b' ')
        .nth(1)
        .unwrap_or(b"/")
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(max_hops: u32) -> RedirectRule {
        RedirectRule {
            max_hops,
            scheme: "http",
            authority: "127.0.0.1:3000".into(),
            default_port: 80,
        }
    }

    fn hop(location: &str, current: &str) -> Follow {
        rule(5).follow(302, Some(location.as_bytes()), current.as_bytes(), 0)
    }

    fn path(p: &str) -> Follow {
        Follow::Hop {
            path: p.as_bytes().to_vec(),
            keep_method: false,
        }
    }

    #[test]
    fn locations_resolve_like_a_browser() {
        assert_eq!(hop("/b", "/a/x"), path("/b"));
        assert_eq!(hop("y", "/a/x?q=1"), path("/a/y"));
        assert_eq!(hop("../y", "/a/b/x"), path("/a/y"));
        assert_eq!(hop("?p=2", "/a/x?q=1"), path("/a/x?p=2"));
        assert_eq!(hop("http://127.0.0.1:3000/c#frag", "/"), path("/c"));
        assert_eq!(hop("HTTP://127.0.0.1:3000", "/"), path("/"));
        assert_eq!(hop("//127.0.0.1:3000/d?e", "/"), path("/d?e"));
        assert_eq!(hop("./", "/a/x"), path("/a/"));
    }

    #[test]
    fn other_origins_and_the_limit() {
        assert_eq!(hop("http://example.com/", "/"), Follow::Offsite);
        assert_eq!(hop("https://127.0.0.1:3000/", "/"), Follow::Offsite);
        assert_eq!(hop("http://127.0.0.1:3001/", "/"), Follow::Offsite);
        assert_eq!(rule(2).follow(301, Some(b"/x"), b"/", 2), Follow::Limit);
        assert_eq!(rule(0).follow(301, Some(b"/x"), b"/", 0), Follow::No);
        assert_eq!(rule(2).follow(200, Some(b"/x"), b"/", 0), Follow::No);
        assert_eq!(rule(2).follow(302, None, b"/", 0), Follow::No);
        let default_port = RedirectRule {
            authority: "example.test:80".into(),
            ..rule(1)
        };
        assert_eq!(
            default_port.follow(307, Some(b"http://example.test/p"), b"/", 0),
            Follow::Hop {
                path: b"/p".to_vec(),
                keep_method: true
            }
        );
    }

    #[test]
    fn a_post_becomes_a_get_unless_307_or_308() {
        let post = b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-A: 1\r\n\r\n{}";
        let mut out = Vec::new();
        hop_request(post, b"/home", false, &mut out);
        assert_eq!(out, b"GET /home HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n");
        hop_request(post, b"/again", true, &mut out);
        assert_eq!(
            out,
            b"POST /again HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-A: 1\r\n\r\n{}"
        );
        assert_eq!(request_path(post), b"/login");
    }
}
