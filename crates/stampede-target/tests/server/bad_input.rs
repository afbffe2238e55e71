//! Bad input: malformed heads (400), oversized heads (431), oversized bodies (413),
//! unknown methods (501), request smuggling shapes (400), and path traversal against
//! a root (403/404, never a file outside the root, symlink escapes included).

use crate::common::*;

use std::path::Path;

#[test]
fn refusals_table() {
    let mut cfg = small();
    cfg.max_body = 1000;
    let h = start(cfg);
    let a = h.local_addr();
    let big_header = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(17 * 1024));
    let many_headers = format!("GET / HTTP/1.1\r\n{}\r\n", "X-H: 1\r\n".repeat(100));
    let table: Vec<(&str, String, u16)> = vec![
        ("garbage request line", "HELLO\r\n\r\n".into(), 400),
        ("space in header name", "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n".into(), 400),
        ("bad version", "GET / HTTP/9.9\r\n\r\n".into(), 400),
        ("relative target", "GET index.html HTTP/1.1\r\n\r\n".into(), 400),
        ("header over 16 KiB", big_header, 431),
        ("too many headers", many_headers, 431),
        ("body over max", "POST /echo HTTP/1.1\r\nContent-Length: 1001\r\n\r\n".into(), 413),
        (
            "chunked body over max",
            format!(
                "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n{}\r\n0\r\n\r\n",
                "a".repeat(1001)
            ),
            413,
        ),
        ("unknown method", "BREW / HTTP/1.1\r\n\r\n".into(), 501),
        (
            "CL and TE together",
            "POST /echo HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".into(),
            400,
        ),
        (
            "conflicting Content-Length",
            "POST /echo HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde".into(),
            400,
        ),
        ("CL with sign", "POST /echo HTTP/1.1\r\nContent-Length: +4\r\n\r\nabcd".into(), 400),
        ("bad chunk size", "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".into(), 400),
        ("unknown coding", "POST /echo HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n".into(), 501),
    ];
    for (what, raw, want) in &table {
        let mut r = Reader::new(connect(a));
        r.send(raw.as_bytes());
        let resp = r
            .read(false)
            .unwrap_or_else(|| panic!("{what}: no response"));
        assert_eq!(resp.status, *want, "{what}");
        assert_eq!(
            resp.header("connection").as_deref(),
            Some("close"),
            "{what}"
        );
        assert!(r.closed(), "{what}: connection must close");
    }
    let s = h.shutdown().unwrap();
    assert_eq!(s.requests_total, table.len() as u64);
}

#[test]
fn bad_request_after_good_ones_keeps_their_responses() {
    let h = start(small());
    let mut r = Reader::new(connect(h.local_addr()));
    r.send(b"GET /bytes/3 HTTP/1.1\r\n\r\nGET /bytes/4 HTTP/1.1\r\n\r\nNOT HTTP\r\n\r\n");
    assert_eq!(r.read(false).unwrap().body.len(), 3);
    assert_eq!(r.read(false).unwrap().body.len(), 4);
    assert_eq!(r.read(false).unwrap().status, 400);
    assert!(r.closed());
    h.shutdown().unwrap();
}

fn write(p: &Path, s: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

#[test]
fn static_files_and_traversal() {
    let dir = std::env::temp_dir().join(format!("stampede-target-root-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("www");
    write(&root.join("index.html"), "<p>home</p>");
    write(&root.join("css/site.css"), "body{}");
    write(&root.join("sub/index.html"), "sub");
    write(&dir.join("secret.txt"), "SECRET");
    std::os::unix::fs::symlink(dir.join("secret.txt"), root.join("escape.txt")).unwrap();
    std::os::unix::fs::symlink(&dir, root.join("up")).unwrap();
    std::os::unix::fs::symlink(root.join("css/site.css"), root.join("inside.css")).unwrap();
    let mut cfg = small();
    cfg.root = Some(root.clone());
    cfg.file_cache_max = 8; // site.css (6 B) is cached, index.html (11 B) streamed
    let h = start(cfg);
    let a = h.local_addr();

    let r = get(a, "GET / HTTP/1.1\r\n\r\n");
    assert_eq!((r.status, r.text().as_str()), (200, "<p>home</p>"));
    let css = get(a, "GET /css/site.css HTTP/1.1\r\n\r\n");
    assert_eq!(css.header("content-type").as_deref(), Some("text/css"));
    let lm = css.header("last-modified").expect("Last-Modified");
    let r = get(
        a,
        &format!("GET /css/site.css HTTP/1.1\r\nIf-Modified-Since: {lm}\r\n\r\n"),
    );
    assert_eq!(r.status, 304);
    let r = get(
        a,
        &format!("GET / HTTP/1.1\r\nIf-Modified-Since: {lm}\r\n\r\n"),
    );
    assert_eq!(r.status, 304);
    assert_eq!(get(a, "GET /sub/ HTTP/1.1\r\n\r\n").text(), "sub");
    assert_eq!(get(a, "GET /sub HTTP/1.1\r\n\r\n").text(), "sub");
    assert_eq!(get(a, "GET /inside.css HTTP/1.1\r\n\r\n").text(), "body{}");
    assert_eq!(
        get(a, "GET /bytes/3 HTTP/1.1\r\n\r\n").body.len(),
        3,
        "routes stay on"
    );
    assert_eq!(get(a, "POST /css/site.css HTTP/1.1\r\n\r\n").status, 405);

    let attempts = [
        "/../secret.txt",
        "/css/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/css/%2e%2e/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "//etc/passwd",
        "/etc/passwd",
        "http://x/../secret.txt",
        "/escape.txt",
        "/up/secret.txt",
        "/nothing-here",
        "/css/site.css%00.txt",
    ];
    for p in attempts {
        let r = get(a, &format!("GET {p} HTTP/1.1\r\n\r\n"));
        assert!(
            matches!(r.status, 400 | 403 | 404),
            "{p}: status {}",
            r.status
        );
        assert!(!r.text().contains("SECRET"), "{p} leaked the secret");
        assert!(!r.text().contains("root:"), "{p} leaked /etc/passwd");
    }
    h.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cached_file_is_revalidated() {
    let dir = std::env::temp_dir().join(format!("stampede-target-reval-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write(&dir.join("a.txt"), "one");
    let mut cfg = small();
    cfg.threads = 1;
    cfg.root = Some(dir.clone());
    let h = start(cfg);
    let a = h.local_addr();
    assert_eq!(get(a, "GET /a.txt HTTP/1.1\r\n\r\n").text(), "one");
    write(&dir.join("a.txt"), "two!");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(get(a, "GET /a.txt HTTP/1.1\r\n\r\n").text(), "two!");
    h.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
