//! Running the binary the way most integration tests do, in one place:
//! a run that must succeed ([`run_ok`]), and one with no error of any class
//! ([`run_clean`]); on an event loop asked for by `--io`
//! ([`run_on_loop`], [`run_on_one_loop`], [`run_ok_on_loop`]), skipped where this kernel or
//! sandbox has no io_uring by the rule of [`event_loop_or_skip`].

use crate::binary::binary;
use crate::{event_loop_or_skip, run_stampede, Run};

/// Runs `args` (with `--json` and `--quiet`); the run must exit 0.
pub fn run_ok(args: &[&str]) -> Run {
    let run = run_stampede(binary(), args);
    assert_eq!(run.code(), Some(0), "{args:?}: {}", run.stderr());
    run
}

/// [`run_ok`], and no request failed (`requests.errors` is 0).
pub fn run_clean(args: &[&str]) -> Run {
    let run = run_ok(args);
    assert_eq!(run.count("/requests/errors"), 0, "{args:?}");
    run
}

/// Runs `args` with `--io io`; `None` when [`event_loop_or_skip`] skips
/// `io` here (`uring` without io_uring; a failure instead under
/// `STAMPEDE_REQUIRE_TOOLS=1` unless `STAMPEDE_NO_IO_URING=1`). The run is
/// not judged: that is the caller's.
pub fn run_on_loop(io: &str, args: &[&str]) -> Option<Run> {
    if !event_loop_or_skip(io) {
        return None;
    }
    let mut all = args.to_vec();
    all.extend(["--io", io]);
    Some(run_stampede(binary(), &all))
}

/// [`run_on_loop`] with one worker thread (`-t 1`), so that every
/// connection of the case is on the one loop asked for.
pub fn run_on_one_loop(io: &str, args: &[&str]) -> Option<Run> {
    let mut all = args.to_vec();
    all.extend(["-t", "1"]);
    run_on_loop(io, &all)
}

/// [`run_on_loop`], and the run succeeded (exit 0) on the loop asked for.
pub fn run_ok_on_loop(io: &str, args: &[&str]) -> Option<Run> {
    let run = run_on_loop(io, args)?;
    assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
    assert_eq!(run.result()["plan"]["io"], io, "--io {io} ran where asked");
    Some(run)
}
