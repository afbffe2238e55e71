//! The URL under test, split once into what a connection and a request line need.

use crate::PlanError;

/// Transport security of the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Plain `http://`.
    Http,
    /// `https://`: TLS.
    Https,
}

/// Where requests go: resolved by the engine (DNS is I/O, so not here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL exactly as given, for reports.
    pub url: String,
    /// http or https.
    pub scheme: Scheme,
    /// Host name or IP literal, without IPv6 brackets.
    pub host: String,
    /// The port, the scheme's default (80, 443) when the URL gives none.
    pub port: u16,
    /// Request target in origin form: path plus `?query`, never empty.
    pub path_and_query: String,
    /// The Host header value: host, bracketed for IPv6, with the port unless default.
    pub authority: String,
}

impl Target {
    /// Parses an absolute `http://` URL. A URL with no scheme (`127.0.0.1:3000/x`)
    /// is read as `http://`, as curl and wrk users expect.
    pub fn parse(text: &str) -> Result<Target, PlanError> {
        let with_scheme = if text.contains("://") {
            text.to_string()
        } else {
            format!("http://{text}")
        };
        // Checked on the text, before url::Url::parse: the WHATWG parser
        // skips the extra slashes of `http:///index.html` (and so of
        // `/index.html` with `http://` added) and reads `index.html` as the
        // host, which would then be looked up; wrk and ab say "invalid URL".
        if let Some(reason) = missing_host(text, &with_scheme) {
            return Err(PlanError::Url {
                url: text.to_string(),
                reason: reason.into(),
            });
        }
        let url = url::Url::parse(&with_scheme).map_err(|e| PlanError::Url {
            url: text.to_string(),
            reason: e.to_string(),
        })?;
        let scheme = match url.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => return Err(PlanError::Scheme(other.to_string())),
        };
        let host = match url.host() {
            Some(url::Host::Ipv6(addr)) => addr.to_string(),
            Some(host) => host.to_string(),
            None => {
                return Err(PlanError::Url {
                    url: text.to_string(),
                    reason: "no host".into(),
                })
            }
        };
        let port = url
            .port_or_known_default()
            .unwrap_or(if scheme == Scheme::Https { 443 } else { 80 });
        // Port 0 means "any port" to bind(); nothing listens on it, and a
        // connect to it fails on every attempt.
        if port == 0 {
            return Err(PlanError::Url {
                url: text.to_string(),
                reason: "port 0 is not a port a server can listen on".into(),
            });
        }
        let mut path_and_query = url.path().to_string();
        if let Some(query) = url.query() {
            path_and_query.push('?');
            path_and_query.push_str(query);
        }
        let bracketed = match url.host() {
            Some(url::Host::Ipv6(_)) => format!("[{host}]"),
            _ => host.clone(),
        };
        let authority = match url.port() {
            Some(explicit) => format!("{bracketed}:{explicit}"),
            None => bracketed,
        };
        Ok(Target {
            url: text.to_string(),
            scheme,
            host,
            port,
            path_and_query,
            authority,
        })
    }
}

/// Why the URL names no host, if it does not: `text` as given and
/// `with_scheme`, the same with `http://` added when it had no scheme.
/// Nothing between `scheme://` and the path (`http:///index.html`,
/// `/index.html`), or an http scheme without `//` (`http:/index.html`,
/// which would otherwise be read as the host `http`).
fn missing_host(text: &str, with_scheme: &str) -> Option<&'static str> {
    // ws: and wss: too: `stampede run` upgrades their http(s) URLs.
    let has_http_scheme = ["http:", "https:", "ws:", "wss:"].iter().any(|scheme| {
        text.get(..scheme.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(scheme))
    });
    if has_http_scheme && !text.contains("://") {
        return Some("no host (expected // after the scheme)");
    }
    let (_, rest) = with_scheme.split_once("://")?;
    // The authority ends where the path, query or fragment starts (a
    // backslash is a slash in http URLs); user info and port are not host.
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_and_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_and_port.starts_with('[') {
        host_and_port
    } else {
        host_and_port.split(':').next().unwrap_or_default()
    };
    host.is_empty().then_some("no host")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_an_http_url() {
        let target = Target::parse("http://127.0.0.1:3000/index.html?a=1").unwrap();
        assert_eq!(target.host, "127.0.0.1");
        assert_eq!(target.port, 3000);
        assert_eq!(target.path_and_query, "/index.html?a=1");
        assert_eq!(target.authority, "127.0.0.1:3000");
    }

    #[test]
    fn defaults_path_port_and_scheme() {
        let target = Target::parse("localhost").unwrap();
        assert_eq!((target.port, target.path_and_query.as_str()), (80, "/"));
        assert_eq!(target.authority, "localhost");
    }

    #[test]
    fn brackets_ipv6_in_the_host_header() {
        let target = Target::parse("http://[::1]:8080/").unwrap();
        assert_eq!(target.host, "::1");
        assert_eq!(target.authority, "[::1]:8080");
    }

    #[test]
    fn rejects_bad_urls() {
        assert_eq!(Target::parse("https://x/").unwrap().port, 443);
        assert!(matches!(
            Target::parse("ftp://x/"),
            Err(PlanError::Scheme(_))
        ));
        assert!(matches!(
            Target::parse("http://"),
            Err(PlanError::Url { .. })
        ));
        assert!(Target::parse("http://a b/").is_err());
        assert!(matches!(
            Target::parse("http://127.0.0.1:0/"),
            Err(PlanError::Url { .. })
        ));
        assert!(Target::parse("127.0.0.1:0").is_err());
    }

    /// wrk's script_parse_url (src/script.c) wants a schema and a host; ab's
    /// parse_url (support/ab.c) says "invalid URL" for a URL without one.
    /// The WHATWG parser alone reads `index.html` as the host of these.
    #[test]
    fn a_url_without_a_host_is_invalid() {
        for text in [
            "http:///index.html",
            "/index.html",
            "https:///",
            "http:/index.html",
            "HTTP:index.html",
            "http://:8080/x",
            "http://user@/x",
            "http://?q",
            "http://\\\\index.html",
            "ws:/127.0.0.1:1/ws/echo",
            "WSS:/127.0.0.1:1/",
        ] {
            match Target::parse(text) {
                Err(PlanError::Url { url, reason }) => {
                    assert_eq!(url, text);
                    assert!(reason.starts_with("no host"), "{text}: {reason}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        for (text, host) in [
            ("localhost:8080/x", "localhost"),
            ("http://u:p@h:1/x", "h"),
            ("http://[::1]/", "::1"),
            ("web/index.html", "web"),
            ("httpbin.org/get", "httpbin.org"),
        ] {
            assert_eq!(Target::parse(text).unwrap().host, host, "{text}");
        }
    }
}
