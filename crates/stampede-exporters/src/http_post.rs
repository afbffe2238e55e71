//! The POST behind `--remote-write`: one small request every second to one
//! URL the user gave, on its own thread, by ureq (a maintained blocking
//! client: no async runtime for one request a second). https through
//! rustls with ring (already the engine's TLS), trusting the system's
//! certificates (rustls-native-certs: `SSL_CERT_FILE` and `SSL_CERT_DIR` are
//! honoured). Each post is bounded by a deadline, and a failure comes back
//! as a short stable kind ("connection refused", "timed out", "HTTP 503",
//! "invalid peer certificate: UnknownIssuer") to be counted.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The most of a response read (an error message).
const MAX_RESPONSE: u64 = 64 * 1024;

/// Where to post: resolved from the URL when the run starts.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `host[:port]` for the Host header.
    pub authority: String,
    /// The path and query.
    pub target: String,
    /// The host to resolve and, for https, to verify (an IPv6 address
    /// without its brackets).
    pub host: String,
    /// The URL's port, or the scheme's (80, 443).
    pub port: u16,
    /// https: TLS to `host`, verified against the system's roots.
    pub tls: bool,
}

impl Endpoint {
    /// The URL posted to.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.target)
    }
}

/// Why a post failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostError {
    /// Nothing sent or no complete answer: try again later.
    Transport(String),
    /// An HTTP status outside 2xx, with the first line of the body.
    Status {
        /// The status code.
        code: u16,
        /// The first non-empty line of the body, at most 200 characters.
        message: String,
    },
}

impl PostError {
    /// The kind failures are counted under.
    pub fn kind(&self) -> String {
        match self {
            PostError::Transport(kind) => kind.clone(),
            PostError::Status { code, .. } => format!("HTTP {code}"),
        }
    }

    /// Worth sending again: transport failures, 5xx and 429 (the
    /// remote-write spec's rule; other 4xx reject the data itself).
    pub fn retryable(&self) -> bool {
        match self {
            PostError::Transport(_) => true,
            PostError::Status { code, .. } => *code >= 500 || *code == 429,
        }
    }
}

/// Posts `body` with `headers` (`Name: value` pairs), all by `deadline`.
pub fn post(
    endpoint: &Endpoint,
    headers: &[(&str, &str)],
    body: &[u8],
    deadline: Instant,
) -> Result<(), PostError> {
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|left| !left.is_zero())
        .ok_or_else(|| PostError::Transport("timed out".into()))?;
    let mut request = agent(endpoint.tls)?.post(endpoint.url());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request
        .config()
        .timeout_global(Some(left))
        .build()
        .send(body)
        .map_err(failure)?;
    let code = response.status().as_u16();
    if (200..300).contains(&code) {
        return Ok(());
    }
    // The receiver's reason is the first line of its answer; a body that
    // cannot be read still leaves the status.
    let text = response
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .read_to_string()
        .unwrap_or_default();
    let message = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim()
        .chars()
        .take(200)
        .collect();
    Err(PostError::Status { code, message })
}

/// The client, made once per scheme: no redirects (a receiver that moved
/// is a failure to see), statuses read rather than raised, and for https
/// ring's provider with the system's trusted certificates.
fn agent(tls: bool) -> Result<&'static ureq::Agent, PostError> {
    static PLAIN: OnceLock<ureq::Agent> = OnceLock::new();
    static TLS: OnceLock<Result<ureq::Agent, String>> = OnceLock::new();
    let config = || {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("stampede/", env!("CARGO_PKG_VERSION")))
    };
    if !tls {
        return Ok(PLAIN.get_or_init(|| config().build().into()));
    }
    TLS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        if found.certs.is_empty() {
            return Err("no trusted certificates found (set SSL_CERT_FILE to a PEM bundle)".into());
        }
        let roots: Vec<_> = found
            .certs
            .iter()
            .map(|der| ureq::tls::Certificate::from_der(der.as_ref()).to_owned())
            .collect();
        let tls = ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::Rustls)
            .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .root_certs(ureq::tls::RootCerts::new_with_certs(&roots))
            .build();
        Ok(config().tls_config(tls).build().into())
    })
    .as_ref()
    .map_err(|why| PostError::Transport(why.clone()))
}

/// A failed exchange as the short stable kind it is counted under.
fn failure(error: ureq::Error) -> PostError {
    match error {
        ureq::Error::Io(error) => transport(error),
        ureq::Error::Timeout(_) => PostError::Transport("timed out".into()),
        ureq::Error::HostNotFound => PostError::Transport("cannot resolve the host".into()),
        ureq::Error::ConnectionFailed => PostError::Transport("connection failed".into()),
        ureq::Error::Rustls(error) => PostError::Transport(error.to_string()),
        other => PostError::Transport(other.to_string()),
    }
}

fn transport(error: std::io::Error) -> PostError {
    use std::io::ErrorKind;
    // A handshake that failed comes wrapped: say what TLS said.
    if let Some(tls) = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        return PostError::Transport(tls.to_string());
    }
    let kind = match error.kind() {
        ErrorKind::ConnectionRefused => "connection refused".to_string(),
        ErrorKind::TimedOut | ErrorKind::WouldBlock => "timed out".to_string(),
        ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::ConnectionAborted => {
            "connection reset".to_string()
        }
        ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => {
            "host unreachable".to_string()
        }
        _ => error.to_string(),
    };
    PostError::Transport(kind)
}

/// How long a retry waits after `failures` failures in a row: 0.5 s
/// doubling, at most 8 s.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_millis(500)
        .saturating_mul(1 << failures.saturating_sub(1).min(4))
        .min(Duration::from_secs(8))
}
