//! wrk's Lua scripting API for stampede: the scripts people
//! wrote for wrk run unchanged. One LuaJIT state per worker thread, plus
//! the setup/done state, as wrk has them; the engine sees only
//! [`stampede_workload::Script`] and [`stampede_workload::ScriptThread`].
//!
//! The flow: [`LoadedScript::load`] (syntax errors, before any
//! connection) → [`LoadedScript::prepare`] (`setup` and `init` per thread)
//! → the engine's workers take [`Script::thread`](stampede_workload::Script::thread)
//! (`request`, `delay`, `response`, `thread:stop`) → [`LuaScript::done`]
//! with the [`RunResult`](stampede_metrics::RunResult).
//!
//! Modules: `state` (making a state, load errors), `busy` (the hook in
//! progress, for a hook that never returns), `wrk_table` (the `wrk`
//! table and `wrk.format`), `addr` (`wrk.lookup`, `wrk.connect`,
//! addresses), `thread_handle` (the thread object), `transfer` (values
//! copied between states), `worker` (a worker's hooks), `raw_call`
//! (their per-request calls through LuaJIT's C API), `request_count`
//! (requests in `request()`'s bytes), `stats` (`done`'s arguments),
//! `output` (`print`), `traceback` (a Lua error's script frames),
//! `script` (the whole flow). The API and the
//! differences from wrk are in docs/lua.md.

mod addr;
mod busy;
mod output;
mod raw_call;
mod request_count;
mod script;
mod state;
mod stats;
mod thread_handle;
mod traceback;
mod transfer;
mod worker;
mod wrk_table;

#[cfg(test)]
mod tests;

pub use addr::CONNECT_PROBE_TIMEOUT;
pub use busy::{Busy, Hook};
pub use output::print_to_stderr;
pub use script::{LoadedScript, LuaScript, ScriptConfig};
pub use state::LoadError;
pub use stats::per_thread_rates;
pub use worker::Hooks;
pub use wrk_table::RequestDefaults;
