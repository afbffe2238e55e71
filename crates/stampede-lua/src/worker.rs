//! One worker thread's script ([`ScriptThread`]): `request()`, `delay()`,
//! `response()` and `thread:stop()` in that thread's own state, each one
//! call into a small Lua function (lua/hooks.lua) that finds the script's
//! global; `response()`'s headers table and body are made here, through
//! LuaJIT's C API, as wrk makes them. The state
//! goes back to its slot when the worker drops this, so `done()` can read
//! the thread's globals (`thread:get`).

use crate::request_count::count_requests;
use crate::state::describe;
use crate::thread_handle::ThreadSlot;
use mlua::{ffi, BString, Function, Lua, String as LuaString, Table, Value};
use stampede_workload::{ResponseView, ScriptError, ScriptThread};
use std::ffi::c_int;
use std::sync::Arc;
use std::time::Duration;

/// The optional hooks a thread's state defines after `init`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hooks {
    pub request: bool,
    pub response: bool,
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

/// A worker's script state, taken from its slot for the run.
pub(crate) struct LuaThread {
    slot: Arc<ThreadSlot>,
    lua: Option<Lua>,
    name: Arc<str>,
    hooks: Hooks,
    fixed: Vec<u8>,
    next_request: Function,
    next_delay: Function,
    on_response: Function,
    /// The last string `request()` returned and how many requests it holds:
    /// a script that returns the same string (pipeline.lua) is parsed once.
    /// LuaJIT interns every string, so while this one is held, the same
    /// bytes are the same object: comparing pointers compares contents.
    last: Option<(LuaString, usize)>,
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
        let (next_request, next_delay, on_response) = lua
            .load(HOOKS)
            .set_name("=stampede hooks")
            .call::<(Function, Function, Function)>(())
            .map_err(fail)?;
        Ok(LuaThread {
            slot,
            lua: Some(lua),
            name,
            hooks,
            fixed,
            next_request,
            next_delay,
            on_response,
            last: None,
        })
    }

    /// A script error during the run: recorded for the run (it stops
    /// every thread) and returned to the engine.
    fn fail(&self, hook: &str, error: &mlua::Error) -> ScriptError {
        self.failed(format!("{}: {hook} failed: {}", self.name, describe(error)))
    }

    fn failed(&self, message: String) -> ScriptError {
        self.slot.fail(&message);
        ScriptError(message)
    }
}

/// wrk's `script_response` arguments, made as wrk makes them in C: the
/// headers as one table (sized for them, so it never grows; a repeated
/// name keeps its last value, as wrk's `lua_rawset`) and the body as a string.
fn response_arguments(lua: &Lua, response: &ResponseView<'_>) -> mlua::Result<(Table, LuaString)> {
    let fields = response.headers;
    let sized = c_int::try_from(fields.len()).unwrap_or(c_int::MAX);
    let body = response.body;
    // SAFETY: exec_raw runs the closure as a protected Lua call on a stack
    // with room for 3 more values (the table, a name and a value; the body
    // is pushed once the name and value are gone), so a Lua error (out of
    // memory) is caught there; every pointer passed with its length comes
    // from a live byte slice, which Lua copies.
    unsafe {
        lua.exec_raw((), |state| {
            ffi::lua_createtable(state, 0, sized);
            for (name, value) in fields {
                ffi::lua_pushlstring(state, name.as_ptr().cast(), name.len());
                ffi::lua_pushlstring(state, value.as_ptr().cast(), value.len());
                ffi::lua_rawset(state, -3);
            }
            ffi::lua_pushlstring(state, body.as_ptr().cast(), body.len());
        })
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
        let request: LuaString = self
            .next_request
            .call(())
            .map_err(|e| self.fail("request()", &e))?;
        let bytes = request.as_bytes();
        out.extend_from_slice(&bytes);
        if let Some((last, count)) = &self.last {
            if last.to_pointer() == request.to_pointer() {
                return Ok(*count);
            }
        }
        let count =
            count_requests(&bytes).map_err(|why| ScriptError(format!("{}: {why}", self.name)))?;
        drop(bytes);
        self.last = Some((request, count));
        Ok(count)
    }

    fn has_delay(&self) -> bool {
        self.hooks.delay
    }

    fn delay(&mut self) -> Result<Duration, ScriptError> {
        let ms: f64 = self
            .next_delay
            .call(())
            .map_err(|e| self.fail("delay()", &e))?;
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
        let (headers, body) =
            response_arguments(lua, response).map_err(|e| self.fail("response()", &e))?;
        self.on_response
            .call::<()>((response.status, headers, body))
            .map_err(|e| self.fail("response()", &e))
    }

    fn stop_requested(&self) -> bool {
        self.slot.stop_requested()
    }
}

impl Drop for LuaThread {
    fn drop(&mut self) {
        self.last = None;
        if let Some(lua) = self.lua.take() {
            self.slot.put(lua);
        }
    }
}
