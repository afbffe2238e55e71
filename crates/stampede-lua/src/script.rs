//! A script from file to finished run, in wrk's order: [`LoadedScript::load`]
//! reads the file and runs it in the setup state (a syntax error stops
//! here, before any connection); [`LoadedScript::prepare`] makes each
//! thread's state, calls `setup(thread)` in the setup state and `init(args)`
//! in the thread's own state, thread by thread, and pre-formats each
//! thread's request; the [`LuaScript`] it returns is the engine's
//! [`Script`]; after the run, [`LuaScript::done`] calls `done(summary,
//! latency, requests)` in the setup state.

use crate::busy::{Busy, Hook};
use crate::state::{describe, new_state, LoadError, Source};
use crate::stats::{per_thread_rates, WrkStats, WrkSummary};
use crate::thread_handle::{RunShared, ThreadHandle, ThreadSlot};
use crate::worker::{Hooks, LuaThread};
use crate::wrk_table::{RequestDefaults, UrlParts};
use mlua::{Function, Lua, Table, Value};
use stampede_metrics::RunResult;
use stampede_workload::{Script, ScriptError, ScriptThread};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What a script is run with: wrk's `-s FILE`, the URL, the request the
/// `wrk` table starts with (the `-H` lines) and the words after `--`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptConfig {
    /// The script file (`-s FILE`).
    pub path: PathBuf,
    /// The URL under load; the `wrk` table's scheme, host, port and path.
    pub url: String,
    /// The request the `wrk` table starts with.
    pub request: RequestDefaults,
    /// The words after `--`: `init`'s `args[1]`, `args[2]`... (`args[0]` is the URL, as in wrk).
    pub args: Vec<String>,
}

/// A script read and run once in its setup state.
pub struct LoadedScript {
    source: Source,
    args: Vec<String>,
    url: String,
    setup: Lua,
    shared: Arc<RunShared>,
}

impl std::fmt::Debug for LoadedScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedScript")
            .field("name", &self.source.name)
            .finish_non_exhaustive()
    }
}

impl LoadedScript {
    /// Reads `config.path` and runs it in the setup state.
    pub fn load(config: &ScriptConfig) -> Result<LoadedScript, LoadError> {
        let code = std::fs::read(&config.path).map_err(|e| {
            LoadError::Read(format!("cannot read script {}: {e}", config.path.display()))
        })?;
        LoadedScript::from_code(config, code)
    }

    /// As [`LoadedScript::load`], with the script's text given.
    pub fn from_code(config: &ScriptConfig, code: Vec<u8>) -> Result<LoadedScript, LoadError> {
        let url = UrlParts::parse(&config.url)
            .ok_or_else(|| LoadError::Url(format!("invalid URL: {}", config.url)))?;
        let source = Source {
            name: config.path.display().to_string(),
            code,
            url,
            request: config.request.clone(),
        };
        let setup = new_state(&source)?;
        Ok(LoadedScript {
            source,
            args: config.args.clone(),
            url: config.url.clone(),
            setup,
            shared: Arc::default(),
        })
    }

    /// The hook the main thread is in (`setup`, `init`; later `done`):
    /// what a watch on a hook that never returns reads.
    pub fn main_busy(&self) -> Arc<Busy> {
        self.shared.main_busy.clone()
    }

    /// The hooks the file defines at its top level (`init` may still add some).
    pub fn hooks(&self) -> Hooks {
        Hooks::of(&self.setup)
    }

