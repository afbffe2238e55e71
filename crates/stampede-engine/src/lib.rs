//! The load engine: runs a [`stampede_plan::Plan`] with one single-threaded
//! event loop per worker thread (thread-per-core, nothing shared on the
//! request path) and returns a [`stampede_metrics::Recording`].

mod drive;
mod engine;
mod error;
mod exchange;
pub mod http1;
mod limits;
pub mod monitor;
mod net;
mod no_connection;
mod plan;
mod redirects;
mod watchdog;
mod worker;
mod workload;

pub use engine::{
    resolve, run_with, worker_count, Finished, NoObserver, Observer, RunOptions, StopHandle,
};
pub use error::EngineError;
pub use limits::{fds_needed, raise_nofile_limit};
pub use worker::request_log::{LoggedRequest, RequestLogOptions, RequestLogReport, RequestSink, RunClock};
pub use net::transport::quic::{offload_notice, udp_offload, UdpOffload};
pub use watchdog::{grace as watchdog_grace, Abandoned};
pub use plan::worker_plan::SNAPSHOT_INTERVAL;
pub use workload::{GroupWork, StepWork, WorkloadSpec};
