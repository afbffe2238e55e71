//! A minimal blocking HTTP/1.1 POST on std::net for `--remote-write`: one
//! small request every second to one URL the user gave, on its own thread,
//! so an async client or a connection pool would be weight for nothing.
//! https through rustls (already the engine's TLS), trusting the system's
//! certificates (rustls-native-certs: `SSL_CERT_FILE` and `SSL_CERT_DIR`
//! are honoured). Every step is bounded by a deadline, and a failure comes
//! back as a short stable kind ("connection refused", "timed out", "HTTP
//! 503", "invalid peer certificate: UnknownIssuer") to be counted.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The most of a response read (the status line and an error message).
const MAX_RESPONSE: usize = 64 * 1024;

/// Where to post: resolved from the URL when the run starts.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `host[:port]` for the Host header.
    pub authority: String,
    /// The path and query.
    pub target: String,
    pub host: String,
    pub port: u16,
    /// https: TLS to `host`, verified against the system's roots.
    pub tls: bool,
}

/// Why a post failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostError {
    /// Nothing sent or no complete answer: try again later.
    Transport(String),
    /// An HTTP status outside 2xx, with the first line of the body.
    Status { code: u16, message: String },
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

/// Posts `body` with `headers` (`Name: value` lines), all by `deadline`.
pub fn post(
    endpoint: &Endpoint,
    headers: &[(&str, &str)],
    body: &[u8],
    deadline: Instant,
) -> Result<(), PostError> {
    let remaining = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
            .ok_or_else(|| PostError::Transport("timed out".into()))
    };
    let address = resolve(endpoint)?;
    let tcp = TcpStream::connect_timeout(&address, remaining()?).map_err(transport)?;
    tcp.set_write_timeout(Some(remaining()?))
        .map_err(transport)?;
    let mut request = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: stampede/{}\r\nContent-Length: {}\r\nConnection: close\r\n",
        endpoint.target,
        endpoint.authority,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let response = if endpoint.tls {
        let name = rustls::pki_types::ServerName::try_from(endpoint.host.clone())
            .map_err(|_| PostError::Transport(format!("not a TLS name: {}", endpoint.host)))?;
        let connection = rustls::ClientConnection::new(tls_config()?, name)
            .map_err(|error| PostError::Transport(error.to_string()))?;
        let mut stream = rustls::StreamOwned::new(connection, tcp);
        exchange(&mut stream, &request, body, &remaining, |stream, left| {
            stream.sock.set_read_timeout(Some(left))
        })?
    } else {
        let mut stream = tcp;
        exchange(&mut stream, &request, body, &remaining, |stream, left| {
            stream.set_read_timeout(Some(left))
        })?
    };
    let text = String::from_utf8_lossy(&response);
    let code = text
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| PostError::Transport("no HTTP response".into()))?;
    if (200..300).contains(&code) {
        return Ok(());
    }
    let message = text
        .split_once("\r\n\r\n")
        .and_then(|(_, body)| body.lines().find(|line| !line.trim().is_empty()))
        .unwrap_or("")
        .trim()
        .chars()
        .take(200)
        .collect();
    Err(PostError::Status { code, message })
}

/// Writes the request and reads the response (until complete, closed, or
/// the deadline), on plain TCP or TLS alike.
fn exchange<S: Read + Write>(
    stream: &mut S,
    request: &str,
    body: &[u8],
    remaining: &dyn Fn() -> Result<Duration, PostError>,
    set_read_timeout: impl Fn(&mut S, Duration) -> std::io::Result<()>,
) -> Result<Vec<u8>, PostError> {
    stream.write_all(request.as_bytes()).map_err(transport)?;
    stream.write_all(body).map_err(transport)?;
    stream.flush().map_err(transport)?;
    let mut response = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        set_read_timeout(stream, remaining()?).map_err(transport)?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            // A TLS peer that closes without close_notify after answering
            // (common with Connection: close) has still answered.
            Err(error)
                if error.kind() == std::io::ErrorKind::UnexpectedEof && !response.is_empty() =>
            {
                break
            }
            Err(error) => return Err(transport(error)),
        }
        if response.len() >= MAX_RESPONSE || complete(&response) {
            break;
        }
    }
    Ok(response)
}

/// The client configuration for https, made once: ring's provider, the
/// default protocol versions, the system's trusted certificates.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, PostError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(
                    "no trusted certificates found (set SSL_CERT_FILE to a PEM bundle)".into(),
                );
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map(|builder| {
                    Arc::new(builder.with_root_certificates(roots).with_no_client_auth())
                })
                .map_err(|error| error.to_string())
        })
        .clone()
        .map_err(PostError::Transport)
}

/// True once the head and a Content-Length body (when given) are in, or
/// the head of a response that has no body (204, 304).
fn complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]);
    let bodiless = head
        .split_whitespace()
        .nth(1)
        .is_some_and(|code| code == "204" || code == "304");
    if bodiless {
        return true;
    }
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    length.is_some_and(|length| response.len() >= end + 4 + length)
}

fn resolve(endpoint: &Endpoint) -> Result<SocketAddr, PostError> {
    (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .ok_or_else(|| PostError::Transport(format!("cannot resolve {}", endpoint.host)))
}

fn transport(error: std::io::Error) -> PostError {
    use std::io::ErrorKind;
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
