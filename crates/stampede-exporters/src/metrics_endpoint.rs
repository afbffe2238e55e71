//! `--metrics ADDR`: a tiny HTTP endpoint serving the latest
//! [`Reading`](crate::metrics_feed::Reading) at `GET /metrics` in the OpenMetrics text format when the scraper asks for it
//! (Prometheus does), else the Prometheus text format 0.0.4 (prometheus-client
//! does both encodings, so names, escaping and `# EOF` follow the specs). One blocking
//! thread answers one scrape at a time: scrapes come every few seconds and
//! the run must not pay for a server. The address is bound before any load
//! is sent, so a bad one is refused up front; after the run the final
//! values stay served for `--metrics-linger`. `serve --metrics` serves the
//! target's families through the same [`serve_families`].

use crate::metrics_feed::Board;
use crate::metrics_series::{self, Family, Labels, Values};
use crate::web_http;
use anyhow::Context;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A bound, serving endpoint.
pub struct MetricsEndpoint {
    address: SocketAddr,
    linger: Duration,
}

impl MetricsEndpoint {
    /// Binds `address` (`--metrics`; None: no endpoint) and starts serving,
    /// to linger `linger` after the run (`--metrics-linger`); an
    /// address that cannot be bound is an error naming why.
    /// Every series carries `run_labels` (metrics_series::run_labels); the
    /// readings come from `board`.
    pub fn start(
        address: Option<&str>,
        linger: Duration,
        run_labels: &Labels,
        board: &Board,
    ) -> anyhow::Result<Option<MetricsEndpoint>> {
        let Some(text) = address else {
            return Ok(None);
        };
        let listener = web_http::bind("--metrics", text, "127.0.0.1:9464")?;
        let board = board.clone();
        let address = serve_families(
            "--metrics",
            listener,
            run_labels.clone(),
            Box::new(move || {
                let reading = board
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone()
                    .unwrap_or_default();
                metrics_series::families(&reading)
            }),
        )?;
        eprintln!("stampede: metrics: serving http://{address}/metrics");
        Ok(Some(MetricsEndpoint { address, linger }))
    }

    /// Keeps serving the final values for the linger time, or until
    /// `ended` (a Ctrl-C came) says to stop.
    pub fn linger(&self, ended: impl Fn() -> bool) {
        if self.linger.is_zero() || ended() {
            return;
        }
        eprintln!(
            "stampede: metrics: serving final values at http://{}/metrics for {}",
            self.address,
            stampede_plan::format_duration(self.linger)
        );
        let until = Instant::now() + self.linger;
        while Instant::now() < until && !ended() {
            std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
        }
    }
}

/// What a scrape shows: the families as of now.
pub type Source = Box<dyn Fn() -> Vec<Family> + Send + Sync>;

/// Serves `source` at `/metrics` on `listener` (bound for `flag` by
/// web_http::bind) from a thread of its own, every series labelled with
/// `labels` first; returns the bound address.
pub fn serve_families(
    flag: &str,
    listener: TcpListener,
    labels: Labels,
    source: Source,
) -> anyhow::Result<SocketAddr> {
    let address = listener
        .local_addr()
        .with_context(|| format!("{flag}: reading the bound address"))?;
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Exposition { source, labels }));
    let registry = Arc::new(registry);
    std::thread::Builder::new()
        .name("stampede-metrics".into())
        .spawn(move || serve(listener, &registry))
        .with_context(|| format!("{flag}: starting the server thread"))?;
    Ok(address)
}

/// Answers scrapes until the process ends; a broken client costs only
/// its own connection.
fn serve(listener: TcpListener, registry: &Registry) {
    for stream in listener.incoming().flatten() {
        let _ = answer(stream, registry);
    }
}

fn answer(mut stream: TcpStream, registry: &Registry) -> std::io::Result<()> {
    let request = web_http::read_request(&mut stream)?;
    let (status, content_type, body) = match (request.method.as_str(), request.path.as_str()) {
        ("GET" | "HEAD", "/metrics") => {
            let mut body = String::new();
            let (encoded, content_type) =
                if request.header_contains("accept", "application/openmetrics-text") {
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
    web_http::respond(&mut stream, &request, status, content_type, body.as_bytes())
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Encodes the source's families at each scrape.
struct Exposition {
    source: Source,
    labels: Labels,
}

impl std::fmt::Debug for Exposition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exposition")
            .field("labels", &self.labels)
            .finish_non_exhaustive()
    }
}

impl Collector for Exposition {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        encode_families(&mut encoder, (self.source)(), &self.labels)
    }
}

fn encode_families(
    encoder: &mut DescriptorEncoder,
    families: Vec<Family>,
    run_labels: &Labels,
) -> Result<(), std::fmt::Error> {
    for family in families {
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
    use crate::metrics_feed::Reading;
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
        let summary = stampede_metrics::StreamSummary {
            count: 4,
            p50_us: 900,
            p99_us: 2_000,
            max_us: 3_000,
        };
        let reading = Reading {
            requests: vec![("success", "200".into(), 7), ("error", "timeout".into(), 1)],
            target_rate: Some(100.0),
            websocket: Some(crate::metrics_protocols::WebSocketReading {
                messages_sent: 4,
                messages_received: 4,
                close_codes: [(1000, 2), (1006, 1)].into_iter().collect(),
                rtt: summary,
                ..Default::default()
            }),
            stream: Some(crate::metrics_protocols::StreamReading {
                events: 9,
                gap: summary,
                ..Default::default()
            }),
            ..Reading::default()
        };
        let labels = metrics_series::run_labels("abc", Some(2));
        let shown = reading.clone();
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Exposition {
            source: Box::new(move || metrics_series::families(&shown)),
            labels: labels.clone(),
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
        // The WebSocket and streams series are in both, with their HELP.
        for name in [
            "stampede_ws_messages_received_total",
            "stampede_ws_close_codes_total",
            "stampede_ws_rtt_quantile_seconds",
            "stampede_stream_events_total",
            "stampede_stream_gap_quantile_seconds",
        ] {
            assert!(scraped.iter().any(|(n, _)| n == name), "{name}: {text}");
        }
        assert!(text.contains("# HELP stampede_ws_rtt_quantile_seconds WebSocket round trip"));
    }
}
