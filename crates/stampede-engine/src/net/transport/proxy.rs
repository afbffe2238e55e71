//! The CONNECT tunnel through an HTTP proxy for `https://` targets: one
//! request, a 2xx status line, then the stream belongs to the TLS handshake.

use super::Stream;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Longest proxy response head read before giving up.
const MAX_PROXY_HEAD: usize = 16 * 1024;

/// Asks the proxy for a tunnel to `authority` (host:port); the error is the reason.
pub(crate) async fn open_tunnel(stream: &mut Stream, authority: &str) -> Result<(), String> {
    let request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("proxy write: {e}"))?;
    // Byte by byte up to the blank line: the proxy's head is tiny, and no
    // byte of the tunnelled TLS stream may be read into a buffer here.
    let mut head = Vec::with_capacity(256);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(0) => return Err("the proxy closed the connection during CONNECT".into()),
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(format!("proxy read: {e}")),
        }
        if head.len() > MAX_PROXY_HEAD {
            return Err("the proxy's CONNECT response head is too large".into());
        }
    }
    let status_line = String::from_utf8_lossy(&head);
    let status = status_line.split_whitespace().nth(1).unwrap_or("");
    if status.starts_with('2') {
        Ok(())
    } else {
        Err(format!(
            "the proxy refused CONNECT {authority}: {}",
            status_line.lines().next().unwrap_or("").trim()
        ))
    }
}
