//! One run, `run_with` (engine.rs): prepare what the workers share
//! (prepare.rs), split the plan over worker threads (split.rs), spawn
//! them, merge their snapshots (engine.rs `aggregate`) and make the
//! finished run (finish.rs). Also the aggregator's watchdog, the give-up when no
//! connection opens, and the open-file limit.

pub(crate) mod engine;
pub(crate) mod finish;
pub(crate) mod limits;
pub(crate) mod no_connection;
pub(crate) mod options;
pub(crate) mod prepare;
pub(crate) mod split;
pub(crate) mod watchdog;
