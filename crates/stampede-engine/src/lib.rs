//! The load engine: runs a [`stampede_plan::Plan`] with one single-threaded
//! event loop per worker thread (thread-per-core, nothing shared on the
//! request path) and returns a [`stampede_metrics::Recording`].

mod connection;
mod engine;
mod error;
pub mod http1;
mod outcome_class;
mod read_buffer;
mod worker;
mod worker_state;

pub use engine::{resolve, run, NoObserver, Observer, StopHandle};
pub use error::EngineError;
pub use worker::SNAPSHOT_INTERVAL;
