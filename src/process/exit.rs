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
        .map(|cause| {
            crate::process::plan_flags::cause_text(cause, &crate::process::plan_flags::run_flag)
        })
        .collect();
    eprintln!("{}", error_text(&chain.join(": ")));
    ERROR
}

/// `stampede: error: MESSAGE`, a message's later lines indented by the
/// prefix's width: a caret line (an invalid `--check`) is drawn relative to
/// the message's start and must stay under the column it points at.
fn error_text(message: &str) -> String {
    const PREFIX: &str = "stampede: error: ";
    let indent = format!("\n{}", " ".repeat(PREFIX.len()));
    format!("{PREFIX}{}", message.replace('\n', &indent))
}

#[cfg(test)]
mod tests {
    #[test]
    fn later_lines_keep_their_column_under_the_prefix() {
        let text =
            super::error_text("invalid check: status = 200\n                      ^ expected ==");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].find('='), lines[1].find('^'));
    }
}
