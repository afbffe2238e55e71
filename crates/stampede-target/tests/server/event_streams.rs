//! `/sse/{n}/{ms}` and `/stream/{n}/{ms}` over raw TCP: each piece is its
//! own chunk, paced by `ms`; a stall, `Last-Event-ID`, `drop_every`, the
//! 204 when nothing is left, HTTP/1.0's length, HEAD and bad arguments.

use crate::common::*;

use std::time::{Duration, Instant};

/// Sends `request` and reads the head and each chunk with the time it came.
fn chunks_timed(addr: std::net::SocketAddr, request: &str) -> (Resp, Vec<(Vec<u8>, Duration)>) {
    let mut r = Reader::new(connect(addr));
    r.send(request.as_bytes());
    let t = Instant::now();
    let head = r.read_head().expect("a head");
    let mut chunks = Vec::new();
    while let Some(c) = r.next_chunk() {
        chunks.push((c, t.elapsed()));
    }
    // The connection stays open for the next request.
    r.send(b"GET /status/200 HTTP/1.1\r\n\r\n");
    assert_eq!(r.read(false).expect("a next response").status, 200);
    (head, chunks)
}

#[test]
fn sse_sends_n_events_one_every_ms() {
    let h = start(small());
    let (head, chunks) = chunks_timed(h.local_addr(), "GET /sse/5/40 HTTP/1.1\r\n\r\n");
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    assert_eq!(head.header("cache-control").as_deref(), Some("no-cache"));
    let texts: Vec<String> = chunks
        .iter()
        .map(|(c, _)| String::from_utf8_lossy(c).into_owned())
        .collect();
    let expected: Vec<String> = (0..5).map(|i| format!("id: {i}\ndata: {i}\n\n")).collect();
    assert_eq!(texts, expected);
    // The last event came about 4 × 40 ms after the first.
    let span = chunks[4].1 - chunks[0].1;
    assert!(span >= Duration::from_millis(155), "{span:?}");
    assert!(span < Duration::from_millis(600), "{span:?}");
    h.shutdown().unwrap();
}

#[test]
fn stream_sends_n_chunks_and_one_stall() {
    let h = start(small());
    let request = "GET /stream/4/10?stall_at=2&stall_ms=300 HTTP/1.1\r\n\r\n";
    let (head, chunks) = chunks_timed(h.local_addr(), request);
    assert_eq!(head.header("transfer-encoding").as_deref(), Some("chunked"));
    assert_eq!(chunks.len(), 4);
    assert_eq!(chunks[3].0, b"chunk 3\n");
    let stall = chunks[2].1 - chunks[1].1;
    assert!(stall >= Duration::from_millis(295), "{stall:?}");
    assert!(chunks[1].1 - chunks[0].1 < Duration::from_millis(250));
    h.shutdown().unwrap();
}

#[test]
fn sse_resumes_after_last_event_id_and_drops_every_k() {
    let h = start(small());
    let a = h.local_addr();
    let request = "GET /sse/5/0?drop_every=2 HTTP/1.1\r\nLast-Event-ID: 1\r\n\r\n";
    let (_, chunks) = chunks_timed(a, request);
    let ids: Vec<&[u8]> = chunks.iter().map(|(c, _)| &c[..5]).collect();
    assert_eq!(ids, [b"id: 2", b"id: 3"]);
    let done = get(a, "GET /sse/5/0 HTTP/1.1\r\nlast-event-id: 4\r\n\r\n");
    assert_eq!(done.status, 204);
    h.shutdown().unwrap();
}

#[test]
fn http10_gets_a_length_and_head_gets_none() {
    let h = start(small());
    let a = h.local_addr();
    let r = get(a, "GET /sse/3/1 HTTP/1.0\r\n\r\n");
    assert_eq!(r.header("content-length"), Some(r.body.len().to_string()));
    assert_eq!(
        r.text(),
        "id: 0\ndata: 0\n\nid: 1\ndata: 1\n\nid: 2\ndata: 2\n\n"
    );
    let head = get(a, "HEAD /stream/3/1 HTTP/1.1\r\n\r\n");
    assert_eq!((head.status, head.body.len()), (200, 0));
    for bad in [
        "/sse/3",
        "/sse/x/1",
        "/sse/3/600000",
        "/sse/3/1?stall_ms=999999",
        "/sse/3/1?what=1",
        "/stream/3000000/1",
    ] {
        assert_eq!(
            get(a, &format!("GET {bad} HTTP/1.1\r\n\r\n")).status,
            400,
            "{bad}"
        );
    }
    assert_eq!(
        get(a, "POST /sse/1/1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n").status,
        405
    );
    h.shutdown().unwrap();
}
