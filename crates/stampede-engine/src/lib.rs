//! The load engine: runs a [`stampede_plan::Plan`] with one single-threaded
//! event loop per worker thread (thread-per-core, nothing shared on the
//! request path) and returns a [`stampede_metrics::Recording`].

mod drive;
mod error;
mod exchange;
pub mod http1;
pub mod monitor;
mod net;
mod plan;
mod redirects;
mod run;
mod worker;
mod workload;

pub use run::engine::{
    resolve, run_with, worker_count, Finished, NoObserver, Observer, RunOptions, StopHandle,
};
pub use error::EngineError;
pub use run::limits::{fds_needed, raise_nofile_limit};
pub use worker::request_log::{LoggedRequest, RequestLogOptions, RequestLogReport, RequestSink, RunClock};
pub use net::transport::quic::{offload_notice, udp_offload, UdpOffload};
pub use run::watchdog::{grace as watchdog_grace, Abandoned};
pub use plan::worker_plan::SNAPSHOT_INTERVAL;
pub use workload::{GroupWork, StepWork, WorkloadSpec};
