//! `--metrics ADDR`: a tiny HTTP endpoint serving the latest [`Reading`] at
//! `GET /metrics` in the OpenMetrics text format when the scraper asks for it
//! (Prometheus does), else the Prometheus text format 0.0.4 (prometheus-client
//! does both encodings, so names, escaping and `# EOF` follow the specs). One blocking
//! thread answers one scrape at a time: scrapes come every few seconds and
//! the run must not pay for a server. The address is bound before any load
//! is sent, so a bad one is refused up front; after the run the final
//! values stay served for `--metrics-linger`.

use crate::metrics_feed::{Board, Reading, LATENCY_BUCKETS_S, QUANTILES};
use crate::run_args::MetricsArgs;
use anyhow::Context;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Time a scraper has to send its request and read the answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a request head read (a scrape's is a few hundred bytes).
const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// A bound, serving endpoint.
pub struct MetricsEndpoint {
    address: SocketAddr,
    board: Board,
    linger: Duration,
}

impl MetricsEndpoint {
    /// Binds `args.metrics` (None: no endpoint) and starts serving; an
    /// address that cannot be bound is an error naming why.
    pub fn start(args: &MetricsArgs, run_id: &str) -> anyhow::Result<Option<MetricsEndpoint>> {
        let Some(text) = &args.metrics else {
            return Ok(None);
        };
        let listener = bind(text)?;
        let address = listener
            .local_addr()
            .context("--metrics: reading the bound address")?;
        let board = Board::default();
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Exposition {
            board: board.clone(),
            run_id: run_id.to_string(),
        }));
        let registry = Arc::new(registry);
        std::thread::Builder::new()
            .name("stampede-metrics".into())
            .spawn(move || serve(listener, &registry))
            .context("--metrics: starting the server thread")?;
        eprintln!("stampede: metrics: serving http://{address}/metrics");
        Ok(Some(MetricsEndpoint {
            address,
            board,
            linger: args.metrics_linger,
        }))
    }

    /// Where the run's observer publishes.
    pub fn board(&self) -> Board {
        self.board.clone()
    }

    /// Keeps serving the final values for the linger time, or until `stop`
    /// (a Ctrl-C) asks to end.
    pub fn linger(&self, stop: &stampede_engine::StopHandle) {
        if self.linger.is_zero() || stop.is_stopped() {
            return;
        }
        eprintln!(
            "stampede: metrics: serving final values at http://{}/metrics for {}",
            self.address,
            stampede_plan::format_duration(self.linger)
        );
        let until = Instant::now() + self.linger;
        while Instant::now() < until && !stop.is_stopped() {
            std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
        }
    }
}

/// Binds the listener, with one clear line for each way it can fail.
fn bind(text: &str) -> anyhow::Result<TcpListener> {
    let address = text
        .to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .ok_or_else(|| {
            anyhow::anyhow!("--metrics {text}: not an address (HOST:PORT, e.g. 127.0.0.1:9464)")
        })?;
    TcpListener::bind(address).map_err(|error| {
        let why = match error.kind() {
            std::io::ErrorKind::AddrInUse => "address already in use".to_string(),
            std::io::ErrorKind::PermissionDenied => {
                "permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)".to_string()
            }
            std::io::ErrorKind::AddrNotAvailable => "not an address of this machine".to_string(),
            _ => error.to_string(),
        };
        anyhow::anyhow!("--metrics {text}: {why}")
    })
}

/// Answers scrapes until the process ends; a broken client costs only
/// its own connection.
fn serve(listener: TcpListener, registry: &Registry) {
    for stream in listener.incoming().flatten() {
        let _ = answer(stream, registry);
    }
}

fn answer(mut stream: TcpStream, registry: &Registry) -> std::io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_HEAD {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let mut body = String::new();
            let (encoded, content_type) = if accepts_openmetrics(&head) {
                let encoded = prometheus_client::encoding::text::encode(&mut body, registry);
                (encoded, OPENMETRICS)
            } else {
                let encoded =
                    prometheus_client::encoding::prometheus_text::encode(&mut body, registry);
                (encoded, PROMETHEUS_TEXT)
            };
            match encoded {
                Ok(()) => ("200 OK", content_type, body),
                Err(_) => (
                    "500 Internal Server Error",
                    "text/plain",
                    "encoding failed\n".into(),
                ),
            }
        }
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain", "see /metrics\n".into()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET /metrics\n".into(),
        ),
    };
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != "HEAD" {
        response.push_str(&body);
    }
    stream.write_all(response.as_bytes())?;
    stream.flush()
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// True when the request's Accept header asks for OpenMetrics (Prometheus
/// does); other clients (curl, older scrapers) get the 0.0.4 text format.
fn accepts_openmetrics(head: &[u8]) -> bool {
    String::from_utf8_lossy(head).lines().any(|line| {
        line.split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("accept")
                && value.contains("application/openmetrics-text")
        })
    })
}

