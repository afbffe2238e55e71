//! The built-in target under hostile clients: ten thousand idle connections
//! while another client measures (latency must not collapse), obs-fold and
//! more traversal shapes. (Slowloris, smuggling, the main traversal table and
//! fd exhaustion are in crates/stampede-target/tests.)

use stampede_testkit::{binary, ServeProcess};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

fn raise_nofile() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain get/setrlimit on a struct we own.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
    limit.rlim_cur
}

/// p99 latency in µs of a short measured run against the server.
fn measure_p99(port: u16) -> (u64, u64) {
    let output = Command::new(binary())
        .args([
            &format!("http://127.0.0.1:{port}/"),
            "-n",
            "3000",
            "-c",
            "10",
            "-t",
            "1",
            "-q",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    (
        json["latency_us"]["p99"].as_u64().unwrap(),
        json["requests"]["success"].as_u64().unwrap(),
    )
}

#[test]
fn ten_thousand_idle_connections_do_not_collapse_latency() {
    let idle_wanted = 10_000u64;
    if raise_nofile() < idle_wanted + 200 {
        stampede_testkit::skip_or_fail(
            &format!("the open-file limit is below {}", idle_wanted + 200),
            &format!("raise the hard limit: ulimit -Hn {}", idle_wanted + 200),
        );
        return;
    }
    let server = ServeProcess::start(&["--max-connections", "20000", "--idle-timeout", "120s"]);
    let (baseline_p99, baseline_ok) = measure_p99(server.port);
    assert_eq!(baseline_ok, 3000);
    let idle: Vec<TcpStream> = (0..idle_wanted)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).expect("idle connection"))
        .collect();
    let (loaded_p99, loaded_ok) = measure_p99(server.port);
    assert_eq!(
        loaded_ok, 3000,
        "every request answered with 10k idle connections open"
    );
    let bound = (baseline_p99 * 10).max(50_000);
    assert!(
        loaded_p99 <= bound,
        "p99 {loaded_p99} us with {} idle connections vs {baseline_p99} us without",
        idle.len()
    );
    // The idle connections are still served, not dropped.
    let mut one = &idle[idle.len() / 2];
    one.write_all(b"GET /bytes/3 HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    one.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

fn status_of(port: u16, raw: &[u8]) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(raw).unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    text.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn obs_fold_and_more_traversal_shapes_are_refused() {
    let dir = std::env::temp_dir().join(format!("stampede-hostile-{}", std::process::id()));
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("index.html"), "home").unwrap();
    std::fs::write(dir.join("secret.txt"), "SECRET").unwrap();
    let server = ServeProcess::start(&["--root", root.to_str().unwrap()]);
    let fold = b"GET / HTTP/1.1\r\nX-A: 1\r\n folded: yes\r\n\r\n";
    assert_eq!(status_of(server.port, fold), 400, "obs-fold is rejected");
    for target in [
        "/%252e%252e/secret.txt",
        "/..\\secret.txt",
        "/%5c..%5csecret.txt",
        "/.%2e/secret.txt",
    ] {
        let raw = format!("GET {target} HTTP/1.1\r\nConnection: close\r\n\r\n");
        let status = status_of(server.port, raw.as_bytes());
        assert!(matches!(status, 400 | 403 | 404), "{target}: {status}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