    /// Makes `threads` thread states and runs `setup` and `init` for each,
    /// `addr` being the resolved server address every thread starts with.
    pub fn prepare(self, threads: usize, addr: SocketAddr) -> Result<LuaScript, ScriptError> {
        let name: Arc<str> = Arc::from(self.source.name.as_str());
        let fail = |hook: &str, e: &mlua::Error| {
            ScriptError(format!("{name}: {hook} failed: {}", describe(e)))
        };
        let mut slots = Vec::with_capacity(threads);
        let shared = self.shared.clone();
        for index in 0..threads {
            let lua = new_state(&self.source).map_err(|e| ScriptError(e.to_string()))?;
            let slot = Arc::new(ThreadSlot::new(index, addr, shared.clone()));
            let wrk: Table = lua.globals().get("wrk").map_err(|e| fail("wrk", &e))?;
            wrk.set(
                "thread",
                ThreadHandle {
                    slot: slot.clone(),
                    own: true,
                },
            )
            .map_err(|e| fail("wrk", &e))?;
            slot.put(lua);
            if let Value::Function(setup) = self
                .setup
                .globals()
                .get::<Value>("setup")
                .map_err(|e| fail("setup()", &e))?
            {
                let _busy = shared.main_busy.enter(Hook::Setup);
                setup
                    .call::<()>(ThreadHandle {
                        slot: slot.clone(),
                        own: false,
                    })
                    .map_err(|e| fail("setup()", &e))?;
            }
            let lua = slot.take().ok_or_else(|| {
                ScriptError(format!("{name}: thread {} state missing", index + 1))
            })?;
            let busy = shared.main_busy.enter(Hook::Init);
            self.init(&lua, &wrk).map_err(|e| fail("init()", &e))?;
            drop(busy);
            slot.put(lua);
            slots.push(slot);
        }
        Ok(LuaScript {
            name,
            setup: Mutex::new(self.setup),
            slots,
            shared,
        })
    }

    /// wrk.init: the Host header ([`DEFAULT_HOST`]), `init(args)`, then the
    /// request formatted once (`wrk.request()` returns it).
    fn init(&self, lua: &Lua, wrk: &Table) -> mlua::Result<()> {
        lua.load(DEFAULT_HOST)
            .set_name("=wrk.init")
            .call::<()>(wrk.clone())?;
        if let Value::Function(init) = lua.globals().get::<Value>("init")? {
            let args = lua.create_table()?;
            args.raw_set(0, self.url.as_str())?;
            for (i, arg) in self.args.iter().enumerate() {
                args.raw_set(i + 1, arg.as_str())?;
            }
            init.call::<()>(args)?;
        }
        let format: Function = wrk.get("format")?;
        let request: mlua::String = format.call(())?;
        wrk.set(
            "request",
            lua.create_function(move |_, ()| Ok(request.clone()))?,
        )
    }
}

/// wrk.lua's `wrk.init` before `init(args)`, as written there: when
/// `wrk.headers.Host` is nil or false, `wrk.host` and `wrk.port` as they are
/// now (the file may have changed them), IPv6 in brackets.
const DEFAULT_HOST: &str = r#"
local wrk = ...
if not wrk.headers["Host"] then
   local host = wrk.host
   local port = wrk.port
   host = host:find(":") and ("[" .. host .. "]") or host
   host = port and (host .. ":" .. port) or host
   wrk.headers["Host"] = host
end
"#;

/// A prepared script: every thread's state after `init`, and the setup
/// state for `done`. Shared by the workers of a run.
pub struct LuaScript {
    name: Arc<str>,
    setup: Mutex<Lua>,
    slots: Vec<Arc<ThreadSlot>>,
    shared: Arc<RunShared>,
}

