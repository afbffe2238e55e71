//! A minimal blocking HTTP/1.1 POST on std::net for `--remote-write`: one
//! small request every second to one URL the user gave, on its own thread,
//! so an async client or a connection pool would be weight for nothing.
//! Plain http only (https is refused when the URL is read). Every step is
//! bounded by a deadline, and a failure comes back as a short stable kind
//! ("connection refused", "timed out", "HTTP 503") to be counted.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
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
    let mut stream = TcpStream::connect_timeout(&address, remaining()?).map_err(transport)?;
    stream
        .set_write_timeout(Some(remaining()?))
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
    stream.write_all(request.as_bytes()).map_err(transport)?;
    stream.write_all(body).map_err(transport)?;
    let mut response = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        stream
            .set_read_timeout(Some(remaining()?))
            .map_err(transport)?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            Err(error) => return Err(transport(error)),
        }
        if response.len() >= MAX_RESPONSE || complete(&response) {
            break;
        }
    }
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

/// True once the head and a Content-Length body (when given) are in.
fn complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]);
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
