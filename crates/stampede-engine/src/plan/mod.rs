//! What one worker is told, built once per run by run/: its share of the
//! load and its messages to the aggregator (worker_plan.rs), the requests
//! in HTTP/2 and HTTP/3 form, the rule of a connection's planned end, and
//! a WebSocket run's upgrade and message (ws_plan.rs).
//! Leaves: nothing here imports a loop or a worker's state.

pub(crate) mod conn_lifetime;
pub(crate) mod h2_request;
pub(crate) mod h3_plan;
pub(crate) mod worker_plan;
pub(crate) mod ws_plan;
