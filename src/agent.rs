//! Distributed runs: `--agent I/N` (this process runs the I-th share of the
//! plan) and `--start-at TIME` (wait for a common wall-clock start). Seam for
//! the distributed-run work; today both options are accepted as no-ops only
//! when absent.

use stampede_metrics::RunResult;
use stampede_plan::Plan;

/// Options of a run that is one agent of several.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AgentArgs {}

/// Narrows the plan to this agent's share; returns notices for the user.
pub fn apply_share(_args: &AgentArgs, _plan: &mut Plan) -> anyhow::Result<Vec<String>> {
    Ok(Vec::new())
}

/// Blocks until the agreed start time, if one was given.
pub fn wait_for_start(_args: &AgentArgs) -> anyhow::Result<()> {
    Ok(())
}

/// Records the agent's identity and start in the result.
pub fn annotate(_args: &AgentArgs, _result: &mut RunResult) {}
