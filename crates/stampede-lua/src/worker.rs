//! One worker thread's script ([`ScriptThread`]): `request()`, `delay()`,
//! `response()` and `thread:stop()` in that thread's own state. The state
//! goes back to its slot when the worker drops this, so `done()` can read
//! the thread's globals (`thread:get`).

use crate::request_count::count_requests;
use crate::state::describe;
use crate::thread_handle::ThreadSlot;
use mlua::{Function, Lua, Table, Value};
use stampede_workload::{ResponseView, ScriptError, ScriptThread};
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

/// A worker's script state, taken from its slot for the run.
pub(crate) struct LuaThread {
    slot: Arc<ThreadSlot>,
    lua: Option<Lua>,
    globals: Table,
    name: Arc<str>,
    hooks: Hooks,
    fixed: Vec<u8>,
    /// The last string `request()` returned and how many requests it holds:
    /// Lua strings are interned, so a script that returns the same request
    /// (pipeline.lua) is counted once, not parsed per call.
    last: Option<(mlua::String, usize)>,
}

impl LuaThread {
    pub(crate) fn new(
        slot: Arc<ThreadSlot>,
        lua: Lua,
        name: Arc<str>,
    ) -> Result<LuaThread, ScriptError> {
        let globals = lua.globals();
        let hooks = Hooks::of(&lua);
        let fail =
            |e: mlua::Error| ScriptError(format!("{name}: wrk.request() failed: {}", describe(&e)));
        let wrk: Table = globals.get("wrk").map_err(fail)?;
        let request: Function = wrk.get("request").map_err(fail)?;
        let fixed = request
            .call::<mlua::String>(())
            .map_err(fail)?
            .as_bytes()
            .to_vec();
        Ok(LuaThread {
            slot,
            lua: Some(lua),
            globals,
            name,
            hooks,
            fixed,
            last: None,
        })
    }

    fn fail(&self, hook: &str, error: &mlua::Error) -> ScriptError {
        ScriptError(format!("{}: {hook} failed: {}", self.name, describe(error)))
    }

    fn request_string(&self) -> mlua::Result<mlua::String> {
        let value = match self.globals.get::<Value>("request")? {
            Value::Function(request) => request.call::<Value>(())?,
            _ => self
                .globals
                .get::<Table>("wrk")?
                .get::<Function>("request")?
                .call::<Value>(())?,
        };
        match value {
            Value::String(s) => Ok(s),
            other => Err(mlua::Error::runtime(format!(
                "request() must return a string, got {}",
                other.type_name()
            ))),
        }
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
        let bytes = self
            .request_string()
            .map_err(|e| self.fail("request()", &e))?;
        out.extend_from_slice(&bytes.as_bytes());
        if let Some((last, count)) = &self.last {
            if last.to_pointer() == bytes.to_pointer() {
                return Ok(*count);
            }
        }
        let count = count_requests(&bytes.as_bytes())
            .map_err(|why| ScriptError(format!("{}: {why}", self.name)))?;
        self.last = Some((bytes, count));
        Ok(count)
    }

    fn has_delay(&self) -> bool {
        self.hooks.delay
    }

    fn delay(&mut self) -> Result<Duration, ScriptError> {
        let call = || -> mlua::Result<f64> {
            let delay: Function = self.globals.get("delay")?;
            // wrk: lua_tonumber, then whole milliseconds.
            Ok(match delay.call::<Value>(())? {
                Value::Integer(i) => i as f64,
                Value::Number(n) => n,
                Value::String(s) => s.to_str()?.trim().parse().unwrap_or(0.0),
                _ => 0.0,
            })
        };
        let ms = call().map_err(|e| self.fail("delay()", &e))?;
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
        let call = || -> mlua::Result<()> {
            let Value::Function(hook) = self.globals.get::<Value>("response")? else {
                return Ok(());
            };
            let lua = self
                .lua
                .as_ref()
                .ok_or_else(|| mlua::Error::runtime("state gone"))?;
            let headers = lua.create_table_with_capacity(0, response.headers.len())?;
            for (name, value) in response.headers {
                headers.raw_set(lua.create_string(name)?, lua.create_string(value)?)?;
            }
            let body = lua.create_string(response.body)?;
            hook.call::<()>((response.status, headers, body))
        };
        call().map_err(|e| self.fail("response()", &e))
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
