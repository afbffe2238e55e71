//! TLS, HTTP/2 and Unix sockets: every route over TLS + HTTP/1.1, TLS + h2 (ALPN),
//! h2c prior knowledge, and a Unix socket (HTTP/1.1 and h2c), with a Rust client
//! (tokio-rustls, the `h2` crate; curl's view is tests/protocols/target_curl.rs at the root);
//! /stats counts them exactly; certificate errors are one clear line; graceful
//! shutdown with TLS and h2 connections open.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use stampede_target::{CertSource, Config, Server, ServerHandle, TargetError, TlsConfig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// One request of the route table and what its answer must be.
struct Case {
    method: &'static str,
    path: &'static str,
    body: &'static [u8],
    status: u16,
    /// Body length of the answer.
    len: usize,
    /// Text the body must contain (case-insensitive).
    contains: &'static [&'static str],
}

const fn case(path: &'static str, status: u16, len: usize) -> Case {
    Case {
        method: "GET",
        path,
        body: b"",
        status,
        len,
        contains: &[],
    }
}

/// Every route of the target. The last is `/stats`, whose length varies.
const CASES: &[Case] = &[
    case("/", 200, 515),
    case("/index.html", 200, 515),
    case("/1k.html", 200, 1024),
    case("/bytes/100", 200, 100),
    case("/bytes/200000", 200, 200_000),
    case("/chunked/1000", 200, 1000),
    case("/chunked/150000", 200, 150_000),
    case("/delay/30", 200, 7),
    case("/cpu/1000", 200, 17),
    case("/status/404", 404, 14),
    case("/status/204", 204, 0),
    case("/nope", 404, 14),
    Case {
        method: "HEAD",
        path: "/1k.html",
        body: b"",
        status: 200,
        len: 0,
        contains: &[],
    },
    Case {
        method: "POST",
        path: "/echo?x=1",
        body: b"hello body",
        status: 200,
        len: usize::MAX,
        contains: &[
            "/echo?x=1",
            "cookie: sid=1",
            "authorization: basic dxnlcjpwyxnz",
            "hello body",
        ],
    },
    Case {
        method: "GET",
        path: "/stats",
        body: b"",
        status: 200,
        len: usize::MAX,
        contains: &["\"requests_total\"", "\"h2_streams_total\""],
    },
];

