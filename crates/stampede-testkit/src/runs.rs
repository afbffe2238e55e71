//! Running the binary the way most integration tests do, in one place:
//! a run that must succeed ([`run_ok`]), and one with no error of any class
//! ([`run_clean`]); on an event loop asked for by `--io`
//! ([`run_on_loop`], [`run_ok_on_loop`]), skipped after saying so where
//! this kernel or sandbox has no io_uring.

use crate::binary::binary;
use crate::{run_stampede, Run};

/// The binary's one line when `--io uring` cannot be had here.
const NO_URING: &str = "io_uring is unavailable here";

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

/// Runs `args` with `--io io`; `None` (after saying so) when `io` is
/// `uring` and this kernel or sandbox has none (the binary refuses it in
/// one line, exit 2). The run is not judged: that is the caller's.
pub fn run_on_loop(io: &str, args: &[&str]) -> Option<Run> {
    let mut all = args.to_vec();
    all.extend(["--io", io]);
    let run = run_stampede(binary(), &all);
    if io == "uring" && run.stderr().contains(NO_URING) {
        assert_eq!(run.code(), Some(2), "{}", run.stderr());
        assert_eq!(run.stderr().lines().count(), 1, "{}", run.stderr());
        eprintln!("skipped --io uring: {}", run.stderr().trim());
        return None;
    }
    Some(run)
}

/// [`run_on_loop`], and the run succeeded (exit 0) on the loop asked for.
pub fn run_ok_on_loop(io: &str, args: &[&str]) -> Option<Run> {
    let run = run_on_loop(io, args)?;
    assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
    assert_eq!(run.result()["plan"]["io"], io, "--io {io} ran where asked");
    Some(run)
}
