//! The per-request calls into a worker's Lua state, made through LuaJIT's C
//! API as wrk makes them (`script_request`, `script_response`): the three
//! hooks of lua/hooks.lua and a traceback handler are kept in the registry
//! under integer keys, and each call pushes them, pushes the arguments,
//! `lua_pcall`s and reads the result off the stack. mlua's `Function::call`
//! would do the same with a reference-counted handle allocated for every
//! value it returns (a request's string, a response's table): one Rust
//! allocation per request that this path does not make.

use mlua::{ffi, Function, Lua, RegistryKey, Value};
use stampede_workload::HeaderFields;
use std::cell::Cell;
use std::ffi::c_int;

/// The registry keys of one state's per-request calls.
pub(crate) struct RawHooks {
    traceback: RegistryKey,
    next_request: RegistryKey,
    next_delay: RegistryKey,
    /// The last string `request()` returned, held so that its identity
    /// stays meaningful (LuaJIT interns strings: while it is alive, the
    /// same bytes are the same string).
    last_request: RegistryKey,
    /// lua/reads.lua: which of `response`'s arguments a function reads.
    reads: RegistryKey,
    /// The `response` function last seen (held, so that its identity stays
    /// meaningful) and what it reads ([`ARG_HEADERS`], [`ARG_BODY`], ...).
    last_response: RegistryKey,
    response_reads: Cell<u8>,
    /// The metatable of every `response()` headers table: a name not found
    /// as written is looked up in lowercase, so `headers["X-Token"]` finds
    /// HTTP/2's `x-token` (HTTP/2 sends names in lowercase only).
    header_meta: RegistryKey,
}

/// lowercase lookup for a response's headers table ([`RawHooks::response`]).
const HEADER_META: &str = r#"
local lower, rawget, type = string.lower, rawget, type
return { __index = function(headers, name)
   if type(name) == "string" then
      local low = lower(name)
      if low ~= name then return rawget(headers, low) end
   end
end }
"#;

/// `response`'s arguments, as lua/reads.lua's bits.
const ARG_STATUS: u8 = 1;
const ARG_HEADERS: u8 = 2;
const ARG_BODY: u8 = 4;

/// Stack slots a call uses at most: the handler, the hook, a response's
/// status, table, and a header's name and value being set (3 of them more
/// than a request needs: its string, the last one, a copy).
const STACK_NEEDED: c_int = 8;

/// What a hook call failed with: the Lua error and its traceback.
pub(crate) type CallError = String;

/// The message handler of every call: the error as text with Lua's
/// traceback appended, as mlua's own handler writes it.
unsafe extern "C-unwind" fn traceback(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a message handler, with the error object on
    // top; every push below is preceded by a check that there is room.
    unsafe {
        if ffi::lua_checkstack(state, 2) == 0 {
            return 1;
        }
        let message = ffi::luaL_tolstring(state, -1, std::ptr::null_mut());
        if ffi::lua_checkstack(state, ffi::LUA_TRACEBACK_STACK) != 0 {
            ffi::luaL_traceback(state, state, message, 0);
            ffi::lua_remove(state, -2);
        }
    }
    1
}

/// The text of the error object on top of the stack.
///
/// SAFETY (of the caller): the stack has a value on top.
unsafe fn error_text(state: *mut ffi::lua_State) -> CallError {
    let mut len = 0usize;
    // SAFETY: lua_tolstring reads the top value; a non-string gives null.
    let text = unsafe { ffi::lua_tolstring(state, -1, &mut len) };
    if text.is_null() {
        return "(error object is not a string)".into();
    }
    // SAFETY: Lua gave a pointer to `len` bytes, alive while on the stack.
    let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
    String::from_utf8_lossy(bytes).into_owned()
}

impl RawHooks {
    /// Keeps the three hooks and a traceback handler in `lua`'s registry.
    pub(crate) fn new(
        lua: &Lua,
        next_request: Function,
        next_delay: Function,
        reads: Function,
    ) -> mlua::Result<RawHooks> {
        // SAFETY: `traceback` follows the lua_CFunction contract above.
        let handler = unsafe { lua.create_c_function(traceback) }?;
        Ok(RawHooks {
            traceback: lua.create_registry_value(handler)?,
            next_request: lua.create_registry_value(next_request)?,
            next_delay: lua.create_registry_value(next_delay)?,
            last_request: lua.create_registry_value(Value::Boolean(false))?,
            reads: lua.create_registry_value(reads)?,
            last_response: lua.create_registry_value(Value::Boolean(false))?,
            response_reads: Cell::new(ARG_STATUS | ARG_HEADERS | ARG_BODY),
            header_meta: lua.create_registry_value(
                lua.load(HEADER_META)
                    .set_name("=headers")
                    .eval::<mlua::Table>()?,
            )?,
        })
    }

