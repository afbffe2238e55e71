//! What the user sees while a run is going, chosen once per run from the
//! same snapshot stream: the live terminal view (`live/`) when stdout is a
//! terminal, the plain progress line on stderr otherwise (no escape codes in
//! CI logs or pipes), nothing with `--quiet`.

mod live;
pub mod progress;

use crate::view::progress::ProgressLine;
use stampede_engine::monitor::LiveFeed;
use stampede_engine::{NoObserver, Observer};
use stampede_plan::Plan;
use std::io::IsTerminal;
use std::time::Duration;

/// An observer that also knows how to end its display cleanly.
pub trait RunView: Observer {
    /// Called once after the run, before the summary is printed.
    fn finish(&mut self) {}
}

impl RunView for NoObserver {}

impl RunView for ProgressLine {
    fn finish(&mut self) {
        ProgressLine::finish(self);
    }
}

/// True when a full-screen view can be drawn: stdout is a terminal that
/// understands cursor movement.
fn live_view_possible() -> bool {
    let dumb = std::env::var_os("TERM").is_none_or(|term| term.is_empty() || term == "dumb");
    std::io::stdout().is_terminal() && !dumb
}

/// The view for a run of `plan` (of `planned` length; None: until `-n` is
/// done), with `banner` lines above it (a sweep's step, the finished steps)
/// and the process monitor's `feed`. With `stdout_taken` (an export written
/// to `-`) the live view, which draws on stdout, gives way to the progress
/// line on stderr.
pub fn open_view(
    quiet: bool,
    stdout_taken: bool,
    planned: Option<Duration>,
    plan: &Plan,
    banner: &[String],
    feed: Option<LiveFeed>,
) -> Box<dyn RunView> {
    if quiet {
        return Box::new(NoObserver);
    }
    if !stdout_taken && live_view_possible() {
        match live::LiveView::start(plan, banner, feed) {
            Ok(view) => return Box::new(view),
            Err(error) => eprintln!("stampede: no live view ({error:#}); showing progress lines"),
        }
    }
    Box::new(ProgressLine::new(planned))
}

/// Two observers fed the same snapshots: the view and a compat front-end's
/// own watcher (ab's "Completed N requests", wrk's per-thread samples).
pub struct Both<'a>(pub &'a mut dyn Observer, pub &'a mut dyn Observer);

impl Observer for Both<'_> {
    fn on_snapshot(
        &mut self,
        elapsed: Duration,
        interval: &stampede_metrics::Snapshot,
        total: &stampede_metrics::Snapshot,
    ) {
        self.0.on_snapshot(elapsed, interval, total);
        self.1.on_snapshot(elapsed, interval, total);
    }

    fn on_worker_interval(
        &mut self,
        worker: usize,
        interval: &stampede_metrics::Snapshot,
        last: bool,
    ) {
        self.0.on_worker_interval(worker, interval, last);
        self.1.on_worker_interval(worker, interval, last);
    }
}
