//! `--metrics ADDR`: a tiny HTTP endpoint serving the latest [`Reading`] at
//! `GET /metrics` in the OpenMetrics text format when the scraper asks for it
//! (Prometheus does), else the Prometheus text format 0.0.4 (prometheus-client
//! does both encodings, so names, escaping and `# EOF` follow the specs). One blocking
//! thread answers one scrape at a time: scrapes come every few seconds and
//! the run must not pay for a server. The address is bound before any load
//! is sent, so a bad one is refused up front; after the run the final
//! values stay served for `--metrics-linger`.

use crate::metrics_feed::{Board, Reading};
use crate::metrics_series::{self, Labels, Values};
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
    linger: Duration,
}

impl MetricsEndpoint {
    /// Binds `args.metrics` (None: no endpoint) and starts serving; an
    /// address that cannot be bound is an error naming why.
    /// Every series carries `run_labels` (metrics_series::run_labels); the
    /// readings come from `board`.
    pub fn start(
        args: &MetricsArgs,
        run_labels: &Labels,
        board: &Board,
    ) -> anyhow::Result<Option<MetricsEndpoint>> {
        let Some(text) = &args.metrics else {
            return Ok(None);
        };
        let listener = bind(text)?;
        let address = listener
            .local_addr()
            .context("--metrics: reading the bound address")?;
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Exposition {
            board: board.clone(),
            run_labels: run_labels.clone(),
        }));
        let registry = Arc::new(registry);
        std::thread::Builder::new()
            .name("stampede-metrics".into())
            .spawn(move || serve(listener, &registry))
            .context("--metrics: starting the server thread")?;
        eprintln!("stampede: metrics: serving http://{address}/metrics");
        Ok(Some(MetricsEndpoint {
            address,
            linger: args.metrics_linger,
        }))
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
    run_labels: Labels,
}

impl Collector for Exposition {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let reading = self
            .board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .unwrap_or_default();
        encode_reading(&mut encoder, &reading, &self.run_labels)
    }
}

fn encode_reading(
    encoder: &mut DescriptorEncoder,
    reading: &Reading,
    run_labels: &Labels,
) -> Result<(), std::fmt::Error> {
    for family in metrics_series::families(reading) {
        let (name, help) = (family.name, family.help);
        match family.values {
            Values::Counter(members) => {
                let mut metric =
                    encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
                for (labels, value) in members {
                    metric
                        .encode_family(&label_set(run_labels, &labels))?
                        .encode_counter::<NoLabelSet, _, u64>(&value, None)?;
                }
            }
            Values::Gauge(members) => {
                let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
                for (labels, value) in members {
                    metric
                        .encode_family(&label_set(run_labels, &labels))?
                        .encode_gauge(&value)?;
                }
            }
            Values::Histogram {
                sum,
                count,
                buckets,
            } => {
                encoder
                    .encode_descriptor(name, help, None, MetricType::Histogram)?
                    .encode_family(&label_set(run_labels, &Vec::new()))?
                    .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
            }
        }
    }
    Ok(())
}

/// The run's labels, then the series' own.
fn label_set<'a>(run_labels: &'a Labels, own: &'a Labels) -> Vec<(&'a str, &'a str)> {
    run_labels
        .iter()
        .chain(own)
        .map(|(name, value)| (*name, value.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// (name, sorted `label=value`s) of every sample line of an exposition.
    fn scraped_series(text: &str) -> BTreeSet<(String, Vec<String>)> {
        text.lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .map(|line| {
                let series = line.rsplit_once(' ').map_or(line, |(series, _)| series);
                let (name, labels) = series.split_once('{').unwrap_or((series, "}"));
                let mut labels: Vec<String> = labels
                    .trim_end_matches('}')
                    .split(',')
                    .filter(|label| !label.is_empty())
                    .map(|label| label.replace('"', ""))
                    .collect();
                labels.sort();
                (name.to_string(), labels)
            })
            .collect()
    }

    #[test]
    fn a_prometheus_scrape_and_a_push_carry_the_same_series() {
        let reading = Reading {
            requests: vec![("success", "200".into(), 7), ("error", "timeout".into(), 1)],
            target_rate: Some(100.0),
            ..Reading::default()
        };
        let labels = metrics_series::run_labels("abc", Some(2));
        let board = Board::default();
        *board.lock().unwrap() = Some(reading.clone());
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Exposition {
            board,
            run_labels: labels.clone(),
        }));
        let mut text = String::new();
        // OpenMetrics, as Prometheus scrapes it (the 0.0.4 text writes `le="1"`).
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let scraped = scraped_series(&text);
        let pushed: BTreeSet<(String, Vec<String>)> =
            crate::remote_write_proto::flatten(&metrics_series::families(&reading), &labels)
                .into_iter()
                .map(|(labels, _)| {
                    let name = labels
                        .iter()
                        .find(|l| l.name == "__name__")
                        .map(|l| l.value.clone())
                        .unwrap();
                    let mut rest: Vec<String> = labels
                        .iter()
                        .filter(|l| l.name != "__name__")
                        .map(|l| format!("{}={}", l.name, l.value))
                        .collect();
                    rest.sort();
                    (name, rest)
                })
                .collect();
        assert_eq!(scraped, pushed, "{text}");
        assert!(text.contains("agent=\"2\""), "{text}");
    }
}
