//! The small blocking HTTP/1.1 pieces shared by stampede's own servers
//! (`run --metrics`, `run --web`, `serve --metrics`): binding an address
//! with one clear line for each way it fails, reading a request's head,
//! and writing a whole response. They answer a browser or a scraper a few
//! times a second, never the load, so plain threads and std I/O do.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Time a client has to send its request head and to read each write.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a request head read (a browser's is a few hundred bytes).
const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// Binds `flag`'s address `text` (e.g. `--web 127.0.0.1:8089`), or says in
/// one line why not: not an address, in use, a privileged port, not this
/// machine's. `example` is a sensible address for the flag.
pub fn bind(flag: &str, text: &str, example: &str) -> anyhow::Result<TcpListener> {
    let address = text
        .to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .ok_or_else(|| {
            anyhow::anyhow!("{flag} {text}: not an address (HOST:PORT, e.g. {example})")
        })?;
    TcpListener::bind(address).map_err(|error| {
        let why = match error.kind() {
            std::io::ErrorKind::AddrInUse => "address already in use".to_string(),
            std::io::ErrorKind::PermissionDenied => {
                "permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)".to_string()
            }
            std::io::ErrorKind::AddrNotAvailable => "not an address of this machine".to_string(),
            _ => error.to_string(),
        };
        anyhow::anyhow!("{flag} {text}: {why}")
    })
}

/// Refuses two of stampede's own servers given one address (`--metrics`
/// and `--web` on the same port): the second would fail to bind on an
/// address stampede itself holds. `0.0.0.0` (or `::`) overlaps every
/// address of its port; port 0 picks a free port for each.
pub fn refuse_one_address_for_two(
    (first_flag, first): (&str, Option<&str>),
    (second_flag, second): (&str, Option<&str>),
) -> anyhow::Result<()> {
    let resolve = |text: Option<&str>| {
        text.and_then(|t| t.to_socket_addrs().ok()?.next())
            .filter(|address| address.port() != 0)
    };
    if let (Some(a), Some(b)) = (resolve(first), resolve(second)) {
        let overlap = a.ip() == b.ip() || a.ip().is_unspecified() || b.ip().is_unspecified();
        if a.port() == b.port() && overlap {
            anyhow::bail!("{first_flag} and {second_flag} need different addresses");
        }
    }
    Ok(())
}

/// A request's method, path (without the query) and whole head.
pub struct Request {
    /// The method, as sent (`GET`, `POST`).
    pub method: String,
    /// The request target up to its `?`.
    pub path: String,
    /// The request line and headers as read (and any bytes that came with
    /// them in the same read).
    pub head: Vec<u8>,
}

impl Request {
    /// True when a header `name` (any case) has a value containing `part`.
    pub fn header_contains(&self, name: &str, part: &str) -> bool {
        String::from_utf8_lossy(&self.head).lines().any(|line| {
            line.split_once(':').is_some_and(|(key, value)| {
                key.trim().eq_ignore_ascii_case(name) && value.contains(part)
            })
        })
    }
}

/// Reads one request head from `stream` (with [`CLIENT_TIMEOUT`] set on it).
pub fn read_request(stream: &mut TcpStream) -> std::io::Result<Request> {
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_HEAD {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line).into_owned();
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("");
    let path = path.split('?').next().unwrap_or("").to_string();
    Ok(Request { method, path, head })
}

/// Writes a whole response and closes: `status` as "200 OK"; no body
/// after a HEAD request.
pub fn respond(
    stream: &mut TcpStream,
    request: &Request,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if request.method != "HEAD" {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_for_two_servers_is_refused() {
        let check = |a: &str, b: &str| {
            refuse_one_address_for_two(("--metrics", Some(a)), ("--web", Some(b))).is_ok()
        };
        assert!(!check("127.0.0.1:9464", "127.0.0.1:9464"));
        assert!(!check("0.0.0.0:9464", "127.0.0.1:9464"));
        assert!(check("127.0.0.1:9464", "127.0.0.1:8089"));
        assert!(check("127.0.0.1:0", "127.0.0.1:0"));
        assert!(
            refuse_one_address_for_two(("--metrics", None), ("--web", Some("127.0.0.1:1"))).is_ok()
        );
    }
}
