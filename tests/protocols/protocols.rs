//! Request and transport breadth end to end: Unix sockets, a proxy (plain and
//! CONNECT), pipelining, auth, cookies, HEAD and User-Agent reaching the server.

use stampede_testkit::{binary, run_stampede, spawn_target, RawServer, ServeProcess, TargetConfig};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixListener;
use std::sync::{Arc, Mutex};

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// Reads a request head and returns it as text (None when the peer closed).
fn head_text(stream: &mut impl Read) -> Option<String> {
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => seen.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&seen).into_owned())
}

#[test]
fn unix_socket() {
    let dir = stampede_testkit::temp_dir("unix");
    let path = dir.join("app.sock");
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                while head_text(&mut stream).is_some() {
                    if stream.write_all(OK).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let run = run_stampede(
        binary(),
        &[
            "http://localhost/",
            "--unix-socket",
            path.to_str().unwrap(),
            "-n",
            "50",
            "-c",
            "2",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/success"), 50);
    let missing = run_stampede(
        binary(),
        &[
            "http://localhost/",
            "--unix-socket",
            "/nonexistent.sock",
            "-n",
            "2",
            "-c",
            "1",
        ],
    );
    assert_eq!(missing.result()["requests"]["errors"], 2);
    assert!(missing.result()["error_samples"]
        .to_string()
        .contains("nonexistent.sock"));
}

#[test]
fn auth_cookies_head_and_user_agent_reach_the_server() {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let server = RawServer::start(move |mut s| {
        while let Some(head) = head_text(&mut s) {
            seen.lock().unwrap().push(head);
            if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                .is_err()
            {
                return;
            }
        }
    });
    let run = run_stampede(
        binary(),
        &[
            &server.url("/x"),
            "-n",
            "2",
            "-c",
            "1",
            "-a",
            "user:pass",
            "--cookie",
            "sid=1",
            "--cookie",
            "lang=zh",
            "--head",
            "--user-agent",
            "ab/2.3",
        ],
    );
    assert_eq!(run.count("/requests/success"), 2, "{}", run.stderr());
    let heads = heads.lock().unwrap();
    let head = &heads[0];
    assert!(head.starts_with("HEAD /x HTTP/1.1\r\n"), "{head}");
    assert!(
        head.contains("Authorization: Basic dXNlcjpwYXNz\r\n"),
        "{head}"
    );
    assert!(head.contains("Cookie: sid=1; lang=zh\r\n"), "{head}");
    assert!(head.contains("User-Agent: ab/2.3\r\n"), "{head}");
    assert_eq!(head.matches("User-Agent").count(), 1);
}

/// A small forward proxy: absolute-form requests are rewritten to origin
/// form and forwarded; CONNECT opens a tunnel; CONNECT to port 1 is refused.
fn start_proxy() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let log = lines.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || proxy_connection(client, log));
        }
    });
    (port, lines)
}

fn splice(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16384];
    while let Ok(n) = from.read(&mut buffer) {
        if n == 0 || to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Both);
}

fn proxy_connection(mut client: TcpStream, log: Arc<Mutex<Vec<String>>>) {
    let Some(head) = head_text(&mut client) else {
        return;
    };
    let request_line = head.lines().next().unwrap_or("").to_string();
    log.lock().unwrap().push(request_line.clone());
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method == "CONNECT" {
        if target.ends_with(":1") {
            let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
            return;
        }
        let Ok(upstream) = TcpStream::connect(target) else {
            return;
        };
        let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
        let (c2, u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
        std::thread::spawn(move || splice(c2, u2));
        splice(upstream, client);
        return;
    }
    // Absolute form: http://host:port/path → connect to host:port, send origin form.
    let rest = target.trim_start_matches("http://");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let Ok(mut upstream) = TcpStream::connect(authority) else {
        return;
    };
    let forwarded = head.replacen(target, if path.is_empty() { "/" } else { path }, 1);
    let _ = upstream.write_all(forwarded.as_bytes());
    let (c2, u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
    std::thread::spawn(move || splice(c2, u2));
    splice(upstream, client);
}

#[test]
fn plain_http_through_a_proxy_uses_absolute_form() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let (proxy_port, lines) = start_proxy();
    let url = format!("http://{}/index.html", target.local_addr());
    let proxy = format!("127.0.0.1:{proxy_port}");
    let run = run_stampede(
        binary(),
        &[&url, "-X", &proxy, "-n", "20", "-c", "2", "-t", "1"],
    );
    assert_eq!(run.count("/requests/success"), 20, "{}", run.stderr());
    let lines = lines.lock().unwrap();
    assert!(
        lines[0].starts_with(&format!(
            "GET http://{}/index.html HTTP/1.1",
            target.local_addr()
        )),
        "{lines:?}"
    );
    assert_eq!(target.stats().requests_total, 20);
}

#[test]
fn a_refusing_proxy_gives_proxy_errors() {
    // Nothing listens on the proxy port: the proxy cannot be reached.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let run = run_stampede(
        binary(),
        &[
            "https://127.0.0.1:1/",
            "-X",
            &format!("127.0.0.1:{port}"),
            "-n",
            "3",
            "-c",
            "1",
            "--insecure",
        ],
    );
    assert_eq!(
        run.result()["errors"]["proxy"],
        3,
        "{}",
        run.result()["errors"]
    );
    // A proxy that answers CONNECT with 403.
    let (proxy_port, _) = start_proxy();
    let run = run_stampede(
        binary(),
        &[
            "https://127.0.0.1:1/",
            "-X",
            &format!("127.0.0.1:{proxy_port}"),
            "-n",
            "3",
            "-c",
            "1",
            "--insecure",
        ],
    );
    assert_eq!(run.result()["errors"]["proxy"], 3, "{}", run.result());
    assert!(run.result()["error_samples"]["proxy"]
        .to_string()
        .contains("403"));
}

