//! compress.rs: negotiation by weight, the rewrite of a whole response
//! and what it leaves alone, each coding and the routes' size check.

use super::*;

/// Compressible text, as the target's pattern is.
fn pattern() -> Vec<u8> {
    (0..10_000u32)
        .flat_map(|i| format!("{} ", i % 97).into_bytes())
        .collect()
}

fn head(accept: &str) -> Vec<u8> {
    format!("GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: {accept}\r\n\r\n").into_bytes()
}

#[test]
fn negotiates_by_weight_then_preference() {
    assert_eq!(negotiate(&head("gzip")), Some(Coding::Gzip));
    assert_eq!(negotiate(&head("gzip, br, zstd")), Some(Coding::Zstd));
    assert_eq!(negotiate(&head("gzip;q=1, br;q=0.5")), Some(Coding::Gzip));
    assert_eq!(negotiate(&head("gzip;q=0")), None);
    assert_eq!(negotiate(&head("identity")), None);
    assert_eq!(negotiate(&head("*;q=0.1, gzip;q=0")), Some(Coding::Zstd));
    assert_eq!(negotiate(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), None);
}

#[test]
fn rewrites_a_compressible_response_with_its_new_length() {
    let x = Exchange {
        version: 1,
        keep_alive: true,
        head_only: false,
        date: b"Tue, 10 Oct 2000 13:55:36 GMT",
        alt_svc: b"",
    };
    let body = pattern()[..2000].to_vec();
    let mut out = b"earlier".to_vec();
    let mark = out.len();
    let n = response::whole(&mut out, &x, 200, "text/html", &body);
    let mut outcome = Outcome::done(200, n);
    compress_response(&head("gzip"), &x, &mut out, mark, &mut outcome);
    let text = String::from_utf8_lossy(&out[mark..]).to_string();
    assert!(text.contains("Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"));
    let (head_len, length) = {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut r = httparse::Response::new(&mut headers);
        let len = match r.parse(&out[mark..]).unwrap() {
            httparse::Status::Complete(n) => n,
            httparse::Status::Partial => panic!("a whole head"),
        };
        let cl = r
            .headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case("content-length"))
            .count();
        assert_eq!(cl, 1, "{text}");
        (len, outcome.body_bytes)
    };
    assert_eq!(out.len() - mark - head_len, length);
    assert!(length < 200, "{length}");
    let mut decoded = Vec::new();
    let mut d = flate2::write::GzDecoder::new(&mut decoded);
    d.write_all(&out[mark + head_len..]).unwrap();
    d.finish().unwrap();
    assert_eq!(decoded, body);
    assert!(out.starts_with(b"earlier"));
    // Not asked, or not a type that compresses: untouched.
    for (accept, ctype) in [("", "text/html"), ("gzip", "application/octet-stream")] {
        let mut out = Vec::new();
        let n = response::whole(&mut out, &x, 200, ctype, &body);
        let before = out.clone();
        let mut outcome = Outcome::done(200, n);
        compress_response(&head(accept), &x, &mut out, 0, &mut outcome);
        assert_eq!(out, before, "{accept} {ctype}");
    }
}

#[test]
fn every_coding_encodes_and_routes_check_their_size() {
    for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
        let encoded = coding.encode(&pattern()[..8192]);
        assert!(!encoded.is_empty() && encoded.len() < 1024, "{coding:?}");
    }
    let x = Exchange {
        version: 1,
        keep_alive: true,
        head_only: false,
        date: b"Tue, 10 Oct 2000 13:55:36 GMT",
        alt_svc: b"",
    };
    let mut out = Vec::new();
    assert_eq!(
        route(Coding::Gzip, Some("x"), &pattern(), &x, &mut out).status,
        400
    );
    let mut out = Vec::new();
    assert_eq!(
        route(Coding::Brotli, None, &pattern(), &x, &mut out).status,
        200
    );
}
