//! One worker thread's script ([`ScriptThread`]): `request()`, `delay()`,
//! `response()` and `thread:stop()` in that thread's own state; `request()`
//! and `delay()` are each one call into a small Lua function
//! (lua/hooks.lua) that finds the script's global, `response` is called
//! directly with its headers table and body made here, through LuaJIT's C
//! API, as wrk makes them, but only those it reads (lua/reads.lua). The state
//! goes back to its slot when the worker drops this, so `done()` can read
//! the thread's globals (`thread:get`).

use crate::busy::Hook;
use crate::raw_call::RawHooks;
use crate::request_count::count_requests;
use crate::state::describe;
use crate::thread_handle::ThreadSlot;
use mlua::{BString, Function, Lua, Table, Value};
use stampede_workload::{ResponseView, ScriptError, ScriptThread};
use std::sync::Arc;
use std::time::Duration;

/// The optional hooks a thread's state defines after `init`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hooks {
    /// `request()` is defined: it makes each request.
    pub request: bool,
    /// `response()` is defined: each response is read and passed to it.
    pub response: bool,
    /// `delay()` is defined: it sets the pause before each request.
    pub delay: bool,
}

impl Hooks {
    pub(crate) fn of(lua: &Lua) -> Hooks {
        let is_function =
            |name: &str| matches!(lua.globals().get::<Value>(name), Ok(Value::Function(_)));
        Hooks {
            request: is_function("request"),
            response: is_function("response"),
            delay: is_function("delay"),
        }
    }
}

/// The per-request calls, in Lua (lua/hooks.lua).
const HOOKS: &str = include_str!("../lua/hooks.lua");

/// Which arguments a `response` function reads (lua/reads.lua).
pub(crate) const READS: &str = include_str!("../lua/reads.lua");

/// A worker's script state, taken from its slot for the run.
pub(crate) struct LuaThread {
    slot: Arc<ThreadSlot>,
    lua: Option<Lua>,
    name: Arc<str>,
    hooks: Hooks,
    fixed: Vec<u8>,
    /// The per-request calls (raw_call.rs).
    raw: RawHooks,
    /// How many requests the last bytes `request()` returned hold: a script
    /// that returns the same string (pipeline.lua) is parsed once.
    last_count: usize,
}

impl LuaThread {
    pub(crate) fn new(
        slot: Arc<ThreadSlot>,
        lua: Lua,
        name: Arc<str>,
    ) -> Result<LuaThread, ScriptError> {
        let hooks = Hooks::of(&lua);
        let fail = |e: mlua::Error| ScriptError(format!("{name}: {}", describe(&e)));
        let wrk: Table = lua.globals().get("wrk").map_err(fail)?;
        let request: Function = wrk.get("request").map_err(fail)?;
        let fixed = request.call::<BString>(()).map_err(fail)?.into();
        let (next_request, next_delay) = lua
            .load(HOOKS)
            .set_name("=stampede hooks")
            .call::<(Function, Function)>(())
            .map_err(fail)?;
        let reads = lua
            .load(READS)
            .set_name("=stampede reads")
            .call::<Function>(())
            .map_err(fail)?;
        let raw = RawHooks::new(&lua, next_request, next_delay, reads).map_err(fail)?;
        Ok(LuaThread {
            slot,
            lua: Some(lua),
            name,
            hooks,
            fixed,
            raw,
            last_count: 1,
        })
    }

    /// A script error during the run: recorded for the run (it stops
    /// every thread) and returned to the engine.
    fn fail(&self, hook: &str, error: &str) -> ScriptError {
        let error = crate::traceback::tidy(error);
        self.failed(format!("{}: {hook} failed: {error}", self.name))
    }

    fn failed(&self, message: String) -> ScriptError {
        self.slot.fail(&message);
        ScriptError(message)
    }
}

impl ScriptThread for LuaThread {
    fn builds_requests(&self) -> bool {
        self.hooks.request
    }

    fn fixed_request(&mut self) -> Result<Vec<u8>, ScriptError> {
        Ok(self.fixed.clone())
    }

    fn request(&mut self, out: &mut Vec<u8>) -> Result<usize, ScriptError> {
        let Some(lua) = self.lua.as_ref() else {
            return Err(ScriptError(format!("{}: no state", self.name)));
        };
        let busy = self.slot.busy.enter(Hook::Request);
        let counted = self.raw.request(lua, out, count_requests, self.last_count);
        drop(busy);
        let counted = counted.map_err(|e: String| self.fail("request()", &e))?;
        // Bytes that are no HTTP request end the run as a runtime error
        // does (the failure slot: one block, exit 2), not this thread only.
        let count = counted.map_err(|why| self.failed(format!("{}: {why}", self.name)))?;
        self.last_count = count;
        Ok(count)
    }

    fn has_delay(&self) -> bool {
        self.hooks.delay
    }

    fn delay(&mut self) -> Result<Duration, ScriptError> {
        let Some(lua) = self.lua.as_ref() else {
            return Ok(Duration::ZERO);
        };
        let busy = self.slot.busy.enter(Hook::Delay);
        let ms = self.raw.delay(lua);
        drop(busy);
        let ms = ms.map_err(|e: String| self.fail("delay()", &e))?;
        // wrk: whole milliseconds; nothing for a negative or NaN delay.
        let ms = if ms.is_finite() && ms > 0.0 {
            ms.trunc()
        } else {
            0.0
        };
        Ok(Duration::from_millis(ms.min(u64::MAX as f64) as u64))
    }

    fn wants_responses(&self) -> bool {
        self.hooks.response
    }

    fn response(&mut self, response: &ResponseView<'_>) -> Result<(), ScriptError> {
        let Some(lua) = self.lua.as_ref() else {
            return Ok(());
        };
        let busy = self.slot.busy.enter(Hook::Response);
        let done = (self.raw).response(lua, response.status, &response.fields(), response.body);
        drop(busy);
        done.map_err(|e: String| self.fail("response()", &e))?;
        // wrk hands response() the whole body; stampede keeps at most
        // --capture-max of it (the engine's capture): say so once per run
        // when a body the function reads was cut (the view's body_size is
        // the framed length, the body what was kept).
        let kept = response.body.len() as u64;
        if kept < response.body_size && self.raw.reads_body() && self.slot.first_cut_body() {
            eprintln!(
                "stampede: warning: {}: response() got the first {kept} bytes of a {}-byte body (bodies are kept up to --capture-max, 64KiB by default; wrk gives the whole body): raise it with --capture-max SIZE",
                self.name, response.body_size
            );
        }
        Ok(())
    }

    fn stop_requested(&self) -> bool {
        self.slot.stop_requested()
    }
}

impl Drop for LuaThread {
    fn drop(&mut self) {
        if let Some(lua) = self.lua.take() {
            self.slot.put(lua);
        }
    }
}
