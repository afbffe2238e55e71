//! The codec against servers nobody here wrote for it: `nghttpd` (nghttp2's
//! server, h2c), nginx (h2c, with GOAWAY after `keepalive_requests`) and
//! stampede's own target (the `h2` crate's server, h2c prior knowledge),
//! through a blocking std::net driver. Each run's counts are checked
//! against what the server says it served (nghttpd's -v frame log, nginx's
//! access log, the target's stats).

mod blocking_driver;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use stampede_h2::{Config, RequestBlock};
use stampede_testkit::nginx::{listening, Nginx, Setup};
use stampede_testkit::{free_port, one_thread, spawn_target, temp_dir, tool_or_skip, wait_for};

/// nghttpd, killed when dropped.
struct Nghttpd {
    child: Child,
    log: std::path::PathBuf,
}

impl Drop for Nghttpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nghttpd {
    fn start(program: &Path, dir: &Path, port: u16, args: &[&str]) -> Nghttpd {
        let log = dir.join("nghttpd.log");
        let child = Command::new(program)
            .args(["-v", "--no-tls", "-d"])
            .arg(dir)
            .args(args)
            .arg(port.to_string())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("nghttpd starts");
        let addr = format!("127.0.0.1:{port}");
        wait_for(Duration::from_secs(10), || {
            std::net::TcpStream::connect(&addr).ok()
        })
        .expect("nghttpd listens");
        Nghttpd { child, log }
    }

    /// Lines of the -v log that contain `needle`.
    fn count(&self, needle: &str) -> u64 {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .filter(|l| l.contains(needle))
            .count() as u64
    }
}

#[test]
fn a_thousand_requests_on_ten_streams_against_nghttpd() {
    let Some(nghttpd) = tool_or_skip("nghttpd") else {
        return;
    };
    let dir = temp_dir("h2-nghttpd");
    std::fs::write(dir.join("small.txt"), vec![b's'; 1_336]).unwrap();
    std::fs::write(dir.join("big.bin"), vec![b'b'; 300_000]).unwrap();
    let port = free_port();
    // At most 5 streams at once, and small windows on nghttpd's side.
    let server = Nghttpd::start(&nghttpd, &dir, port, &["-m", "5", "-w", "14", "-W", "16"]);
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let authority = format!("127.0.0.1:{port}");
    let small = RequestBlock::new(
        "GET",
        "http",
        &authority,
        "/small.txt",
        &[("user-agent", "stampede-h2")],
    )
    .unwrap();
    // One stream before nghttpd's SETTINGS (it allows 5, fewer than RFC 9113 asks).
    let config = Config {
        streams_before_settings: 1,
        ..Config::default()
    };
    let tally = blocking_driver::run(addr, &small, None, 1_000, 10, &config);
    assert_eq!(
        tally.finished_by_status.get(&200),
        Some(&1_000),
        "{tally:?}"
    );
    assert_eq!(tally.finished(), 1_000);
    assert!(
        tally.other_ends.is_empty() && tally.retried == 0,
        "{tally:?}"
    );
    assert_eq!(tally.body_bytes, 1_000 * 1_336);
    assert_eq!(tally.body_sizes.get(&1_336), Some(&1_000));
    assert_eq!(tally.length_mismatches, 0);
    assert!(
        tally.max_open <= 5,
        "SETTINGS_MAX_CONCURRENT_STREAMS 5 exceeded: {}",
        tally.max_open
    );
    // Larger than our 64 KiB windows: WINDOW_UPDATEs keep it going.
    let big = RequestBlock::new("GET", "http", &authority, "/big.bin", &[]).unwrap();
    let small_windows = Config {
        stream_window: 65_535,
        connection_window: 65_535,
        ..config
    };
    let tally = blocking_driver::run(addr, &big, None, 20, 10, &small_windows);
    assert_eq!(tally.finished_by_status.get(&200), Some(&20), "{tally:?}");
    assert_eq!(tally.body_bytes, 20 * 300_000);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        server.count(":path: /small.txt"),
        1_000,
        "requests nghttpd read"
    );
    assert_eq!(server.count(":path: /big.bin"), 20);
    assert_eq!(
        server.count(":status: 200"),
        1_020,
        "responses nghttpd sent"
    );
}