impl std::fmt::Debug for LuaScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaScript")
            .field("name", &self.name)
            .field("threads", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl LuaScript {
    /// The script's name in messages (its path as given).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The hook the main thread is in (`done` after the run).
    pub fn main_busy(&self) -> Arc<Busy> {
        self.shared.main_busy.clone()
    }

    /// How many thread states were prepared.
    pub fn threads(&self) -> usize {
        self.slots.len()
    }

    /// The hooks thread `index` defines after `init` (all default when out of range
    /// or while a worker holds that thread).
    pub fn hooks(&self, index: usize) -> Hooks {
        let Some(slot) = self.slots.get(index) else {
            return Hooks::default();
        };
        match slot.take() {
            Some(lua) => {
                let hooks = Hooks::of(&lua);
                slot.put(lua);
                hooks
            }
            None => Hooks::default(),
        }
    }

    /// True when `response()` read a body cut at `--capture-max` during
    /// the run (the warning was printed then).
    pub fn body_was_cut(&self) -> bool {
        self.shared
            .body_cut
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The first script error of the run (`request()`, `response()`,
    /// `delay()`, or bytes that are not a request), with its traceback: it
    /// stopped every thread.
    pub fn failure(&self) -> Option<&str> {
        self.shared.failure.get().map(String::as_str)
    }

    /// True when the setup state defines `done`.
    pub fn has_done(&self) -> bool {
        let setup = self.setup.lock().unwrap_or_else(|p| p.into_inner());
        matches!(setup.globals().get::<Value>("done"), Ok(Value::Function(_)))
    }

    /// True once every thread called `thread:stop()`: the run can end.
    pub fn all_stopped(&self) -> bool {
        !self.slots.is_empty() && self.slots.iter().all(|slot| slot.stop_requested())
    }

    /// Calls `done(summary, latency, requests)` with the finished run; the
    /// request rates are one sample per second ([`per_thread_rates`]).
    /// Call it after the workers dropped their [`ScriptThread`]s.
    pub fn done(&self, result: &RunResult) -> Result<(), ScriptError> {
        self.done_with_rates(result, &per_thread_rates(result))
    }

    /// As [`LuaScript::done`], with the per-thread request-rate samples
    /// given (e.g. `stampede wrk`'s 100 ms samples, as wrk records them).
    pub fn done_with_rates(&self, result: &RunResult, rates: &[f64]) -> Result<(), ScriptError> {
        let fail =
            |e: &mlua::Error| ScriptError(format!("{}: done() failed: {}", self.name, describe(e)));
        let latency = result
            .latency_histogram()
            .map(|h| WrkStats::of_histogram(&h))
            .map_err(|e| ScriptError(format!("{}: done(): {e}", self.name)))?;
        let setup = self.setup.lock().unwrap_or_else(|p| p.into_inner());
        let Value::Function(done) = setup.globals().get::<Value>("done").map_err(|e| fail(&e))?
        else {
            return Ok(());
        };
        let summary = summary_table(&setup, &WrkSummary::of(result)).map_err(|e| fail(&e))?;
        let _busy = self.shared.main_busy.enter(Hook::Done);
        done.call::<()>((summary, latency, WrkStats::of_rates(rates)))
            .map_err(|e| fail(&e))
    }
}

#[cfg(test)]
impl LuaScript {
    /// Evaluates `code` in the setup state (what `done` left there).
    pub(crate) fn eval_in_setup<T: mlua::FromLua>(&self, code: &str) -> mlua::Result<T> {
        let setup = self.setup.lock().unwrap_or_else(|p| p.into_inner());
        setup.load(code).eval()
    }

    /// Evaluates `code` in thread `index`'s state (after its worker let go).
    pub(crate) fn eval_in_thread<T: mlua::FromLua>(
        &self,
        index: usize,
        code: &str,
    ) -> mlua::Result<T> {
        let slot = &self.slots[index];
        let lua = slot
            .take()
            .ok_or_else(|| mlua::Error::runtime("thread running"))?;
        let value = lua.load(code).eval();
        slot.put(lua);
        value
    }
}

fn summary_table(lua: &Lua, summary: &WrkSummary) -> mlua::Result<Table> {
    let errors = lua.create_table()?;
    let e = &summary.errors;
    for (name, n) in [
        ("connect", e.connect),
        ("read", e.read),
        ("write", e.write),
        ("status", e.status),
        ("timeout", e.timeout),
    ] {
        errors.set(name, n)?;
    }
    let table = lua.create_table()?;
    table.set("duration", summary.duration)?;
    table.set("requests", summary.requests)?;
    table.set("bytes", summary.bytes)?;
    table.set("errors", errors)?;
    Ok(table)
}

impl Script for LuaScript {
    fn thread(&self, index: usize) -> Result<Box<dyn ScriptThread>, ScriptError> {
        let slot = self.slots.get(index).ok_or_else(|| {
            ScriptError(format!(
                "{}: no thread {} (prepared {})",
                self.name,
                index + 1,
                self.slots.len()
            ))
        })?;
        let lua = slot.take().ok_or_else(|| {
            ScriptError(format!(
                "{}: thread {} is already running",
                self.name,
                index + 1
            ))
        })?;
        Ok(Box::new(LuaThread::new(
            slot.clone(),
            lua,
            self.name.clone(),
        )?))
    }

    fn thread_addr(&self, index: usize) -> Option<SocketAddr> {
        self.slots.get(index)?.chosen_addr()
    }

    fn busy_in(&self, index: usize) -> Option<String> {
        let hook = self.slots.get(index)?.busy.hook()?;
        Some(format!("the Lua hook {}", hook.call()))
    }

    fn stopped_every_thread(&self) -> bool {
        self.failure().is_none() && self.all_stopped()
    }
}