    /// Pushes the handler and `hook`, then the arguments `push` pushes (it
    /// returns how many), and calls the hook with `results` results; then
    /// `read` sees the stack, and the stack is put back as it was.
    ///
    /// SAFETY (of the caller): `push` and `read` use at most
    /// [`STACK_NEEDED`] slots with the handler and the hook, and pop
    /// nothing they did not push.
    unsafe fn call<T>(
        &self,
        lua: &Lua,
        hook: &RegistryKey,
        push: impl FnOnce(*mut ffi::lua_State) -> c_int,
        results: c_int,
        read: impl FnOnce(*mut ffi::lua_State) -> T,
    ) -> Result<T, CallError> {
        lua.exec_raw_lua(|raw| {
            let state = raw.state();
            // SAFETY: mlua's lock is held (exec_raw_lua) and the stack is
            // checked for the handler, the hook, 3 arguments and the
            // results. Pushing strings and tables outside a protected call
            // can only fail for want of memory, which ends the process (as
            // mlua's own pushes do without a memory limit); the hook runs
            // protected, and the stack is reset to `top` on every way out.
            unsafe {
                let top = ffi::lua_gettop(state);
                if ffi::lua_checkstack(state, STACK_NEEDED) == 0 {
                    return Err("Lua stack overflow".to_string());
                }
                ffi::lua_rawgeti_(state, ffi::LUA_REGISTRYINDEX, self.traceback.id());
                ffi::lua_rawgeti_(state, ffi::LUA_REGISTRYINDEX, hook.id());
                let args = push(state);
                if ffi::lua_pcall(state, args, results, top + 1) != ffi::LUA_OK {
                    let error = error_text(state);
                    ffi::lua_settop(state, top);
                    return Err(error);
                }
                let value = read(state);
                ffi::lua_settop(state, top);
                Ok(value)
            }
        })
    }

    /// `request()` (or the fixed request): its bytes appended to `out`; when
    /// they are not the previous call's, `count` is asked how many requests
    /// they hold (its answer returned), else `last` is.
    pub(crate) fn request(
        &self,
        lua: &Lua,
        out: &mut Vec<u8>,
        count: impl FnOnce(&[u8]) -> Result<usize, String>,
        last: usize,
    ) -> Result<Result<usize, String>, CallError> {
        // SAFETY: no arguments; the one result is read and, when new, copied
        // into the registry slot (lua_rawseti pops the copy it pushes).
        unsafe {
            self.call(
                lua,
                &self.next_request,
                |_| 0,
                1,
                |state| {
                    let mut len = 0usize;
                    // As wrk's script_request reads it: lua_tolstring turns
                    // a number into its text; anything else (nil, a table)
                    // is no string and no bytes, which count() refuses as
                    // wrk's script_verify_request does ("incomplete request").
                    let text = ffi::lua_tolstring(state, -1, &mut len);
                    let bytes: &[u8] = if text.is_null() {
                        &[]
                    } else {
                        std::slice::from_raw_parts(text.cast::<u8>(), len)
                    };
                    out.extend_from_slice(bytes);
                    ffi::lua_rawgeti_(state, ffi::LUA_REGISTRYINDEX, self.last_request.id());
                    let same = ffi::lua_rawequal(state, -1, -2) != 0;
                    ffi::lua_settop(state, -2);
                    if same {
                        return Ok(last);
                    }
                    let n = count(bytes)?;
                    ffi::lua_pushvalue(state, -1);
                    ffi::lua_rawseti_(state, ffi::LUA_REGISTRYINDEX, self.last_request.id());
                    Ok(n)
                },
            )
        }
    }

    /// `delay()`: milliseconds, read as wrk's script_delay reads them
    /// (`lua_tonumber`: nothing, nil or a value that is not a number or a
    /// numeric string is 0).
    pub(crate) fn delay(&self, lua: &Lua) -> Result<f64, CallError> {
        // SAFETY: no arguments; the one result is read as a number.
        unsafe {
            self.call(
                lua,
                &self.next_delay,
                |_| 0,
                1,
                |state| ffi::lua_tonumber(state, -1),
            )
        }
    }

