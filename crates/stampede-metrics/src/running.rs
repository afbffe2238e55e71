//! What a run is while it runs (its id, plan, environment, notices, start):
//! the facts a result is built from before the run has ended, by the `--web`
//! page's result so far and by a forced exit's last snapshot alike.

use crate::{Environment, Recording, RunResult};
use stampede_plan::Plan;
use std::time::SystemTime;

/// What the engine is running, for a result built from a snapshot.
pub struct Running {
    /// The result's id, as the `--metrics` series already carry it.
    pub run_id: String,
    /// The plan being run.
    pub plan: Plan,
    /// What the user should know about the run so far (e.g. connections capped).
    pub notices: Vec<String>,
    /// Facts about the load-generating machine.
    pub environment: Environment,
    /// Wall-clock start.
    pub started_at: SystemTime,
    /// The version of stampede that runs it, as the result records it.
    pub version: &'static str,
}

impl Running {
    /// The result of `recording` (begun at `started_at`), under this run's id.
    pub fn result(&self, recording: &Recording) -> RunResult {
        let mut result = RunResult::from_recording(
            &self.plan,
            recording,
            self.environment.clone(),
            self.version,
            self.notices.clone(),
        );
        result.run_id.clone_from(&self.run_id);
        result
    }
}
