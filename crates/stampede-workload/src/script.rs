//! The engine's hook for scripted workloads (wrk's Lua scripts):
//! what a worker thread asks of its script for each request and response.
//! The engine knows only these traits; crates/stampede-lua implements them.
//!
//! One [`ScriptThread`] per worker thread (never shared between threads, so
//! it need not be `Send`); the [`Script`] that makes them is shared by all.

use crate::response::ResponseView;
use std::net::SocketAddr;
use std::time::Duration;

/// A script failed at run time (a Lua error in `request()` or
/// `response()`): the message names the script and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(pub String);

/// A loaded script, shared by every worker of a run.
pub trait Script: Send + Sync + std::fmt::Debug {
    /// The script state of worker `index` (wrk's per-thread state, after
    /// `setup` and `init` ran). Called on the worker's own thread.
    fn thread(&self, index: usize) -> Result<Box<dyn ScriptThread>, ScriptError>;
    /// The address worker `index` connects to, when `setup` set `thread.addr`.
    fn thread_addr(&self, _index: usize) -> Option<SocketAddr> {
        None
    }
    /// What worker `index` is running in the script right now, for the
    /// warning about a worker that never returned (`the Lua hook
    /// request()`); None when it is not in the script.
    fn busy_in(&self, _index: usize) -> Option<String> {
        None
    }
    /// True when every thread asked to stop (wrk's `thread:stop()`) and
    /// none failed: the run ended because the script said so
    /// (`stop_reason: "script_stopped"`).
    fn stopped_every_thread(&self) -> bool {
        false
    }
}

/// What one worker thread's script does per request.
pub trait ScriptThread {
    /// True when the script builds each request (wrk's `request()`); false:
    /// the engine sends [`ScriptThread::fixed_request`] every time.
    fn builds_requests(&self) -> bool;
    /// The request sent when the script builds none: `wrk.request()` with
    /// the `wrk` table as `init` left it (wrk computes it once per thread).
    fn fixed_request(&mut self) -> Result<Vec<u8>, ScriptError>;
    /// Appends the next request's bytes to `out` (cleared by the caller);
    /// returns how many HTTP requests the bytes hold (wrk's `request()` may
    /// return several, pipelined), at least 1.
    fn request(&mut self, out: &mut Vec<u8>) -> Result<usize, ScriptError>;
    /// True when the script defines `delay()`.
    fn has_delay(&self) -> bool;
    /// How long to wait before the next request on this connection.
    fn delay(&mut self) -> Result<Duration, ScriptError>;
    /// True when the script defines `response()`: the engine then keeps
    /// each response's headers and body for it.
    fn wants_responses(&self) -> bool;
    /// wrk's `response(status, headers, body)`.
    fn response(&mut self, response: &ResponseView<'_>) -> Result<(), ScriptError>;
    /// True once the script called `thread:stop()`: the worker stops.
    fn stop_requested(&self) -> bool;
}
