//! Request conveniences that become headers or the method: basic auth,
//! cookies, HEAD, User-Agent (ab's -A, -C, -i and curl's habits).

use base64::Engine as _;
use stampede_plan::{parse_header, Header};

#[derive(Debug, Clone, Default, clap::Args)]
pub struct RequestExtras {
    /// Basic authentication, USER:PASS (sends an Authorization header)
    #[arg(short = 'a', long, value_name = "USER:PASS")]
    pub basic_auth: Option<String>,
    /// A cookie NAME=VALUE (repeatable; all go in one Cookie header)
    #[arg(long = "cookie", value_name = "NAME=VALUE")]
    pub cookies: Vec<String>,
    /// Send HEAD requests (ab -i)
    #[arg(long)]
    pub head: bool,
    /// The User-Agent header
    #[arg(long, value_name = "TEXT")]
    pub user_agent: Option<String>,
}

impl RequestExtras {
    /// The headers these options add (a header given with -H of the same name wins).
    pub fn headers(&self, given: &[Header]) -> anyhow::Result<Vec<Header>> {
        let has = |name: &str| given.iter().any(|h| h.name.eq_ignore_ascii_case(name));
        let mut headers = Vec::new();
        if let Some(credentials) = &self.basic_auth {
            if !credentials.contains(':') {
                anyhow::bail!("--basic-auth '{credentials}': expected USER:PASS");
            }
            if !has("Authorization") {
                let encoded = base64::engine::general_purpose::STANDARD.encode(credentials);
                headers.push(parse_header(&format!("Authorization: Basic {encoded}"))?);
            }
        }
        if !self.cookies.is_empty() {
            for cookie in &self.cookies {
                if !cookie.contains('=') || cookie.contains(';') {
                    anyhow::bail!("--cookie '{cookie}': expected NAME=VALUE");
                }
            }
            headers.push(parse_header(&format!(
                "Cookie: {}",
                self.cookies.join("; ")
            ))?);
        }
        if let Some(agent) = &self.user_agent {
            if !has("User-Agent") {
                headers.push(parse_header(&format!("User-Agent: {agent}"))?);
            }
        }
        Ok(headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_auth_cookie_and_agent_headers() {
        let extras = RequestExtras {
            basic_auth: Some("user:pass".into()),
            cookies: vec!["sid=1".into(), "lang=zh".into()],
            head: false,
            user_agent: Some("ab/2.3".into()),
        };
        let headers = extras.headers(&[]).unwrap();
        let text: Vec<String> = headers
            .iter()
            .map(|h| format!("{}: {}", h.name, h.value))
            .collect();
        assert_eq!(
            text,
            vec![
                "Authorization: Basic dXNlcjpwYXNz",
                "Cookie: sid=1; lang=zh",
                "User-Agent: ab/2.3"
            ]
        );
        let bad = RequestExtras {
            cookies: vec!["nope".into()],
            ..RequestExtras::default()
        };
        assert!(bad.headers(&[]).is_err());
    }
}
