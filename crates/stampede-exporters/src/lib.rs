//! What a run shows the outside world while it goes, from the same
//! snapshot stream as the live view: the `--metrics` endpoint
//! (`metrics_*`, with `metrics_protocols` for WebSocket and streams), `--remote-write` pushes (`remote_write*`, over
//! `http_post`) and the `--web` page (`web*`); `web_http` is the small
//! HTTP server they share with `serve --metrics`.

pub mod http_post;
pub mod metrics_endpoint;
pub mod metrics_family;
pub mod metrics_feed;
pub mod metrics_outcomes;
pub mod metrics_protocols;
pub mod metrics_series;
pub mod metrics_target;
pub mod remote_write;
pub mod remote_write_proto;
pub mod remote_write_push;
pub mod remote_write_tally;
pub mod web;
pub mod web_http;
pub mod web_page;
pub mod web_state;
