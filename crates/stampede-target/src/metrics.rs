//! What a metrics exporter (`stampede serve --metrics`) reads: the same
//! exact counters `/stats` shows, summed over workers at each read, from a
//! thread of its own. Reading costs the reader only: the workers keep
//! counting as they always do (stats.rs), nothing is added per request.

use crate::stats::{Registry, StatsSnapshot};
use std::sync::Arc;

/// A handle on a running server's counters that outlives no one's borrow:
/// cloneable, sendable, read any time (after shutdown it keeps the last
/// counts).
#[derive(Clone)]
pub struct StatsReader {
    registry: Arc<Registry>,
}

impl StatsReader {
    pub(crate) fn new(registry: Arc<Registry>) -> StatsReader {
        StatsReader { registry }
    }

    /// The counters now, summed over workers (what `/stats` serves).
    pub fn snapshot(&self) -> StatsSnapshot {
        self.registry.snapshot()
    }
}