/// Complete request heads in `bytes` (every request here is a bodiless GET).
fn heads_in(bytes: &[u8]) -> usize {
    bytes.windows(4).filter(|w| *w == b"\r\n\r\n").count()
}

/// A server that proves pipelining: on each connection it reads what arrives
/// before answering anything, until `depth` request heads are in or a second
/// passed, and records how many heads that was (a client that waits for each
/// answer has sent one); then it answers every request.
struct PipeliningWitness {
    server: RawServer,
    /// Per connection, the request heads in before its first answer.
    before_first_answer: Arc<Mutex<Vec<usize>>>,
    /// Requests answered, all connections.
    answered: Arc<Mutex<usize>>,
}

fn pipelining_witness(depth: usize) -> PipeliningWitness {
    let before_first_answer = Arc::new(Mutex::new(Vec::new()));
    let answered = Arc::new(Mutex::new(0));
    let (before, total) = (before_first_answer.clone(), answered.clone());
    let server = RawServer::start(move |mut stream| {
        let mut pending = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(1);
        stream
            .set_read_timeout(Some(std::time::Duration::from_millis(20)))
            .unwrap();
        while heads_in(&pending) < depth && std::time::Instant::now() < give_up {
            match stream.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
                Err(_) => {} // the read timeout: look at the clock again
            }
        }
        before.lock().unwrap().push(heads_in(&pending));
        stream.set_read_timeout(None).unwrap();
        loop {
            // Answer every complete head, keep a partial one for later.
            while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                pending.drain(..end + 4);
                // Counted before the answer: the client may exit on reading it.
                *total.lock().unwrap() += 1;
                if stream.write_all(OK).is_err() {
                    return;
                }
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
            }
        }
    });
    PipeliningWitness {
        server,
        before_first_answer,
        answered,
    }
}

#[test]
fn pipelining_sends_batches_on_few_connections() {
    for io in stampede_testkit::EVENT_LOOPS {
        let PipeliningWitness {
            server,
            before_first_answer,
            answered,
        } = pipelining_witness(16);
        let url = server.url("/");
        let Some(run) = stampede_testkit::run_ok_on_loop(
            io,
            &[&url, "--pipeline", "16", "-c", "2", "-t", "1", "-n", "330"],
        ) else {
            continue;
        };
        assert_eq!(run.count("/requests/sent"), 330, "--io {io}");
        assert_eq!(run.count("/requests/success"), 330, "--io {io}");
        assert_eq!(run.count("/connections/opened"), 2, "--io {io}");
        drop(server);
        assert_eq!(*answered.lock().unwrap(), 330, "--io {io}");
        // Each connection's first batch was on the wire, whole, before the
        // server answered any of it: 16 requests, not the 1 of a client
        // that waits for each response.
        assert_eq!(
            *before_first_answer.lock().unwrap(),
            vec![16, 16],
            "--io {io}: requests buffered before the first answer"
        );
    }
    let refused = run_stampede(
        binary(),
        &[
            "http://127.0.0.1:9/",
            "--pipeline",
            "4",
            "-r",
            "100",
            "-d",
            "1s",
        ],
    );
    assert_eq!(refused.code(), Some(2));
}

#[test]
fn tls_options_on_plain_http_are_refused() {
    let run = run_stampede(binary(), &["http://127.0.0.1:1/", "--insecure", "-n", "1"]);
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("https"), "{}", run.stderr());
}

