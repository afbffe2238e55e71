//! Connection lifecycle: slowloris header timeout, idle and body timeouts, the
//! connection cap, bind failure, and graceful shutdown that loses no access-log line.

use crate::common::*;

use std::io::Write;
use std::time::{Duration, Instant};

use stampede_target::{AccessLogDest, Server, TargetError};

#[test]
fn slowloris_gets_a_408_at_the_header_timeout() {
    let mut cfg = small();
    cfg.header_timeout = Duration::from_millis(300);
    let h = start(cfg);
    let mut r = Reader::new(connect(h.local_addr()));
    let t = Instant::now();
    // Trickle a head one byte every 50 ms: each byte is progress, the head never ends.
    let mut closed_at = None;
    for b in b"GET / HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter() {
        if r.s.write_all(&[*b]).is_err() {
            closed_at = Some(t.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        if t.elapsed() > Duration::from_millis(1200) {
            break;
        }
    }
    let resp = r.read(false).expect("a 408 before the close");
    assert_eq!(resp.status, 408);
    let took = closed_at.unwrap_or(t.elapsed());
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert_eq!(h.stats().requests_by_status.get(&408), Some(&1));
    h.shutdown().unwrap();
}

#[test]
fn idle_and_body_timeouts() {
    let mut cfg = small();
    cfg.idle_timeout = Duration::from_millis(300);
    cfg.body_timeout = Duration::from_millis(300);
    let h = start(cfg);
    let mut r = Reader::new(connect(h.local_addr()));
    r.send(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(r.read(false).unwrap().status, 200);
    let t = Instant::now();
    assert!(r.closed(), "idle connection closes");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(3),
        "{took:?}"
    );

    let mut r = Reader::new(connect(h.local_addr()));
    r.send(b"POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
    assert_eq!(r.read(false).unwrap().status, 408);
    h.shutdown().unwrap();
}

/// Idleness counts from the last input: a connection whose first request
/// came a while after it opened still closes once idle. (The timer is re-armed
/// lazily, and each early wake used to restart the idle time, so such a
/// connection was never closed: under load a client's parked connection
/// stayed open.)
#[test]
fn an_idle_close_does_not_slide_after_a_late_first_request() {
    let mut cfg = small();
    cfg.idle_timeout = Duration::from_millis(200);
    let h = start(cfg);
    let mut r = Reader::new(connect(h.local_addr()));
    std::thread::sleep(Duration::from_millis(120));
    r.send(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(r.read(false).unwrap().status, 200);
    let t = Instant::now();
    assert!(r.closed(), "idle connection closes");
    let took = t.elapsed();
    assert!(took < Duration::from_secs(2), "closed after {took:?}");
    h.shutdown().unwrap();
}

#[test]
fn over_the_connection_cap_gets_a_polite_503() {
    let mut cfg = small();
    cfg.max_connections = 2;
    let h = start(cfg);
    let a = h.local_addr();
    let mut keep = Vec::new();
    for _ in 0..2 {
        let mut r = Reader::new(connect(a));
        r.send(b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(r.read(false).unwrap().status, 200);
        keep.push(r);
    }
    let mut third = Reader::new(connect(a));
    third.send(b"GET / HTTP/1.1\r\n\r\n");
    let resp = third.read(false).unwrap();
    assert_eq!(resp.status, 503);
    assert_eq!(resp.header("connection").as_deref(), Some("close"));
    let s = h.stats();
    assert_eq!((s.connections_accepted, s.connections_refused), (2, 1));
    drop(keep);
    // Once the others are gone, new connections are served again.
    let t = Instant::now();
    loop {
        let r = get(a, "GET / HTTP/1.1\r\n\r\n");
        if r.status == 200 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(3), "cap never released");
        std::thread::sleep(Duration::from_millis(20));
    }
    h.shutdown().unwrap();
}

#[test]
fn bind_failure_is_a_clear_error() {
    let h = start(small());
    let err = Server::start(h.local_addr(), small())
        .err()
        .expect("port in use");
    assert!(matches!(err, TargetError::Bind { .. }), "{err:?}");
    assert!(err.to_string().contains("cannot bind"), "{err}");
    h.shutdown().unwrap();
}

#[test]
fn graceful_shutdown_loses_no_log_line_and_finishes_in_flight() {
    let dir = std::env::temp_dir().join(format!("stampede-target-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("access.log");
    let _ = std::fs::remove_file(&log);
    let mut cfg = small();
    cfg.access_log = Some(AccessLogDest::File(log.clone()));
    let h = start(cfg);
    let a = h.local_addr();
    const N: usize = 300;
    let mut r = Reader::new(connect(a));
    for i in 0..N - 1 {
        r.send(format!("GET /bytes/{i} HTTP/1.1\r\n\r\n").as_bytes());
        assert_eq!(r.read(false).unwrap().body.len(), i);
    }
    // One request still in flight when shutdown starts: it must complete.
    let mut slow = Reader::new(connect(a));
    slow.send(b"GET /delay/300 HTTP/1.1\r\n\r\n");
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    let waiter = std::thread::spawn(move || {
        let resp = slow.read(false).expect("in-flight response");
        (resp, slow.closed())
    });
    let stats = h.shutdown().unwrap();
    let (resp, closed) = waiter.join().unwrap();
    assert_eq!(resp.status, 200);
    // Produced before shutdown began, so it may say keep-alive; the close follows it.
    assert!(closed);
    assert!(t.elapsed() < Duration::from_secs(3));
    assert_eq!(stats.requests_total, N as u64);
    assert!(r.closed(), "idle keep-alive connection closed at shutdown");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), N, "one line per response");
    // Each worker flushes its own buffer at shutdown, in either order: the
    // slow request's line may come first.
    let first = lines
        .iter()
        .find(|l| l.contains("/bytes/0 "))
        .expect("the first request's line");
    assert!(first.starts_with("127.0.0.1 - - ["), "{first}");
    assert!(
        first.ends_with("\"GET /bytes/0 HTTP/1.1\" 200 -"),
        "{first}"
    );
    assert!(lines
        .iter()
        .any(|l| l.contains("\"GET /delay/300 HTTP/1.1\" 200")));
    let _ = std::fs::remove_dir_all(&dir);
}