#[test]
fn a_thousand_requests_on_ten_streams_against_the_built_in_target() {
    let target = spawn_target(one_thread());
    let addr = target.local_addr();
    let authority = addr.to_string();
    let page = RequestBlock::new(
        "GET",
        "http",
        &authority,
        "/",
        &[("user-agent", "stampede-h2")],
    )
    .unwrap();
    let tally = blocking_driver::run(addr, &page, None, 1_000, 10, &Config::default());
    assert_eq!(
        tally.finished_by_status.get(&200),
        Some(&1_000),
        "{tally:?}"
    );
    assert!(
        tally.other_ends.is_empty() && tally.retried == 0,
        "{tally:?}"
    );
    assert_eq!(tally.length_mismatches, 0);
    // Request bodies larger than the server's 64 KiB windows, echoed back.
    let echo = RequestBlock::new(
        "POST",
        "http",
        &authority,
        "/echo",
        &[("content-type", "application/octet-stream")],
    )
    .unwrap();
    let body = Bytes::from(vec![b'e'; 200_000]);
    let tally = blocking_driver::run(addr, &echo, Some(body), 20, 10, &Config::default());
    assert_eq!(tally.finished_by_status.get(&200), Some(&20), "{tally:?}");
    // The echo is the request's head as the target read it, then the body.
    assert_eq!(tally.body_sizes.len(), 1, "{:?}", tally.body_sizes);
    let (&size, &count) = tally.body_sizes.iter().next().unwrap();
    assert_eq!(count, 20);
    assert!(
        (200_000..200_500).contains(&size),
        "every upload echoed whole: {size}"
    );
    assert_eq!(tally.length_mismatches, 0);
    let stats = target.stats();
    assert_eq!(stats.requests_total, 1_020, "{stats:?}");
    assert_eq!(stats.h2_streams_total, 1_020);
    assert_eq!(stats.requests_by_status.get(&200), Some(&1_020));
}

#[test]
fn a_thousand_requests_across_nginx_goaways() {
    let Some(nginx) = tool_or_skip("nginx") else {
        return;
    };
    let dir = temp_dir("h2-nginx");
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    // GOAWAY after 100 requests per connection; 5 streams at once.
    let setup = Setup {
        listens: vec![format!("{addr} http2")],
        log_format: "$connection $status $server_protocol",
        http_extra: "keepalive_requests 100; http2_max_concurrent_streams 5;",
        netns: None,
    };
    let server = Nginx::start(&nginx, &dir, &setup, || listening(&addr));
    let page = RequestBlock::new("GET", "http", &addr, "/", &[]).unwrap();
    let config = Config {
        streams_before_settings: 1,
        ..Config::default()
    };
    let tally = blocking_driver::run(addr.parse().unwrap(), &page, None, 1_000, 10, &config);
    assert_eq!(
        tally.finished_by_status.get(&200),
        Some(&1_000),
        "{tally:?}"
    );
    assert!(tally.other_ends.is_empty(), "{tally:?}");
    assert!(
        tally.max_open <= 5,
        "http2_max_concurrent_streams 5 exceeded: {}",
        tally.max_open
    );
    let lines = server.take_lines();
    assert_eq!(lines.len(), 1_000, "requests nginx logged");
    assert!(
        lines.iter().all(|l| l[1] == "200" && l[2] == "HTTP/2.0"),
        "{lines:?}"
    );
    let connections: std::collections::BTreeSet<&String> = lines.iter().map(|l| &l[0]).collect();
    // Every connection ended by GOAWAY after 100 requests: ten of them, and
    // the driver opened exactly those. Streams started past the GOAWAY's
    // last id were retried on the next connection, not lost nor doubled.
    assert_eq!(connections.len(), 10, "{tally:?}");
    assert_eq!(tally.connections, 10);
}
