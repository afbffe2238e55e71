//! What to send and how: the [`Plan`] a run executes, its [`Target`], its
//! [`LoadModel`], its stop condition, and the parsers for the values people type (durations, headers).
//!
//! No I/O happens here: a plan is built and validated from plain values, so the
//! CLI, the compat front-ends and tests all produce plans the same way.
//!
//! Modules: `plan` (the plan, its validation, which event loop it allows),
//! `load_model` (closed and rate models, schedules, stages), `shares`
//! (splitting a count over workers or agents), `target` (the URL),
//! `transport` (TCP/Unix, TLS, proxy, HTTP/2, pipelining, `--io`),
//! `targets_file` (`--targets`), `stream_spec` (`--sse`), `header`, `duration`, `address_list`
//! (`--source-addrs`), `connection_policy` (connection lifetimes, DNS
//! choices), `error`, `minimal` (`Plan::minimal`, the plan tests start
//! from). See docs/architecture.md.

mod address_list;
mod connection_policy;
mod duration;
mod error;
mod header;
mod http3;
mod load_model;
mod minimal;
mod plan;
mod shares;
mod stream_spec;
mod target;
mod targets_file;
mod transport;
mod websocket_spec;

pub use address_list::parse_address_list;
pub use connection_policy::{ConnLifetime, DnsMode, DnsPolicy};
pub use duration::{format_duration, parse_duration};
pub use error::{FlagNames, PlanError, Setting};
pub use header::{parse_header, Header};
pub use load_model::{parse_stages, Arrival, LoadModel, Schedule, Stage, DEFAULT_PACE_WINDOW};
pub use plan::{MixEntry, Plan, RequestSpec, StopCondition};
pub use shares::{share_of, shares};
pub use stream_spec::StreamSpec;
pub use target::{Scheme, Target};
pub use targets_file::{parse_targets, weighted_order, TargetBlock};
pub use transport::{
    ClientCert, CompressionSpec, EventLoop, IoBackend, ProxySpec, ResolveOverride, TlsSpec,
    TlsVersion, TransportSpec,
};
pub use websocket_spec::WebSocketSpec;
