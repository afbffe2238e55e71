//! A real Prometheus for the metrics tests (`--metrics` is scraped,
//! `--remote-write` is received): started on loopback with its own config
//! and storage in a temp folder, asked through its HTTP query API, killed
//! when dropped. Also the small blocking HTTP GET and polling helpers those
//! tests share.

use crate::free_port;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The body of `GET path` on 127.0.0.1:`port`, or None when nothing answers
/// (yet) or the status is not 200.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    get_with(port, path, "")
}

/// The body of `GET path` with extra header lines (each ending in CRLF), or None.
pub fn get_with(port: u16, path: &str, headers: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

/// Polls `probe` every 100 ms until it gives a value or `limit` passes.
pub fn wait_for<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + limit;
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        if Instant::now() > until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `%`-escapes a PromQL expression for a query string.
fn escape(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Prometheus on loopback with its own config and storage, killed when dropped.
pub struct Prometheus {
    child: Child,
    /// The loopback port of its web API (`/api/v1/...`).
    pub port: u16,
}

impl Prometheus {
    /// Starts `program` with its storage and log in `dir`, scraping
    /// `scraped` (HOST:PORT) every second when given, and with the
    /// remote-write receiver on (`/api/v1/write`); waits until it is ready.
    pub fn start(program: &Path, dir: &Path, scraped: Option<&str>) -> Prometheus {
        let config = dir.join("prometheus.yml");
        let mut text = "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n".to_string();
        if let Some(scraped) = scraped {
            text.push_str(&format!(
                "scrape_configs:\n  - job_name: stampede\n    static_configs:\n      - targets: ['{scraped}']\n"
            ));
        }
        std::fs::write(&config, text).expect("write the config");
        let port = free_port();
        let child = Command::new(program)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--web.enable-remote-write-receiver")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).expect("log file"))
            .spawn()
            .expect("prometheus starts");
        let prometheus = Prometheus { child, port };
        wait_for(Duration::from_secs(60), || http_get(port, "/-/ready"))
            .expect("prometheus ready within 60s");
        prometheus
    }

    /// The single value of an instant query, or None while there is none.
    pub fn value(&self, query: &str) -> Option<f64> {
        let body = http_get(self.port, &format!("/api/v1/query?query={}", escape(query)))?;
        let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
        let value = answer.pointer("/data/result/0/value/1")?.as_str()?;
        value.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
