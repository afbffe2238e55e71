//! wrk's thread object: `thread.addr` (get and set), `thread:get(name)`,
//! `thread:set(name, value)` (a global of that thread's state, copied
//! between states) and `thread:stop()`.
//!
//! Each worker's state lives in its [`ThreadSlot`] while the worker is not
//! running (during setup, init, and after the run for `done`); the worker
//! takes it out for the run and puts it back when it ends. The setup
//! state's handles reach the state through the slot; the handle a thread
//! has of itself (`wrk.thread`) works on its own state directly.

use crate::addr::LuaAddr;
use crate::busy::Busy;
use crate::transfer::Transfer;
use mlua::{
    Function, Lua, MetaMethod, UserData, UserDataFields, UserDataMethods, UserDataRef, Value,
};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Where the server address of a thread stands.
#[derive(Debug, Clone, Copy)]
struct AddrChoice {
    addr: SocketAddr,
    /// True once a script assigned `thread.addr`.
    chosen: bool,
}

/// What every thread of a run shares: the first script error during the
/// run, which stops them all (the run ends with that error), and the hook
/// the main thread runs.
#[derive(Debug, Default)]
pub(crate) struct RunShared {
    pub failure: OnceLock<String>,
    /// The hook the main thread is in: `setup`, `init` (before the run)
    /// or `done` (after it).
    pub main_busy: Arc<Busy>,
    /// Set the first time `response()` read a body cut at `--capture-max`
    /// (the run's one warning is printed then).
    pub body_cut: AtomicBool,
}

/// What the setup state, the done state and a worker share of one thread.
#[derive(Debug)]
pub(crate) struct ThreadSlot {
    pub index: usize,
    state: Mutex<Option<Lua>>,
    addr: Mutex<AddrChoice>,
    stop: AtomicBool,
    shared: Arc<RunShared>,
    /// The hook the worker is in during the run.
    pub busy: Busy,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind: keep going.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ThreadSlot {
    pub(crate) fn new(index: usize, addr: SocketAddr, shared: Arc<RunShared>) -> ThreadSlot {
        ThreadSlot {
            index,
            state: Mutex::new(None),
            addr: Mutex::new(AddrChoice {
                addr,
                chosen: false,
            }),
            stop: AtomicBool::new(false),
            shared,
            busy: Busy::default(),
        }
    }

    /// Records a script error during the run (the first one is kept): every
    /// thread then stops.
    pub(crate) fn fail(&self, message: &str) {
        let _ = self.shared.failure.set(message.to_string());
    }

    /// True the first time in the run a thread reports a cut body.
    pub(crate) fn first_cut_body(&self) -> bool {
        let cut = &self.shared.body_cut;
        !cut.load(Ordering::Relaxed) && !cut.swap(true, Ordering::Relaxed)
    }

    /// Puts the thread's state (back) in the slot.
    pub(crate) fn put(&self, lua: Lua) {
        *lock(&self.state) = Some(lua);
    }

    /// Takes the thread's state out; None while a worker holds it.
    pub(crate) fn take(&self) -> Option<Lua> {
        lock(&self.state).take()
    }

    /// The address a script chose with `thread.addr = ...`.
    pub(crate) fn chosen_addr(&self) -> Option<SocketAddr> {
        let choice = *lock(&self.addr);
        choice.chosen.then_some(choice.addr)
    }

    /// `thread:stop()` was called, or some thread's script failed.
    pub(crate) fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.shared.failure.get().is_some()
    }

    /// Runs `f` on the thread's state, wherever the caller is.
    fn with_state<R>(
        &self,
        own: Option<&Lua>,
        f: impl FnOnce(&Lua) -> mlua::Result<R>,
    ) -> mlua::Result<R> {
        if let Some(lua) = own {
            return f(lua);
        }
        let state = lock(&self.state);
        match state.as_ref() {
            Some(lua) => f(lua),
            None => Err(mlua::Error::runtime(format!(
                "thread {} is running: thread:get and thread:set work in setup() and done()",
                self.index + 1
            ))),
        }
    }
}

/// `thread.KEY = value`: only `addr`, and only an address (`wrk.lookup`'s,
/// or a thread's `addr`); errors at level 2, the script's assignment.
const NEWINDEX: &str = r#"
local is_addr, set_addr, error = ...
local tostring, type = tostring, type
return function(thread, key, value)
   if key ~= "addr" then
      error("thread." .. tostring(key) .. " cannot be set (thread:set(name, value) sets a global of the thread)", 2)
   end
   if not is_addr(value) then
      error("thread.addr must be an address from wrk.lookup(), got " .. type(value), 2)
   end
   set_addr(thread, value)
