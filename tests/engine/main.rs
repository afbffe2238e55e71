//! The load engine end to end through the binary: exact counts, budgets, stop reasons, connection
//! lifetimes, load shapes, the open model and pipelining on every event loop.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod conn_lifetime;
mod conn_lifetime_nginx;
mod engine_targets_and_backoff;
mod load_shapes;
mod open_model_reactors;
mod pipeline_reactors;
mod pipeline_server_close;
mod request_budget;
mod run_counts;
mod run_id;
mod run_lifecycle;
mod stop_reasons;