/// Encodes the board's latest reading at each scrape.
#[derive(Debug)]
struct Exposition {
    board: Board,
    run_id: String,
}

impl Collector for Exposition {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let reading = self
            .board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .unwrap_or_default();
        encode_reading(&mut encoder, &reading, &self.run_id)
    }
}

fn encode_reading(
    encoder: &mut DescriptorEncoder,
    reading: &Reading,
    run_id: &str,
) -> Result<(), std::fmt::Error> {
    let run = [("run_id", run_id)];
    {
        let mut metric = encoder.encode_descriptor(
            "stampede_requests",
            "Finished requests by outcome: success and failed_status by status code, error by class",
            None,
            MetricType::Counter,
        )?;
        for (outcome, code, count) in &reading.requests {
            let labels = [
                ("run_id", run_id),
                ("outcome", outcome),
                ("code", code.as_str()),
            ];
            metric
                .encode_family(&labels)?
                .encode_counter::<NoLabelSet, _, u64>(count, None)?;
        }
    }
    let counters = [
        (
            "stampede_bytes_received",
            "All bytes read from the target",
            reading.bytes_received,
        ),
        (
            "stampede_connections_opened",
            "TCP connections established",
            reading.connections_opened,
        ),
        (
            "stampede_late_sends",
            "Open model: requests sent over 1 ms late",
            reading.late_sends,
        ),
    ];
    for (name, help, value) in counters {
        encoder
            .encode_descriptor(name, help, None, MetricType::Counter)?
            .encode_family(&run)?
            .encode_counter::<NoLabelSet, _, u64>(&value, None)?;
    }
    let mut gauges = vec![
        (
            "stampede_connections_open",
            "Connections open now",
            reading.open_connections as f64,
        ),
        (
            "stampede_in_flight",
            "Requests in flight now",
            reading.in_flight as f64,
        ),
        (
            "stampede_rate",
            "Completed responses per second over the latest interval (after the run: its average)",
            reading.rate,
        ),
    ];
    if let Some(rate) = reading.target_rate {
        gauges.push((
            "stampede_target_rate",
            "Open model: the planned requests per second now",
            rate,
        ));
    }
    if let Some(lateness) = reading.send_lateness_p99_s {
        gauges.push((
            "stampede_send_lateness_seconds",
            "Open model: p99 of how late every send was (intended instant to send), so far",
            lateness,
        ));
    }
    for (name, help, value) in gauges {
        encoder
            .encode_descriptor(name, help, None, MetricType::Gauge)?
            .encode_family(&run)?
            .encode_gauge(&value)?;
    }
    let buckets = if reading.latency_buckets.is_empty() {
        LATENCY_BUCKETS_S
            .iter()
            .map(|bound| (*bound, 0))
            .chain(std::iter::once((f64::INFINITY, 0)))
            .collect()
    } else {
        reading.latency_buckets.clone()
    };
    encoder
        .encode_descriptor(
            "stampede_latency_seconds",
            "Latency from the intended send to the complete response",
            None,
            MetricType::Histogram,
        )?
        .encode_family(&run)?
        .encode_histogram::<NoLabelSet>(
            reading.latency_sum_s,
            reading.latency_count,
            &buckets,
            None,
        )?;
    let mut quantiles = encoder.encode_descriptor(
        "stampede_latency_quantile_seconds",
        "Latency quantiles of the whole run so far, from its HDR histogram",
        None,
        MetricType::Gauge,
    )?;
    for ((_, label), value) in QUANTILES.iter().zip(&reading.latency_quantiles_s) {
        let labels = [("run_id", run_id), ("quantile", label)];
        quantiles.encode_family(&labels)?.encode_gauge(value)?;
    }
    Ok(())
}
