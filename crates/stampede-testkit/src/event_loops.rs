//! The event loops a test runs a case on (`--io`), and whether this machine
//! has the one that needs the kernel's io_uring. Owns the list and the
//! probe; the skip-or-fail decision is tools.rs's rule, with one
//! exception it allows: `STAMPEDE_NO_IO_URING=1`, set by .ci/run only when
//! its own probe finds no io_uring, lets a test skip `--io uring` even under
//! `STAMPEDE_REQUIRE_TOOLS=1`.
//!
//! The probe is the binary's: a one-request run with `--io uring`, refused in
//! one line (exit 2) where io_uring is missing or filtered (a container's
//! seccomp profile). `STAMPEDE_TEST_HIDE_IO_URING=1` makes the probe say
//! "missing" without asking, to check the rule on a machine that has io_uring.

use std::sync::OnceLock;

use crate::binary::binary;
use crate::tools::{is_set, skip_or_fail_unless_declared};
use crate::{free_port, run_stampede};

/// Every event loop a plain HTTP/1.1 run can be asked for (`--io`), besides
/// `auto`: the tests that cover each loop go through this list.
pub const EVENT_LOOPS: [&str; 3] = ["epoll", "uring", "tokio"];

/// Set by CI when its probe finds no io_uring here: a test may then skip its
/// `--io uring` part under `STAMPEDE_REQUIRE_TOOLS=1`.
pub const NO_IO_URING: &str = "STAMPEDE_NO_IO_URING";

/// A test hook: the probe answers "no io_uring here" without asking the
/// binary, so that the rule can be seen to fail (or skip) on any machine.
pub const HIDE_IO_URING: &str = "STAMPEDE_TEST_HIDE_IO_URING";

/// The binary's one line when `--io uring` cannot be had here.
const NO_URING: &str = "io_uring is unavailable here";

/// True when the calling test can run its case on `io` here. False, after
/// the skip notice, when `io` is `uring` and this machine has no io_uring;
/// under `STAMPEDE_REQUIRE_TOOLS=1` that panics instead, unless
/// `STAMPEDE_NO_IO_URING=1`. Other loops (and `auto`) are always there.
///
/// ```no_run
/// for io in stampede_testkit::EVENT_LOOPS {
///     if !stampede_testkit::event_loop_or_skip(io) {
///         continue;
///     }
///     // run the case with --io io
/// }
/// ```
pub fn event_loop_or_skip(io: &str) -> bool {
    if io != "uring" {
        return true;
    }
    let Some(why) = io_uring_missing() else {
        return true;
    };
    skip_or_fail_unless_declared(
        &format!("--io uring: {why}"),
        "run on a kernel (or under a seccomp profile) that allows io_uring",
        Some(NO_IO_URING),
    );
    false
}

/// Why this machine has no io_uring, if it has none: the binary's own line.
fn io_uring_missing() -> Option<String> {
    if is_set(HIDE_IO_URING) {
        return Some(format!("{NO_URING} (hidden by {HIDE_IO_URING}=1)"));
    }
    static PROBED: OnceLock<Option<String>> = OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

/// One request with `--io uring` to a port nothing listens on: the binary
/// settles its event loop before it connects, and refuses `uring` in one line
/// with exit 2 where it cannot have it.
fn probe() -> Option<String> {
    let url = format!("http://127.0.0.1:{}/", free_port());
    let args = [
        url.as_str(),
        "-n",
        "1",
        "-c",
        "1",
        "-t",
        "1",
        "--io",
        "uring",
    ];
    let run = run_stampede(binary(), &args);
    let stderr = run.stderr();
    if !stderr.contains(NO_URING) {
        return None;
    }
    assert_eq!(run.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    Some(the_reason(&stderr).to_string())
}

/// The reason in the binary's refusal, without its `stampede: error: `
/// prefix and its advice (`; use --io epoll or auto`).
fn the_reason(refusal: &str) -> &str {
    let from = refusal.find(NO_URING).unwrap_or(0);
    let reason = &refusal[from..];
    reason.split("; use ").next().unwrap_or(reason).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_the_binarys_without_prefix_or_advice() {
        let refusal = "stampede: error: io_uring is unavailable here (Function not \
                       implemented (os error 38)); use --io epoll or auto\n";
        assert_eq!(
            the_reason(refusal),
            "io_uring is unavailable here (Function not implemented (os error 38))"
        );
    }
}