#[test]
fn targets_file_keeps_per_target_stats() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let dir = stampede_testkit::temp_dir("targets");
    std::fs::write(dir.join("body.json"), "{\"k\":1}").unwrap();
    let base = format!("http://{}", target.local_addr());
    let file = dir.join("targets.txt");
    std::fs::write(
        &file,
        format!(
            "# the coroutine-server seed tests two paths together\nGET {base}/index.html\nweight=3\n\nGET {base}/status/404\n\nPOST {base}/echo\nContent-Type: application/json\n@body.json\n"
        ),
    )
    .unwrap();
    // /echo answers with the request's head and then its body: the POST's
    // content type in the head, the file's bytes after the blank line and
    // nothing after them (a byte count cannot tell: the head alone outweighs
    // the body). The other targets' pages pass the check's other branch.
    let echoed = "body ~ (?s)(?i:^POST /echo .*\\r\\ncontent-type: application/json\\r\\n)\
                  (?:.*\\r\\n)?\\r\\n\\{\"k\":1\\}$|^<!DOCTYPE html>|^404 Not Found\\n$";
    let run = run_stampede(
        binary(),
        &[
            "--targets",
            file.to_str().unwrap(),
            "-n",
            "500",
            "-c",
            "2",
            "-t",
            "1",
            "--check",
            echoed,
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let targets = run.result()["targets"].as_array().unwrap().clone();
    assert_eq!(targets.len(), 3);
    let finished: Vec<u64> = targets
        .iter()
        .map(|t| t["finished"].as_u64().unwrap())
        .collect();
    assert_eq!(finished.iter().sum::<u64>(), 500);
    assert_eq!(finished[0], 300, "weight 3 of 5: {finished:?}");
    assert_eq!(targets[1]["status"]["404"], finished[1]);
    assert_eq!(targets[2]["method"], "POST");
    assert_eq!(
        targets[2]["success"], finished[2],
        "the echo holds the body"
    );
    assert_eq!(run.count("/requests/check_failed"), 0, "{}", run.result());
    // A check per entry of the mix, each passed by every response of it.
    for (i, finished) in finished.iter().enumerate() {
        let check = &run.result()["checks"][i];
        assert_eq!(check["passed"], *finished, "entry {i}: {check}");
        assert_eq!(check["failed"], 0, "entry {i}: {check}");
    }
    assert_eq!(run.count("/requests/success"), finished[0] + finished[2]);
    assert!(run.stdout().contains("weight"), "{}", run.stdout());
    // A malformed block names the file and line.
    std::fs::write(&file, format!("GET {base}/\nnot a header\n")).unwrap();
    let bad = run_stampede(binary(), &["--targets", file.to_str().unwrap(), "-n", "1"]);
    assert_eq!(bad.code(), Some(2));
    assert!(bad.stderr().contains("targets.txt:2"), "{}", bad.stderr());
}

#[test]
fn tls_http1_and_h2_and_h2c_against_the_built_in_target() {
    let dir = stampede_testkit::temp_dir("tls");
    let cert = dir.join("ca.pem");
    let tls = ServeProcess::start(&["--tls", "--write-cert", cert.to_str().unwrap()]);
    let https = format!("https://localhost:{}/index.html", tls.port);
    // Trusted through --cacert, HTTP/1.1 over TLS, with the handshake timed.
    let run = run_stampede(
        binary(),
        &[
            &https,
            "--cacert",
            cert.to_str().unwrap(),
            "-n",
            "200",
            "-c",
            "4",
            "-t",
            "1",
        ],
    );
    assert_eq!(
        run.count("/requests/success"),
        200,
        "{}",
        run.result()["errors"]
    );
    assert_eq!(run.count("/breakdown/tls/count"), 4);
    assert_eq!(run.count("/bytes/body"), 200 * 515);
    // Full handshakes on every connection, --insecure.
    let run = run_stampede(
        binary(),
        &[
            &https,
            "--insecure",
            "--no-tls-resume",
            "--no-keepalive",
            "-n",
            "40",
            "-c",
            "2",
            "-t",
            "1",
        ],
    );
    assert_eq!(
        run.count("/requests/success"),
        40,
        "{}",
        run.result()["errors"]
    );
    assert_eq!(run.count("/breakdown/tls/count"), 40);
    // HTTP/2 through ALPN, 4 connections x 8 streams.
    let run = run_stampede(
        binary(),
        &[
            &https,
            "--cacert",
            cert.to_str().unwrap(),
            "--http2",
            "--streams",
            "8",
            "-n",
            "800",
            "-c",
            "4",
            "-t",
            "1",
        ],
    );
    assert_eq!(
        run.count("/requests/success"),
        800,
        "{}",
        run.result()["errors"]
    );
    assert_eq!(run.count("/connections/opened"), 4);
    assert_eq!(run.result()["plan"]["http_version"], "2");
    assert_eq!(run.count("/bytes/body"), 800 * 515);
    // An unknown CA is a tls error with its reason, not a crash.
    let run = run_stampede(binary(), &[&https, "-n", "3", "-c", "1", "-t", "1"]);
    assert_eq!(
        run.result()["errors"]["tls"],
        3,
        "{}",
        run.result()["errors"]
    );
    assert!(run.result()["error_samples"]["tls"]
        .to_string()
        .to_lowercase()
        .contains("certificate"));
    // A wrong host name: the certificate is for localhost and 127.0.0.1 only.
    let wrong = format!("https://127.0.0.1:{}/", tls.port);
    let run = run_stampede(
        binary(),
        &[
            &wrong,
            "--cacert",
            cert.to_str().unwrap(),
            "--sni",
            "example.test",
            "-n",
            "2",
            "-c",
            "1",
        ],
    );
    assert_eq!(
        run.result()["errors"]["tls"],
        2,
        "{}",
        run.result()["errors"]
    );
    // A CA file that is not PEM: one clear line, exit 2.
    std::fs::write(dir.join("bad.pem"), "not a certificate").unwrap();
    let run = run_stampede(
        binary(),
        &[
            &https,
            "--cacert",
            dir.join("bad.pem").to_str().unwrap(),
            "-n",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(run.stderr().contains("cacert"), "{}", run.stderr());

    // --resolve: a name DNS does not know, sent as SNI and Host.
    let named = format!("https://example.test:{}/", tls.port);
    let resolve = format!("example.test:{}:127.0.0.1", tls.port);
    let run = run_stampede(
        binary(),
        &[
            &named,
            "--resolve",
            &resolve,
            "--insecure",
            "-n",
            "10",
            "-c",
            "1",
        ],
    );
    assert_eq!(
        run.count("/requests/success"),
        10,
        "{}",
        run.result()["errors"]
    );

    // h2c with prior knowledge on the plain port.
    let plain = ServeProcess::start(&[]);
    let h2c = format!("http://127.0.0.1:{}/chunked/3000", plain.port);
    let run = run_stampede(
        binary(),
        &[
            &h2c,
            "--http2",
            "--streams",
            "4",
            "-n",
            "400",
            "-c",
            "2",
            "-t",
            "1",
        ],
    );
    assert_eq!(
        run.count("/requests/success"),
        400,
        "{}",
        run.result()["errors"]
    );
    assert_eq!(run.count("/bytes/body"), 400 * 3000);
}

#[test]
fn ipv6_literals() {
    let Ok(target) = stampede_testkit::Server::start(
        "[::1]:0".parse().unwrap(),
        TargetConfig {
            threads: 1,
            ..TargetConfig::default()
        },
    ) else {
        stampede_testkit::skip_or_fail(
            "no IPv6 loopback (::1) on this machine",
            "enable IPv6 on lo (sysctl net.ipv6.conf.lo.disable_ipv6=0)",
        );
        return;
    };
    let url = format!("http://[::1]:{}/index.html", target.local_addr().port());
    let run = run_stampede(binary(), &[&url, "-n", "100", "-c", "2", "-t", "1"]);
    assert_eq!(run.count("/requests/success"), 100, "{}", run.stderr());
    assert_eq!(target.shutdown().unwrap().requests_total, 100);
}

/// A multiplexed run says how many streams each connection carried, in its
/// header and its JSON plan (`compare` then names a difference); an
/// HTTP/1.1 run has no such figure.
#[test]
fn an_http2_result_says_its_streams_per_connection() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(
        binary(),
        &[&url, "--http2", "--streams", "8", "-c", "2", "-n", "40"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.result()["plan"]["streams"], 8);
    let text = std::process::Command::new(binary())
        .args([
            "run",
            &url,
            "--http2",
            "--streams",
            "8",
            "-c",
            "2",
            "-n",
            "40",
        ])
        .output()
        .expect("stampede runs");
    let header = String::from_utf8_lossy(&text.stdout);
    assert!(
        header.contains("HTTP/2, 8 streams per connection"),
        "{header}"
    );
    let plain = run_stampede(binary(), &[&url, "-c", "2", "-n", "4"]);
    assert!(plain.result()["plan"].get("streams").is_none());
}