fn check(mode: &str, c: &Case, status: u16, body: &[u8]) {
    assert_eq!(status, c.status, "{mode} {} {}", c.method, c.path);
    if c.len != usize::MAX {
        assert_eq!(body.len(), c.len, "{mode} {} {}", c.method, c.path);
    }
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    for want in c.contains {
        assert!(
            text.contains(&want.to_ascii_lowercase()),
            "{mode} {}: {want:?} not in {text}",
            c.path
        );
    }
    if body.len() >= 128 && (c.path.starts_with("/bytes/") || c.path.starts_with("/chunked/")) {
        // The same pattern bytes whatever the framing.
        assert_eq!(&body[..64], &body[64..128], "{mode} {}", c.path);
    }
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stampede-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn start(cfg: Config) -> ServerHandle {
    Server::start("127.0.0.1:0".parse().unwrap(), cfg).expect("server starts")
}

fn tls_server(extra: impl FnOnce(&mut Config)) -> ServerHandle {
    let mut cfg = Config {
        threads: 2,
        tls: Some(TlsConfig {
            cert: CertSource::SelfSigned,
            write_cert: None,
            ..TlsConfig::new(CertSource::SelfSigned)
        }),
        ..Config::default()
    };
    extra(&mut cfg);
    start(cfg)
}

fn connector(h: &ServerHandle, alpn: &[&[u8]]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(h.tls_cert_pem().expect("tls").as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    TlsConnector::from(Arc::new(cfg))
}

async fn tls_connect(h: &ServerHandle, name: &str, alpn: &[&[u8]]) -> TlsStream<TcpStream> {
    let tcp = TcpStream::connect(h.local_addr()).await.unwrap();
    let name = ServerName::try_from(name.to_string()).unwrap();
    connector(h, alpn)
        .connect(name, tcp)
        .await
        .expect("TLS handshake")
}

/// A minimal HTTP/1.1 client on one keep-alive connection; counts the bytes it reads.
struct H1<S> {
    s: S,
    buf: Vec<u8>,
    read: usize,
}

impl<S: AsyncRead + AsyncWrite + Unpin> H1<S> {
    fn new(s: S) -> Self {
        H1 {
            s,
            buf: Vec::new(),
            read: 0,
        }
    }

    async fn fill(&mut self) {
        let mut tmp = [0u8; 65536];
        let n = self.s.read(&mut tmp).await.unwrap();
        assert!(n > 0, "unexpected EOF");
        self.read += n;
        self.buf.extend_from_slice(&tmp[..n]);
    }

    async fn take(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            self.fill().await;
        }
        self.buf.drain(..n).collect()
    }

    async fn request(&mut self, c: &Case) -> (u16, Vec<u8>) {
        let req = format!(
            "{} {} HTTP/1.1\r\nHost: localhost\r\nCookie: sid=1\r\nAuthorization: Basic dXNlcjpwYXNz\r\nContent-Length: {}\r\n\r\n",
            c.method,
            c.path,
            c.body.len()
        );
        self.s.write_all(req.as_bytes()).await.unwrap();
        self.s.write_all(c.body).await.unwrap();
        self.s.flush().await.unwrap();
        let (status, head_len, length, chunked) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut r = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(n) = r.parse(&self.buf).unwrap() {
                let get = |name: &str| {
                    r.headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).into_owned())
                };
                let length = get("content-length").map(|v| v.parse::<usize>().unwrap());
                let chunked = get("transfer-encoding").is_some();
                break (r.code.unwrap(), n, length, chunked);
            }
            self.fill().await;
        };
        self.buf.drain(..head_len);
        if c.method == "HEAD" || status == 204 {
            return (status, Vec::new());
        }
        if !chunked {
            return (status, self.take(length.expect("content-length")).await);
        }
        let mut body = Vec::new();
        loop {
            let (hdr, size) = loop {
                if let Ok(httparse::Status::Complete(v)) = httparse::parse_chunk_size(&self.buf) {
                    break v;
                }
                self.fill().await;
            };
            self.buf.drain(..hdr);
            let chunk = self.take(size as usize + 2).await;
            if size == 0 {
                return (status, body);
            }
            body.extend_from_slice(&chunk[..size as usize]);
        }
    }
}

/// Runs the whole table over HTTP/1.1 on one connection; returns the bytes read.
async fn h1_all<S: AsyncRead + AsyncWrite + Unpin>(mode: &str, s: S) -> usize {
    let mut c = H1::new(s);
    for case in CASES {
        let (status, body) = c.request(case).await;
        check(mode, case, status, &body);
    }
    c.read
}

/// Runs the whole table over HTTP/2 on one connection (`scheme` for `:scheme`).
async fn h2_all<S>(mode: &str, io: S, scheme: &str)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut send, conn) = h2::client::handshake(io).await.expect("h2 handshake");
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    });
    for c in CASES {
        let (status, body) = h2_request(&mut send, scheme, c).await;
        check(mode, c, status, &body);
    }
    drop(send);
    let _ = tokio::time::timeout(Duration::from_secs(5), driver).await;
}

async fn h2_request(
    send: &mut h2::client::SendRequest<Bytes>,
    scheme: &str,
    c: &Case,
) -> (u16, Vec<u8>) {
    let req = http::Request::builder()
        .method(c.method)
        .uri(format!("{scheme}://localhost{}", c.path))
        .header("cookie", "sid=1")
        .header("authorization", "Basic dXNlcjpwYXNz")
        .body(())
        .unwrap();
    let mut ready = send.clone().ready().await.expect("h2 ready");
    let (resp, mut stream) = ready
        .send_request(req, c.body.is_empty())
        .expect("send_request");
    if !c.body.is_empty() {
        stream.send_data(Bytes::from_static(c.body), true).unwrap();
    }
    let resp = resp.await.expect("h2 response");
    let status = resp.status().as_u16();
    let mut body = resp.into_body();
    let mut out = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("h2 data");
        let _ = body.flow_control().release_capacity(chunk.len());
        out.extend_from_slice(&chunk);
    }
    (status, out)
}

