//! Results while a run goes: the terminal view, the web page, the Prometheus endpoint,
//! remote-write, the target's own metrics, the Grafana dashboard.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod grafana_dashboard;
mod live_view;
mod metrics_endpoint;
mod metrics_targets;
mod protocol_metrics;
mod remote_write;
mod remote_write_tls;
mod serve_metrics;
mod serve_metrics_h3;
mod web_dashboard;
