//! Ctrl-C and SIGTERM: the first asks the running work (a run, a sweep, a
//! series of repeats) to stop and report what it measured; a second one exits
//! at once with status 130. The handler is process-wide by nature (a signal
//! handler), so it is installed once and every run shares its stop handle.

use stampede_engine::StopHandle;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<StopHandle> = OnceLock::new();

/// The process's stop handle, installing the signal handler on first use.
/// Once stopped, it stays stopped: later runs of a sweep end at once.
pub fn stop_handle() -> anyhow::Result<StopHandle> {
    if let Some(stop) = STOP.get() {
        return Ok(stop.clone());
    }
    let stop = StopHandle::new();
    let for_handler = stop.clone();
    let already = Arc::new(AtomicBool::new(false));
    ctrlc::set_handler(move || {
        if already.swap(true, Ordering::SeqCst) {
            eprintln!("stampede: interrupted again, exiting without a result");
            std::process::exit(crate::exit::INTERRUPTED);
        }
        eprintln!("\nstampede: stopping; press Ctrl-C again to exit at once");
        for_handler.stop();
    })?;
    Ok(STOP.get_or_init(|| stop).clone())
}
