//! Every route of the target over raw TCP (curl's view: tests/protocols/target_curl.rs at the root): built-in pages,
//! /bytes, /chunked, /delay, /cpu, /block, /status, /echo, /stats, keep-alive, pipelining,
//! HTTP/1.0, HEAD, chunked request bodies, Expect: 100-continue, the route prefix.

use crate::common::*;

use std::time::{Duration, Instant};

use stampede_target::Config;

#[test]
fn built_in_pages_have_their_sizes() {
    let h = start(small());
    let a = h.local_addr();
    for (path, len) in [("/", 515), ("/index.html", 515), ("/1k.html", 1024)] {
        let r = get(a, &format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.body.len(), len, "{path}");
        assert_eq!(r.header("content-type").as_deref(), Some("text/html"));
        assert!(r.header("date").is_some_and(|d| d.ends_with("GMT")));
        let head = get(a, &format!("HEAD {path} HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert_eq!(head.header("content-length"), Some(len.to_string()));
        assert!(head.body.is_empty());
    }
    assert_eq!(get(a, "GET /nope HTTP/1.1\r\n\r\n").status, 404);
    h.shutdown().unwrap();
}

#[test]
fn test_routes() {
    let h = start(small());
    let a = h.local_addr();
    let r = get(a, "GET /bytes/1000 HTTP/1.1\r\n\r\n");
    assert_eq!((r.status, r.body.len()), (200, 1000));
    let big = get(a, "GET /bytes/300000 HTTP/1.1\r\n\r\n");
    assert_eq!(big.body.len(), 300_000);
    assert_eq!(&big.body[..1000], &r.body[..]);
    let c = get(a, "GET /chunked/300000 HTTP/1.1\r\n\r\n");
    assert_eq!(c.header("transfer-encoding").as_deref(), Some("chunked"));
    assert_eq!(c.body, big.body);
    assert_eq!(get(a, "GET /chunked/0 HTTP/1.1\r\n\r\n").body.len(), 0);
    let t = Instant::now();
    assert_eq!(get(a, "GET /delay/200 HTTP/1.1\r\n\r\n").status, 200);
    assert!(t.elapsed() >= Duration::from_millis(200));
    let c1 = get(a, "GET /cpu/100000 HTTP/1.1\r\n\r\n");
    let c2 = get(a, "GET /cpu/100000 HTTP/1.1\r\n\r\n");
    assert_eq!(c1.body, c2.body);
    assert_eq!(c1.body.len(), 17);
    for code in [200u16, 201, 204, 302, 404, 418, 500, 503, 599] {
        let r = get(a, &format!("GET /status/{code} HTTP/1.1\r\n\r\n"));
        assert_eq!(r.status, code);
    }
    // Caps and nonsense: 400, never a huge allocation or a long sleep.
    for bad in [
        "/bytes/99999999999",
        "/delay/600000",
        "/block/10001",
        "/cpu/99999999999",
        "/status/99",
        "/status/600",
        "/bytes/abc",
        "/bytes/-1",
    ] {
        let r = get(a, &format!("GET {bad} HTTP/1.1\r\n\r\n"));
        assert_eq!(r.status, 400, "{bad}");
    }
    // A known method a route does not allow: 405 with Allow.
    let r = get(a, "DELETE /bytes/10 HTTP/1.1\r\n\r\n");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow").as_deref(), Some("GET, HEAD"));
    h.shutdown().unwrap();
}

/// `/block` holds its worker's thread, unlike `/delay` (a timer): with one
/// worker, a request behind a blocked one waits for it.
#[test]
fn block_holds_the_worker_and_delay_does_not() {
    let h = start(Config {
        threads: 1,
        ..Config::default()
    });
    let a = h.local_addr();
    let behind = |route: &'static str| {
        let held = std::thread::spawn(move || get(a, &format!("GET {route} HTTP/1.1\r\n\r\n")));
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        assert_eq!(get(a, "GET / HTTP/1.1\r\n\r\n").status, 200);
        let waited = t.elapsed();
        assert_eq!(held.join().unwrap().status, 200, "{route}");
        waited
    };
    let blocked = behind("/block/400");
    assert!(blocked >= Duration::from_millis(200), "{blocked:?}");
    let delayed = behind("/delay/400");
    assert!(delayed < Duration::from_millis(200), "{delayed:?}");
    h.shutdown().unwrap();
}

#[test]
fn echo_returns_method_headers_and_body() {
    let h = start(small());
    let a = h.local_addr();
    let r = get(
        a,
        "POST /echo?q=1 HTTP/1.1\r\nHost: x\r\nX-Test: yes\r\nContent-Length: 5\r\n\r\nhello",
    );
    assert_eq!(r.status, 200);
    let t = r.text();
    assert!(t.starts_with("POST /echo?q=1 HTTP/1.1\r\n"), "{t}");
    assert!(t.contains("X-Test: yes\r\n"));
    assert!(t.ends_with("\r\n\r\nhello"));
    // Chunked request body, with an extension and a trailer.
    let r = get(
        a,
        "PUT /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n",
    );
    assert!(r.text().ends_with("\r\n\r\nabcde"), "{}", r.text());
    h.shutdown().unwrap();
}

#[test]
fn expect_100_continue() {
    let h = start(small());
    let mut r = Reader::new(connect(h.local_addr()));
    r.send(b"POST /echo HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
    let cont = r.read(false).unwrap();
    assert_eq!(cont.status, 100);
    r.send(b"body");
    let resp = r.read(false).unwrap();
    assert_eq!(resp.status, 200);
    assert!(resp.text().ends_with("body"));
    h.shutdown().unwrap();
}

#[test]
fn keep_alive_reuses_one_connection() {
    let h = start(small());
    let mut r = Reader::new(connect(h.local_addr()));
    for i in 0..50 {
        let path = if i % 2 == 0 { "/" } else { "/bytes/10" };
        r.send(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
        assert_eq!(r.read(false).unwrap().status, 200);
    }
    let s = h.stats();
    assert_eq!(s.connections_accepted, 1);
    assert_eq!(s.requests_total, 50);
    assert_eq!(s.requests_by_status.get(&200), Some(&50));
    // Connection: close is honoured after the response.
    r.send(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    let last = r.read(false).unwrap();
    assert_eq!(last.header("connection").as_deref(), Some("close"));
    assert!(r.closed());
    h.shutdown().unwrap();
}

#[test]
fn pipelined_requests_answered_in_order() {
    let h = start(small());
    let mut r = Reader::new(connect(h.local_addr()));
    let mut batch = String::new();
    let paths = [
        "/bytes/1",
        "/delay/50",
        "/bytes/2",
        "/status/404",
        "/bytes/3",
    ];
    for p in paths {
        batch.push_str(&format!("GET {p} HTTP/1.1\r\nHost: x\r\n\r\n"));
    }
    batch.push_str("HEAD / HTTP/1.1\r\n\r\n");
    batch.push_str("POST /echo HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz");
    r.send(batch.as_bytes());
    let got: Vec<(u16, usize)> = paths
        .iter()
        .map(|_| r.read(false).unwrap())
        .map(|x| (x.status, x.body.len()))
        .collect();
    assert_eq!(got, vec![(200, 1), (200, 7), (200, 2), (404, 14), (200, 3)]);
    let head = r.read(true).unwrap();
    assert_eq!(head.header("content-length").as_deref(), Some("515"));
    assert!(r.read(false).unwrap().text().ends_with("xyz"));
    assert_eq!(h.stats().requests_total, 7);
    h.shutdown().unwrap();
}

#[test]
fn http_1_0_closes_unless_keep_alive() {
    let h = start(small());
    let a = h.local_addr();
    let mut r = Reader::new(connect(a));
    r.send(b"GET / HTTP/1.0\r\n\r\n");
    let resp = r.read(false).unwrap();
    assert_eq!(resp.body.len(), 515);
    assert!(r.closed());
    let mut r = Reader::new(connect(a));
    for _ in 0..3 {
        r.send(b"GET /1k.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let resp = r.read(false).unwrap();
        assert_eq!(resp.header("connection").as_deref(), Some("keep-alive"));
        assert_eq!(resp.body.len(), 1024);
    }
    h.shutdown().unwrap();
}

#[test]
fn stats_route_counts_exactly() {
    let h = start(small());
    let a = h.local_addr();
    for _ in 0..20 {
        get(a, "GET / HTTP/1.1\r\n\r\n");
    }
    for _ in 0..5 {
        get(a, "GET /status/503 HTTP/1.1\r\n\r\n");
    }
    let r = get(a, "GET /stats HTTP/1.1\r\n\r\n");
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["requests_total"], 25, "{v}");
    assert_eq!(v["requests_by_status"]["200"], 20);
    assert_eq!(v["requests_by_status"]["503"], 5);
    assert_eq!(v["connections_accepted"], 26);
    assert_eq!(v["workers"], 2);
    let s = h.shutdown().unwrap();
    assert_eq!(s.requests_total, 26);
    assert_eq!(s.connections_open, 0);
}

#[test]
fn route_prefix_moves_the_routes() {
    let mut cfg = small();
    cfg.route_prefix = "_t/".into();
    let h = start(cfg);
    let a = h.local_addr();
    assert_eq!(get(a, "GET /_t/bytes/7 HTTP/1.1\r\n\r\n").body.len(), 7);
    assert_eq!(get(a, "GET /bytes/7 HTTP/1.1\r\n\r\n").status, 404);
    assert_eq!(get(a, "GET / HTTP/1.1\r\n\r\n").body.len(), 515);
    h.shutdown().unwrap();
}
