//! `stampede run --remote-write https://…`: the pushes go over TLS to a
//! receiver whose certificate the client trusts through `SSL_CERT_FILE`
//! (the system's roots otherwise), each a snappy-compressed WriteRequest
//! carrying the run's series; the receiver answers 204 and closes without
//! a TLS close_notify, as many do. With a certificate nobody trusts the run
//! goes on and the end line names the failure.

use stampede_testkit::{
    binary, one_thread, self_signed_server_config_and_pem, spawn_target, temp_dir,
};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A TLS remote-write receiver on loopback keeping every request's body.
struct Receiver {
    port: u16,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    pem: String,
}

impl Receiver {
    fn start() -> Receiver {
        let (config, pem) = self_signed_server_config_and_pem();
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = listener.local_addr().expect("address").port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let connection = rustls::ServerConnection::new(config.clone()).expect("TLS");
                let mut stream = rustls::StreamOwned::new(connection, tcp);
                if let Some(body) = read_request(&mut stream) {
                    kept.lock().unwrap().push(body);
                    let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\n\r\n");
                    let _ = stream.flush();
                }
                // Dropped without close_notify.
            }
        });
        Receiver { port, bodies, pem }
    }
}

/// The body of one POST (by its Content-Length), or None on a TLS failure.
fn read_request(stream: &mut impl Read) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            assert!(head.starts_with("post /api/v1/write"), "{head}");
            assert!(head.contains("content-encoding: snappy"), "{head}");
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .expect("a Content-Length");
            if data.len() >= end + 4 + length {
                return Some(data[end + 4..end + 4 + length].to_vec());
            }
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&chunk[..n]);
    }
}

fn run_with(receiver: &Receiver, trust: Option<&std::path::Path>) -> (i32, String) {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let write = format!("https://127.0.0.1:{}/api/v1/write", receiver.port);
    let mut command = Command::new(binary());
    command
        .args(["run", &url, "-n", "300", "-c", "2", "-t", "1", "--quiet"])
        .args(["--remote-write", &write]);
    match trust {
        Some(file) => command.env("SSL_CERT_FILE", file),
        None => command.env_remove("SSL_CERT_FILE"),
    };
    let output = command.output().expect("stampede runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code().expect("an exit code"), stderr)
}

#[test]
fn pushes_go_over_tls_to_a_trusted_receiver() {
    let receiver = Receiver::start();
    let dir = temp_dir("remote-write-tls");
    let pem = dir.join("receiver.pem");
    std::fs::write(&pem, &receiver.pem).expect("the certificate");
    let (code, stderr) = run_with(&receiver, Some(&pem));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("all accepted"), "{stderr}");
    let bodies = receiver.bodies.lock().unwrap().clone();
    assert!(!bodies.is_empty(), "no push arrived: {stderr}");
    let last = snap::raw::Decoder::new()
        .decompress_vec(bodies.last().expect("a push"))
        .expect("snappy");
    // Protobuf keeps strings as they are: the series' names are in it.
    let text = String::from_utf8_lossy(&last);
    assert!(text.contains("stampede_requests_total"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_untrusted_certificate_is_counted_and_the_run_goes_on() {
    let receiver = Receiver::start();
    let (code, stderr) = run_with(&receiver, None);
    assert_eq!(code, 0, "the run is not the receiver's: {stderr}");
    let line = stderr
        .lines()
        .find(|line| line.starts_with("stampede: remote-write:") && line.contains("failed"))
        .unwrap_or_else(|| panic!("no failure line: {stderr}"));
    assert!(line.contains("invalid peer certificate"), "{line}");
    assert!(receiver.bodies.lock().unwrap().is_empty());
}
