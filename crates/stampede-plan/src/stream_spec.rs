//! Streamed responses (`--sse`, `--sse-for`, `--sse-reconnect`):
//! one request is one stream, whose events and the gaps between them are
//! measured. What the plan says of them, and what it may be combined with.

use std::time::Duration;

use crate::{Plan, PlanError};

/// How streamed responses are watched; all off by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamSpec {
    /// Watch each response as a stream: events, their gaps (`--sse`).
    pub watch: bool,
    /// End each stream after this long, as a success (`--sse-for`).
    pub for_at_most: Option<Duration>,
    /// Reconnect a stream the server ended, with `Last-Event-ID`
    /// (`--sse-reconnect`); then only `--sse-for` ends it.
    pub reconnect: bool,
}

/// The rules of `--sse` and its options.
pub(crate) fn check(plan: &Plan) -> Result<(), PlanError> {
    let s = &plan.transport.stream;
    if !s.watch {
        if s.for_at_most.is_some() || s.reconnect {
            return Err(PlanError::Invalid(
                "--sse-for and --sse-reconnect need --sse".to_string(),
            ));
        }
        return Ok(());
    }
    if plan.transport.http3 {
        // The h3 client reads a body whole (drive/h3): not watched yet.
        return Err(PlanError::Invalid(
            "--sse watches HTTP/1.1 and HTTP/2 streams, not HTTP/3 yet".to_string(),
        ));
    }
    if plan.transport.pipeline > 1 {
        return Err(PlanError::Invalid(
            "--sse cannot be combined with --pipeline: a stream holds its connection".to_string(),
        ));
    }
    if s.reconnect && s.for_at_most.is_none() {
        return Err(PlanError::Invalid(
            "--sse-reconnect needs --sse-for: a reconnecting stream ends only then".to_string(),
        ));
    }
    if s.for_at_most.is_some_and(|d| d.is_zero()) {
        return Err(PlanError::Invalid(
            "--sse-for must be above zero".to_string(),
        ));
    }
    Ok(())
}