    /// `response(status, headers, body)`: the headers as one table (sized
    /// for them; a repeated name keeps its last value, as wrk's
    /// `lua_rawset`; a name not found as written is looked up in
    /// lowercase) and the body as a string, made as wrk makes them, but
    /// only those the function can read (lua/reads.lua, asked once per
    /// function): `function response(status)` gets neither. The global is
    /// looked up on every call, as wrk does, and called directly (nothing
    /// when it is not a function).
    pub(crate) fn response(
        &self,
        lua: &Lua,
        status: u16,
        headers: &HeaderFields<'_, '_>,
        body: &[u8],
    ) -> Result<(), CallError> {
        lua.exec_raw_lua(|raw| {
            let state = raw.state();
            // SAFETY: mlua's lock is held and the stack is checked for the
            // handler, the function, the last one, reads.lua's call and the
            // 3 arguments with the table's 2 more slots; the stack is reset
            // to `top` on every way out. Every pointer comes with its length
            // from a live slice, which Lua copies. Pushes outside a
            // protected call only fail for want of memory (see `call`).
            unsafe {
                let top = ffi::lua_gettop(state);
                if ffi::lua_checkstack(state, STACK_NEEDED) == 0 {
                    return Err("Lua stack overflow".to_string());
                }
                ffi::lua_rawgeti_(state, ffi::LUA_REGISTRYINDEX, self.traceback.id());
                ffi::lua_getfield_(state, ffi::LUA_GLOBALSINDEX, c"response".as_ptr());
                if ffi::lua_type(state, -1) != ffi::LUA_TFUNCTION {
                    ffi::lua_settop(state, top);
                    return Ok(());
                }
                let reads = self.reads_of_top(state);
                if reads & ARG_STATUS != 0 || reads > ARG_STATUS {
                    ffi::lua_pushinteger(state, ffi::lua_Integer::from(status));
                }
                if reads & ARG_HEADERS != 0 {
                    let sized = c_int::try_from(headers.count()).unwrap_or(c_int::MAX);
                    ffi::lua_createtable(state, 0, sized);
                    headers.for_each(&mut |name, value| {
                        ffi::lua_pushlstring(state, name.as_ptr().cast(), name.len());
                        ffi::lua_pushlstring(state, value.as_ptr().cast(), value.len());
                        ffi::lua_rawset(state, -3);
                    });
                    ffi::lua_rawgeti_(state, ffi::LUA_REGISTRYINDEX, self.header_meta.id());
                    ffi::lua_setmetatable(state, -2);
                } else if reads & ARG_BODY != 0 {
                    ffi::lua_pushnil(state);
                }
                if reads & ARG_BODY != 0 {
                    ffi::lua_pushlstring(state, body.as_ptr().cast(), body.len());
                }
                let args = match reads {
                    r if r & ARG_BODY != 0 => 3,
                    r if r & ARG_HEADERS != 0 => 2,
                    r if r & ARG_STATUS != 0 => 1,
                    _ => 0,
                };
                if ffi::lua_pcall(state, args, 0, top + 1) != ffi::LUA_OK {
                    let error = error_text(state);
                    ffi::lua_settop(state, top);
                    return Err(error);
                }
                ffi::lua_settop(state, top);
                Ok(())
            }
        })
    }

    /// What the function on top of the stack reads: the last answer when
    /// it is the function last seen, else reads.lua's (all on an error).
    ///
    /// SAFETY (of the caller): a function on top, 3 free slots; the stack
    /// is left as it was.
    /// True when the last `response` called reads its `body` argument.
    pub(crate) fn reads_body(&self) -> bool {
        self.response_reads.get() & ARG_BODY != 0
    }

    unsafe fn reads_of_top(&self, state: *mut ffi::lua_State) -> u8 {
        // SAFETY: as the caller promised; each push is popped below.
        unsafe {
            ffi::lua_rawgeti_(state, ffi::LUA_REGISTRYINDEX, self.last_response.id());
            let same = ffi::lua_rawequal(state, -1, -2) != 0;
            ffi::lua_settop(state, -2);
            if same {
                return self.response_reads.get();
            }
            ffi::lua_rawgeti_(state, ffi::LUA_REGISTRYINDEX, self.reads.id());
            ffi::lua_pushvalue(state, -2);
            let all = ARG_STATUS | ARG_HEADERS | ARG_BODY;
            let reads = if ffi::lua_pcall(state, 1, 1, 0) == ffi::LUA_OK {
                u8::try_from(ffi::lua_tointeger(state, -1) & 7).unwrap_or(all)
            } else {
                all
            };
            ffi::lua_settop(state, -2);
            ffi::lua_pushvalue(state, -1);
            ffi::lua_rawseti_(state, ffi::LUA_REGISTRYINDEX, self.last_response.id());
            self.response_reads.set(reads);
            reads
        }
    }
}
