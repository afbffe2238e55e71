//! The URL under test, split once into what a connection and a request line need.

use crate::PlanError;

/// Transport security of the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

/// Where requests go: resolved by the engine (DNS is I/O, so not here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL exactly as given, for reports.
    pub url: String,
    pub scheme: Scheme,
    /// Host name or IP literal, without IPv6 brackets.
    pub host: String,
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
}
