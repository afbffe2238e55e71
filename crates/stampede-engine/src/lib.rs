//! The load engine: runs a [`stampede_plan::Plan`] with one single-threaded
//! event loop per worker thread (thread-per-core, nothing shared on the
//! request path) and returns a [`stampede_metrics::Recording`].
//!
//! # Layout
//!
//! One folder a layer; each imports only the layers below it in this table
//! (tests/module_cycles.rs fails on a cycle). One request's path:
//! `plan/` → `drive/` → `exchange/` → `worker/`'s recorder.
//!
//! | folder | owns |
//! | --- | --- |
//! | `run/` | `run_with`: prepare, split the plan over worker threads, spawn them, merge their snapshots, finish; the watchdog, the no-connection give-up, the fd limit |
//! | `drive/` | the event loops, only I/O and waiting: the worker thread, tokio's HTTP/1.1 slot and load models, `h2/`, `h3/`, `reactor/` (epoll, io_uring) |
//! | `exchange/` | the I/O-free books of one HTTP/1.1 exchange: the response reader, a request's clocks and retry, a connection's life, and the reactors' `Ledger`; the tokio slot keeps the same books |
//! | `worker/` | what each worker keeps, whatever its loop: what its connections share (`ConnectionContext`) and the booking of a request's end, state and recorder, housekeeping, pacer, connect backoff, group start, request log |
//! | `plan/` | what a worker is told, built once per run: its share, the HTTP/2 and HTTP/3 request forms, the connection lifetime |
//! | `redirects/` | following redirects: hops, `Location`, other origins, which connection a slot uses |
//! | `net/` | reaching the target: DNS, source addresses, `transport/` (TCP, Unix, proxy, TLS, QUIC), error classes, TLS hints |
//! | `workload/` | templates, feeders, checks, extractors and scenario steps, one session per virtual user |
//! | `http1/` | HTTP/1.x: requests encoded once, the response framer, content codings |
//! | `stream/` | what `--sse` watches of a streamed body over HTTP/1.1 and HTTP/2: the event-stream parser, a stream's clocks and counts, the reconnection's rules |
//! | `monitor/` | the process monitor: the servers' and stampede's CPU and memory from /proc |
//!
//! `error.rs` holds the engine's own failures ([`EngineError`]).

mod drive;
mod error;
mod exchange;
pub mod http1;
pub mod monitor;
mod net;
mod plan;
mod redirects;
mod run;
mod stream;
mod worker;
mod workload;

pub use error::EngineError;
pub use net::transport::quic::{offload_notice, udp_offload, UdpOffload};
pub use plan::worker_plan::SNAPSHOT_INTERVAL;
pub use run::engine::{
    resolve, run_with, worker_count, Finished, IntervalLog, NoObserver, Observer, RunOptions,
    StopHandle,
};
pub use run::limits::{fds_needed, raise_nofile_limit};
pub use run::watchdog::{grace as watchdog_grace, Abandoned};
pub use worker::request_log::{
    LoggedRequest, RequestLogOptions, RequestLogReport, RequestSink, RunClock,
};
pub use workload::{GroupWork, StepWork, WorkloadSpec};
