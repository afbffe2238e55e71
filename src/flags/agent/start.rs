//! The agreed start of a distributed run: waiting for `--start-at` (on the
//! monotonic clock, re-reading the wall clock), and recording the agent,
//! its start offset and the kernel's clock state in the result.

use super::{AgentArgs, Share, StartAt};
use stampede_metrics::{format_timestamp, parse_timestamp, signed_millis, AgentInfo, RunResult};
use std::time::{Duration, SystemTime};

/// The wall clock is read again at least this often while waiting, so that a
/// clock step (NTP) during a long wait moves the start with it.
const RECHECK: Duration = Duration::from_secs(1);

/// Blocks until the agreed start time, if one was given: sleeps on the
/// monotonic clock for the wall-clock difference, re-reading the wall clock
/// every second; warns when already later than `--max-skew`.
pub fn wait_for_start(args: &AgentArgs) -> anyhow::Result<()> {
    let Some(StartAt(start)) = args.start_at else {
        return Ok(());
    };
    let mut announced = false;
    // Ctrl-C while waiting: the run then starts and ends at once, interrupted.
    let stop = crate::process::interrupt::stop_handle()?;
    loop {
        if stop.is_stopped() {
            return Ok(());
        }
        match start.duration_since(SystemTime::now()) {
            Ok(remaining) if !remaining.is_zero() => {
                if !announced {
                    eprintln!(
                        "stampede: waiting {:.1}s for --start-at {}",
                        remaining.as_secs_f64(),
                        format_timestamp(start)
                    );
                    announced = true;
                }
                std::thread::sleep(remaining.min(RECHECK));
            }
            Ok(_) => return Ok(()),
            Err(late) => {
                let late = late.duration();
                if late > args.max_skew {
                    eprintln!(
                        "stampede: warning: starting {:.3}s after --start-at {} (more than --max-skew {}): \
                         this agent's load will not line up with the others'",
                        late.as_secs_f64(),
                        format_timestamp(start),
                        stampede_plan::format_duration(args.max_skew)
                    );
                }
                return Ok(());
            }
        }
    }
}

/// Records the agent's identity and start in the result (when --agent or
/// --start-at was given), with a warning when it started late.
pub fn annotate(args: &AgentArgs, result: &mut RunResult) {
    if args.agent.is_none() && args.start_at.is_none() {
        return;
    }
    let share = args.agent.unwrap_or(Share { index: 0, count: 1 });
    let real_start = parse_timestamp(&result.started_at).ok();
    let start_offset_ms = match (&args.start_at, real_start) {
        (Some(StartAt(agreed)), Some(real)) => Some(signed_millis(real, *agreed)),
        _ => None,
    };
    let max_skew_ms = u64::try_from(args.max_skew.as_millis()).unwrap_or(u64::MAX);
    if let Some(offset) = start_offset_ms.filter(|ms| ms.unsigned_abs() > max_skew_ms) {
        result.warnings.push(format!(
            "started {offset} ms after --start-at (more than --max-skew {max_skew_ms} ms): \
             this agent's seconds do not line up with the other agents'"
        ));
    }
    let (clock_synchronized, clock_error_us) = kernel_clock();
    if args.start_at.is_some() && clock_synchronized == Some(false) {
        result.warnings.push(
            "this machine's clock is not synchronized (NTP): --start-at is only as exact as the clock".into(),
        );
    }
    result.agent = Some(AgentInfo {
        index: share.index,
        count: share.count,
        start_at: args
            .start_at
            .as_ref()
            .map(|StartAt(time)| format_timestamp(*time)),
        start_offset_ms,
        max_skew_ms,
        clock_synchronized,
        clock_error_us,
    });
}

/// Whether the kernel thinks its clock is synchronized, and its estimated
/// error in µs (adjtimex(2) in read-only mode).
fn kernel_clock() -> (Option<bool>, Option<u64>) {
    // SAFETY: a zeroed timex is a valid argument; with modes = 0 adjtimex only
    // reads the kernel's clock state into it and changes nothing.
    let mut timex: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::adjtimex(&mut timex) };
    if state < 0 {
        return (None, None);
    }
    let synchronized = state != libc::TIME_ERROR && timex.status & libc::STA_UNSYNC == 0;
    let error = synchronized.then(|| u64::try_from(timex.esterror).unwrap_or(0));
    (Some(synchronized), error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::agent::test_fixtures::result;

    #[test]
    fn annotates_the_start_offset_and_warns_when_late() {
        let mut result = result();
        let agreed = parse_timestamp(&result.started_at).unwrap() - Duration::from_secs(3);
        let args = AgentArgs {
            agent: Some(Share { index: 1, count: 2 }),
            start_at: Some(StartAt(agreed)),
            max_skew: Duration::from_secs(1),
        };
        annotate(&args, &mut result);
        let info = result.agent.clone().unwrap();
        assert_eq!((info.index, info.count), (1, 2));
        assert_eq!(info.start_offset_ms, Some(3000));
        assert!(result.warnings.iter().any(|w| w.contains("3000 ms after")));
    }

    #[test]
    fn no_agent_options_no_annotation() {
        let mut result = result();
        annotate(&AgentArgs::default(), &mut result);
        assert_eq!(result.agent, None);
        assert!(wait_for_start(&AgentArgs::default()).is_ok());
    }
}
