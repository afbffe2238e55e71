//! One run, `run_with` (engine.rs): resolve the target, split the plan
//! over worker threads, spawn them, and merge their snapshots into one
//! `Recording`. Also the aggregator's watchdog, the give-up when no
//! connection opens, and the open-file limit.

pub(crate) mod engine;
pub(crate) mod limits;
pub(crate) mod no_connection;
pub(crate) mod watchdog;
