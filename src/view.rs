//! What the user sees while a run is going: chosen once per run from the
//! same snapshot stream (plain progress line now; the live terminal view
//! plugs in here).

use crate::progress::ProgressLine;
use stampede_engine::{NoObserver, Observer};
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

/// The view for a run of `planned` length (None: until `-n` is done).
pub fn open_view(quiet: bool, planned: Option<Duration>) -> Box<dyn RunView> {
    if quiet {
        Box::new(NoObserver)
    } else {
        Box::new(ProgressLine::new(planned))
    }
}
