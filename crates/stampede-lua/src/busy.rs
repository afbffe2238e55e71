//! Which hook a state is running right now, readable from other threads:
//! what the warning about a hook that never returns names (`worker 2 did
//! not return from the Lua hook request()`). Two relaxed stores of one byte
//! per hook call, on a value only this thread writes.

use std::sync::atomic::{AtomicU8, Ordering};

/// The hooks a script may get stuck in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Hook {
    /// `setup(thread)`, once per thread, in the setup state.
    Setup,
    /// `init(args)`, once in each thread's state.
    Init,
    /// `delay()`, before each request.
    Delay,
    /// `request()`, which returns the request to send.
    Request,
    /// `response(status, headers, body)`, after each response.
    Response,
    /// `done(summary, latency, requests)`, once after the run.
    Done,
}

impl Hook {
    const ALL: [Hook; 6] = [
        Hook::Setup,
        Hook::Init,
        Hook::Delay,
        Hook::Request,
        Hook::Response,
        Hook::Done,
    ];

    /// The hook as a script names it: `request()`.
    pub fn call(self) -> &'static str {
        match self {
            Hook::Setup => "setup()",
            Hook::Init => "init()",
            Hook::Delay => "delay()",
            Hook::Request => "request()",
            Hook::Response => "response()",
            Hook::Done => "done()",
        }
    }
}

/// The hook in progress, if any.
#[derive(Debug, Default)]
pub struct Busy(AtomicU8);

impl Busy {
    /// Marks `hook` as running until the guard is dropped.
    pub(crate) fn enter(&self, hook: Hook) -> Leave<'_> {
        self.0.store(hook as u8 + 1, Ordering::Relaxed);
        Leave(self)
    }

    /// The hook running now.
    pub fn hook(&self) -> Option<Hook> {
        let code = self.0.load(Ordering::Relaxed);
        Hook::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }
}

/// Clears the mark when the hook returns (or fails).
pub(crate) struct Leave<'a>(&'a Busy);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0 .0.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_lasts_as_long_as_the_call() {
        let busy = Busy::default();
        assert_eq!(busy.hook(), None);
        for hook in Hook::ALL {
            let leave = busy.enter(hook);
            assert_eq!(busy.hook(), Some(hook));
            drop(leave);
            assert_eq!(busy.hook(), None);
        }
        assert_eq!(Hook::Response.call(), "response()");
    }
}
