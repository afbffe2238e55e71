//! SIGINT (Ctrl-C) and SIGTERM. The first signal asks the running work (a
//! run, a sweep, a series of repeats) to stop and report what it measured;
//! the process then exits 130 after SIGINT and 143 after SIGTERM (128 + the
//! signal number, as a shell reports a death by that signal).
//!
//! Signals within [`SAME_INTERRUPT`] of the first are the same interrupt:
//! GNU `timeout`, CI runners, supervisors and `kill -INT -PGID` signal the
//! process and its whole group at once, so one interrupt often arrives twice
//! in the same instant. A signal after that window forces the exit, but even
//! then what was measured so far is written first (the salvage the running
//! command armed) and the servers `--spawn` started are killed.
//!
//! signal-hook rather than ctrlc: ctrlc's single callback cannot tell SIGINT
//! from SIGTERM, and the exit status must. Its iterator delivers signals to
//! an ordinary thread, so the reaction may lock, print and write files;
//! nothing here runs in signal context. The state is process-wide by nature
//! (signal dispositions are), so it lives in one static, installed once.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use stampede_engine::StopHandle;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Signals this close after the first are the same interrupt delivered twice.
pub const SAME_INTERRUPT: Duration = Duration::from_secs(1);

/// What a forced exit writes before the process ends.
pub type Salvage = Box<dyn FnOnce() + Send>;

enum SalvageSlot {
    /// Nothing measured yet, or the main thread is delivering the result.
    Empty,
    Armed(Salvage),
    /// A forced exit is writing; the main thread must not write too.
    Running,
}

struct Interrupts {
    stop: StopHandle,
    /// When the first signal came, and which it was.
    first: Mutex<Option<(Instant, i32)>>,
    salvage: Mutex<SalvageSlot>,
    /// Process groups of spawned servers, killed on a forced exit.
    groups: Mutex<Vec<i32>>,
}

fn state() -> &'static Interrupts {
    static STATE: OnceLock<Interrupts> = OnceLock::new();
    STATE.get_or_init(|| Interrupts {
        stop: StopHandle::new(),
        first: Mutex::new(None),
        salvage: Mutex::new(SalvageSlot::Empty),
        groups: Mutex::new(Vec::new()),
    })
}

/// Locks, ignoring poisoning: the data (an instant, a list of pids, a
/// closure) stays meaningful whatever panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The process's stop handle, installing the signal thread on first use.
/// Once stopped, it stays stopped: later runs of a sweep end at once.
pub fn stop_handle() -> anyhow::Result<StopHandle> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| install().map_err(|e| e.to_string()))
        .clone()
        .map_err(|e| anyhow::anyhow!("installing the SIGINT/SIGTERM handler: {e}"))?;
    Ok(state().stop.clone())
}

fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("stampede-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                on_signal(signal, Instant::now());
            }
        })?;
    Ok(())
}

/// What one signal does, by when it came relative to the first.
fn on_signal(signal: i32, now: Instant) {
    let state = state();
    let mut first = lock(&state.first);
    match *first {
        None => {
            *first = Some((now, signal));
            drop(first);
            if signal == SIGTERM {
                eprintln!("\nstampede: terminated; stopping and writing the result");
            } else {
                eprintln!("\nstampede: stopping; press Ctrl-C again to exit at once");
            }
            state.stop.stop();
        }
        // The same interrupt, delivered to the process and to its group.
        Some((at, _)) if now.saturating_duration_since(at) < SAME_INTERRUPT => {}
        Some((_, first_signal)) => {
            drop(first);
            force_exit(code_for(first_signal));
        }
    }
}

/// The exit status for a run stopped by `signal`.
fn code_for(signal: i32) -> i32 {
    if signal == SIGTERM {
        crate::process::exit::TERMINATED
    } else {
        crate::process::exit::INTERRUPTED
    }
}

/// The status of an interrupted run: 143 when the first signal was SIGTERM,
/// else 130 (Ctrl-C, or `q` in the live view, which sends no signal).
pub fn status() -> i32 {
    match *lock(&state().first) {
        Some((_, signal)) => code_for(signal),
        None => crate::process::exit::INTERRUPTED,
    }
}

/// True once SIGINT or SIGTERM came: what lingers after a run (`--metrics`,
/// `--web`) ends then. A run stopped without a signal (`q` in the live
/// view, the web page's Stop button) still lingers.
pub fn signalled() -> bool {
    lock(&state().first).is_some()
}

/// Ends the process at once: spawned servers killed, the terminal given
/// back, and what was measured so far written by the armed salvage.
fn force_exit(code: i32) -> ! {
    let state = state();
    eprintln!("stampede: interrupted again; writing what was measured so far and exiting");
    for group in lock(&state.groups).drain(..) {
        // SAFETY: signalling a process group stampede created; no memory involved.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    crate::process::terminal::restore_if_terminal();
    let salvage = std::mem::replace(&mut *lock(&state.salvage), SalvageSlot::Running);
    if let SalvageSlot::Armed(salvage) = salvage {
        salvage();
    }
    std::process::exit(code);
}

/// Sets what a forced exit writes, replacing what was armed before.
pub fn arm(salvage: Salvage) {
    let mut slot = lock(&state().salvage);
    if !matches!(*slot, SalvageSlot::Running) {
        *slot = SalvageSlot::Armed(salvage);
    }
}

/// Called by the main thread before it prints and writes the result: from
/// here on a forced exit writes nothing more (this thread writes the whole
/// result, and files are renamed into place whole). When a forced exit is
/// already writing, this waits for it to end the process.
pub fn begin_delivery() {
    let mut slot = lock(&state().salvage);
    if matches!(*slot, SalvageSlot::Running) {
        drop(slot);
        loop {
            std::thread::park();
        }
    }
    *slot = SalvageSlot::Empty;
}

/// Kills this process group (a spawned server) if the exit is forced.
pub fn kill_on_forced_exit(group: i32) {
    lock(&state().groups).push(group);
}

/// The group has been stopped the ordinary way.
pub fn forget_group(group: i32) {
    lock(&state().groups).retain(|&g| g != group);
}
