//! Ctrl-C and SIGTERM: the first asks the run to stop and report what it
//! measured; a second one exits at once with status 130.

use stampede_engine::StopHandle;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Routes SIGINT/SIGTERM to `stop`. Only one handler can exist per process;
/// a second installation attempt is reported as an error.
pub fn install(stop: StopHandle) -> anyhow::Result<()> {
    let already = Arc::new(AtomicBool::new(false));
    ctrlc::set_handler(move || {
        if already.swap(true, Ordering::SeqCst) {
            eprintln!("stampede: interrupted again, exiting without a result");
            std::process::exit(crate::exit::INTERRUPTED);
        }
        eprintln!("\nstampede: stopping; press Ctrl-C again to exit at once");
        stop.stop();
    })?;
    Ok(())
}