end
"#;

/// The thread userdata. `own` is true for `wrk.thread` in the thread's own state.
#[derive(Debug, Clone)]
pub(crate) struct ThreadHandle {
    pub slot: Arc<ThreadSlot>,
    pub own: bool,
}

impl UserData for ThreadHandle {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("addr", |_, this| Ok(LuaAddr(lock(&this.slot.addr).addr)));
        // Assignments go through Lua (NEWINDEX): a wrong one is one plain
        // Lua error at the script's line, not mlua's wrapped argument error.
        fields.add_meta_field_with(MetaMethod::NewIndex, |lua| {
            let is_addr = lua.create_function(|_, value: Value| {
                Ok(matches!(&value, Value::UserData(data) if data.is::<LuaAddr>()))
            })?;
            let set_addr =
                lua.create_function(|_, (this, addr): (UserDataRef<ThreadHandle>, LuaAddr)| {
                    *lock(&this.slot.addr) = AddrChoice {
                        addr: addr.0,
                        chosen: true,
                    };
                    Ok(())
                })?;
            let error: Function = lua.globals().get("error")?;
            lua.load(NEWINDEX)
                .set_name("=stampede thread")
                .call::<Function>((is_addr, set_addr, error))
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("get", |lua, this, name: String| {
            let own = this.own.then_some(lua);
            let value = this.slot.with_state(own, |state| {
                Transfer::from_lua(&state.globals().get::<Value>(name.as_str())?)
            })?;
            value.into_lua(lua)
        });
        methods.add_method("set", |lua, this, (name, value): (String, Value)| {
            let value = Transfer::from_lua(&value)?;
            let own = this.own.then_some(lua);
            this.slot.with_state(own, |state| {
                let value = value.into_lua(state)?;
                state.globals().set(name.as_str(), value)
            })
        });
        methods.add_method("stop", |_, this, ()| {
            this.slot.stop.store(true, Ordering::Relaxed);
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_get_reach_the_threads_state_through_the_slot() {
        let slot = Arc::new(ThreadSlot::new(
            0,
            "127.0.0.1:80".parse().unwrap(),
            Arc::default(),
        ));
        let worker = Lua::new();
        worker.load("counter = 41").exec().unwrap();
        slot.put(worker);
        let setup = Lua::new();
        setup
            .globals()
            .set(
                "t",
                ThreadHandle {
                    slot: slot.clone(),
                    own: false,
                },
            )
            .unwrap();
        setup.load(r#"t:set("id", { n = 7 })"#).exec().unwrap();
        let worker = slot.take().unwrap();
        let id: i64 = worker
            .load("counter = counter + 1 return id.n")
            .eval()
            .unwrap();
        assert_eq!(id, 7);
        // While the worker holds its state, the setup side cannot read it.
        let err = setup
            .load(r#"return t:get("counter")"#)
            .exec()
            .unwrap_err()
            .to_string();
        assert!(err.contains("thread 1 is running"), "{err}");
        slot.put(worker);
        let counter: i64 = setup.load(r#"return t:get("counter")"#).eval().unwrap();
        assert_eq!(counter, 42);
    }

    #[test]
    fn addr_and_stop() {
        let slot = Arc::new(ThreadSlot::new(
            0,
            "127.0.0.1:80".parse().unwrap(),
            Arc::default(),
        ));
        let lua = Lua::new();
        lua.globals()
            .set(
                "t",
                ThreadHandle {
                    slot: slot.clone(),
                    own: true,
                },
            )
            .unwrap();
        lua.load("x = 1 t:set('y', t:get('x') + 1)").exec().unwrap();
        assert_eq!(lua.globals().get::<i64>("y").unwrap(), 2);
        assert_eq!(slot.chosen_addr(), None);
        let addr: String = lua.load("return tostring(t.addr)").eval().unwrap();
        assert_eq!(addr, "127.0.0.1:80");
        lua.load("local a = t.addr t.addr = a").exec().unwrap();
        assert_eq!(slot.chosen_addr(), Some("127.0.0.1:80".parse().unwrap()));
        assert!(lua.load("t.addr = 5").exec().is_err());
        assert!(lua.load("t.other = 5").exec().is_err());
        assert!(!slot.stop_requested());
        lua.load("t:stop()").exec().unwrap();
        assert!(slot.stop_requested());
    }
}