/// Waits (bounded) for `cond`: bytes are counted once the server's write returns,
/// which may be just after the client has read them.
async fn settled(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The requests the table makes, by status.
fn table_statuses() -> (u64, u64, u64) {
    let n = |s: u16| CASES.iter().filter(|c| c.status == s).count() as u64;
    (n(200), n(404), n(204))
}

fn assert_counts(h: &ServerHandle, runs: u64) {
    let s = h.stats();
    let (ok, not_found, no_content) = table_statuses();
    assert_eq!(s.requests_total, runs * CASES.len() as u64, "{s:?}");
    assert_eq!(s.requests_by_status.get(&200), Some(&(runs * ok)), "{s:?}");
    assert_eq!(
        s.requests_by_status.get(&404),
        Some(&(runs * not_found)),
        "{s:?}"
    );
    assert_eq!(
        s.requests_by_status.get(&204),
        Some(&(runs * no_content)),
        "{s:?}"
    );
}

#[tokio::test]
async fn every_route_over_tls_http1_and_h2() {
    let h = tls_server(|_| {});
    // HTTP/1.1 through ALPN, the certificate checked for the DNS name.
    let s = tls_connect(&h, "localhost", &[b"http/1.1"]).await;
    assert_eq!(s.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let read = h1_all("tls+http/1.1", s).await;
    assert_counts(&h, 1);
    // bytes_out counts HTTP bytes (before TLS): exactly what the client read.
    settled(|| h.stats().bytes_out == read as u64).await;
    assert_eq!(h.stats().bytes_out, read as u64);
    // HTTP/2 through ALPN, the certificate checked for the IP address.
    let s = tls_connect(&h, "127.0.0.1", &[b"h2", b"http/1.1"]).await;
    assert_eq!(s.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    h2_all("tls+h2", s, "https").await;
    assert_counts(&h, 2);
    let s = h.stats();
    assert_eq!(s.tls_handshakes, 2);
    assert_eq!(s.tls_handshake_failures, 0);
    assert_eq!(s.h2_connections, 1);
    assert_eq!(s.h2_streams_total, CASES.len() as u64);
    assert_eq!(s.connections_accepted, 2);
    // Without ALPN, HTTP/1.1 (and h2 prior knowledge would be sniffed).
    let s = tls_connect(&h, "::1", &[]).await;
    assert_eq!(s.get_ref().1.alpn_protocol(), None);
    let mut c = H1::new(s);
    let (status, body) = c.request(&CASES[0]).await;
    check("tls, no alpn", &CASES[0], status, &body);
    // A client that does not trust the certificate fails the handshake, counted.
    let tcp = TcpStream::connect(h.local_addr()).await.unwrap();
    let untrusting = {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cfg = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        TlsConnector::from(Arc::new(cfg))
    };
    let name = ServerName::try_from("localhost").unwrap();
    assert!(untrusting.connect(name, tcp).await.is_err());
    settled(|| h.stats().tls_handshake_failures == 1).await;
    assert_eq!(h.stats().tls_handshake_failures, 1);
    tokio::task::spawn_blocking(move || h.shutdown().unwrap())
        .await
        .unwrap();
}

#[tokio::test]
async fn every_route_over_h2c_and_unix() {
    let dir = tmp_dir("unix-routes");
    let sock = dir.join("target.sock");
    let h = start(Config {
        threads: 2,
        unix_socket: Some(sock.clone()),
        ..Config::default()
    });
    assert_eq!(h.unix_path(), Some(sock.as_path()));
    let tcp = TcpStream::connect(h.local_addr()).await.unwrap();
    h2_all("h2c", tcp, "http").await;
    assert_counts(&h, 1);
    // The h2c connection's last writes are counted once it has closed.
    settled(|| h.stats().connections_open == 0).await;
    let before = h.stats().bytes_out;
    let read = h1_all("unix http/1.1", UnixStream::connect(&sock).await.unwrap()).await;
    assert_counts(&h, 2);
    settled(|| h.stats().bytes_out - before == read as u64).await;
    assert_eq!(h.stats().bytes_out - before, read as u64);
    h2_all(
        "unix h2c",
        UnixStream::connect(&sock).await.unwrap(),
        "http",
    )
    .await;
    assert_counts(&h, 3);
    let s = h.stats();
    assert_eq!(s.h2_connections, 2);
    assert_eq!(s.h2_streams_total, 2 * CASES.len() as u64);
    assert_eq!(s.connections_accepted, 3);
    assert_eq!(s.tls_handshakes, 0);
    tokio::task::spawn_blocking(move || h.shutdown().unwrap())
        .await
        .unwrap();
    assert!(!sock.exists(), "the socket file is removed at shutdown");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn h2_streams_run_concurrently_and_bodies_are_capped() {
    let h = start(Config {
        threads: 1,
        max_body: 1000,
        ..Config::default()
    });
    let tcp = TcpStream::connect(h.local_addr()).await.unwrap();
    let (send, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    // 100 streams of /delay/300 on one connection take about 300 ms, not 30 s.
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let mut send = send.clone();
        tasks.push(tokio::spawn(async move {
            h2_request(&mut send, "http", &case("/delay/300", 200, 7)).await
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().0, 200);
    }
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    let mut send2 = send.clone();
    let big = Case {
        method: "POST",
        path: "/echo",
        body: &[b'x'; 5000],
        status: 413,
        len: usize::MAX,
        contains: &[],
    };
    assert_eq!(h2_request(&mut send2, "http", &big).await.0, 413);
    let s = h.stats();
    assert_eq!(s.requests_by_status.get(&200), Some(&100));
    assert_eq!(s.requests_by_status.get(&413), Some(&1));
    assert_eq!(s.h2_streams_total, 101);
    drop(send);
    drop(send2);
    tokio::task::spawn_blocking(move || h.shutdown().unwrap())
        .await
        .unwrap();
}

#[tokio::test]
async fn no_h2c_means_the_preface_is_a_bad_request() {
    let h = start(Config {
        threads: 1,
        h2c: false,
        ..Config::default()
    });
    let mut tcp = TcpStream::connect(h.local_addr()).await.unwrap();
    tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    let mut resp = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut resp)).await;
    assert!(
        resp.starts_with(b"HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&resp)
    );
    assert_eq!(h.stats().h2_connections, 0);
    tokio::task::spawn_blocking(move || h.shutdown().unwrap())
        .await
        .unwrap();
}

#[tokio::test]
async fn graceful_shutdown_with_tls_and_h2_connections_open() {
    let h = tls_server(|c| c.shutdown_grace = Duration::from_secs(5));
    // Idle TLS HTTP/1.1 connection.
    let mut idle_h1 = H1::new(tls_connect(&h, "localhost", &[b"http/1.1"]).await);
    let (status, _) = idle_h1.request(&CASES[0]).await;
    assert_eq!(status, 200);
    // h2 connection with a stream in flight, and an idle h2 connection.
    let busy = tls_connect(&h, "localhost", &[b"h2"]).await;
    let (send, conn) = h2::client::handshake(busy).await.unwrap();
    let busy_conn = tokio::spawn(async move { conn.await.is_ok() });
    let mut s2 = send.clone();
    let in_flight =
        tokio::spawn(
            async move { h2_request(&mut s2, "https", &case("/delay/500", 200, 7)).await },
        );
    let idle = tls_connect(&h, "localhost", &[b"h2"]).await;
    let (idle_send, idle_conn) = h2::client::handshake(idle).await.unwrap();
    let idle_conn = tokio::spawn(async move { idle_conn.await.is_ok() });
    tokio::time::sleep(Duration::from_millis(100)).await;

    let t = Instant::now();
    let stopper = tokio::task::spawn_blocking(move || h.shutdown().unwrap());
    // The request in flight finishes; the connections then close (GOAWAY for h2).
    let (status, body) = in_flight.await.unwrap();
    assert_eq!((status, body.len()), (200, 7));
    let stats = stopper.await.unwrap();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(3), "shutdown took {took:?}");
    assert!(
        took >= Duration::from_millis(300),
        "shutdown did not wait: {took:?}"
    );
    assert_eq!(stats.requests_total, 2);
    assert_eq!(stats.connections_open, 0);
    assert_eq!(stats.h2_connections, 2);
    drop(send);
    drop(idle_send);
    let _ = tokio::time::timeout(Duration::from_secs(5), busy_conn)
        .await
        .expect("h2 closed");
    let _ = tokio::time::timeout(Duration::from_secs(5), idle_conn)
        .await
        .expect("idle h2 closed");
    let mut tmp = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), idle_h1.s.read(&mut tmp)).await;
    assert!(
        matches!(n, Ok(Ok(0)) | Ok(Err(_))),
        "idle TLS connection closed: {n:?}"
    );
}

#[test]
fn certificate_files_and_write_cert() {
    let dir = tmp_dir("tls-files");
    let pem = dir.join("ca.pem");
    let gen = tls_server(|c| {
        if let Some(t) = c.tls.as_mut() {
            t.write_cert = Some(pem.clone());
        }
    });
    let fp = gen.tls_fingerprint().unwrap().to_string();
    assert_eq!(fp.len(), 95);
    assert_eq!(
        std::fs::read_to_string(&pem).unwrap(),
        gen.tls_cert_pem().unwrap()
    );
    gen.shutdown().unwrap();

    let missing = |cert: &Path, key: &Path| {
        Server::start(
            "127.0.0.1:0".parse().unwrap(),
            Config {
                threads: 1,
                tls: Some(TlsConfig {
                    cert: CertSource::Files {
                        cert: cert.to_path_buf(),
                        key: key.to_path_buf(),
                    },
                    write_cert: None,
                    ..TlsConfig::new(CertSource::SelfSigned)
                }),
                ..Config::default()
            },
        )
        .err()
        .expect("refused")
    };
    // A missing certificate file: one line naming it and why.
    let e = missing(&dir.join("missing.pem"), &dir.join("missing.key"));
    assert!(
        matches!(
            &e,
            TargetError::Certificate {
                what: "certificate",
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(
        msg.contains("missing.pem") && msg.contains("No such file"),
        "{msg}"
    );
    // A certificate file used as its own key: no key in it.
    let e = missing(&pem, &pem);
    assert!(
        matches!(&e, TargetError::Certificate { what: "key", .. }),
        "{e:?}"
    );
    // A key that is not the certificate's: the TLS setup says so.
    let other = dir.join("other.pem");
    let k1 = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let k2 = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    std::fs::write(&other, k1.cert.pem()).unwrap();
    let key = dir.join("other.key");
    std::fs::write(&key, k2.signing_key.serialize_pem()).unwrap();
    let e = missing(&other, &key);
    assert!(matches!(&e, TargetError::Tls(_)), "{e:?}");
    // The matching key works, and the fingerprint is the certificate's.
    std::fs::write(&key, k1.signing_key.serialize_pem()).unwrap();
    let h = Server::start(
        "127.0.0.1:0".parse().unwrap(),
        Config {
            threads: 1,
            tls: Some(TlsConfig {
                cert: CertSource::Files {
                    cert: other.clone(),
                    key,
                },
                write_cert: None,
                ..TlsConfig::new(CertSource::SelfSigned)
            }),
            ..Config::default()
        },
    )
    .unwrap();
    assert_eq!(h.tls_cert_pem(), Some(k1.cert.pem().as_str()));
    h.shutdown().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_live_unix_socket_is_not_taken_over() {
    let dir = tmp_dir("unix-live");
    let sock = dir.join("s.sock");
    let cfg = || Config {
        threads: 1,
        unix_socket: Some(sock.clone()),
        ..Config::default()
    };
    let first = start(cfg());
    let e = Server::start("127.0.0.1:0".parse().unwrap(), cfg())
        .err()
        .expect("refused");
    assert!(matches!(e, TargetError::Unix { .. }), "{e:?}");
    assert!(sock.exists(), "the live socket stays");
    first.shutdown().unwrap();
    assert!(!sock.exists());
    // A stale file (a server that died without cleaning up) is replaced.
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    let second = start(cfg());
    second.shutdown().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
