//! Exit statuses and how a failure is shown: one line on stderr, no backtrace.

/// The run completed and every threshold passed.
pub const OK: i32 = 0;
/// The run completed but an SLO condition or threshold failed.
pub const THRESHOLD_FAILED: i32 = 1;
/// Usage or runtime error (also: a run in which no connection could be opened).
pub const ERROR: i32 = 2;
/// Stopped by Ctrl-C, SIGINT (after printing the partial result): 128 + 2.
pub const INTERRUPTED: i32 = 130;
/// Stopped by SIGTERM (after printing the partial result): 128 + 15.
pub const TERMINATED: i32 = 143;

/// Prints `stampede: error: ...` with the context chain on one line and
/// returns the exit status for it; a closed stdout (EPIPE) exits quietly.
pub fn report_error(error: &anyhow::Error) -> i32 {
    let broken_pipe = error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return OK;
    }
    // A plan error names `stampede run`'s flags (a front-end maps its own first).
    let chain: Vec<String> = error
        .chain()
        .map(|cause| crate::plan_flags::cause_text(cause, &crate::plan_flags::run_flag))
        .collect();
    eprintln!("stampede: error: {}", chain.join(": "));
    ERROR
}
