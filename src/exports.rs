//! Files written from a finished result besides `--json` (CSV, gnuplot, HTML
//! exports plug in here): flattened into the arguments of every subcommand
//! that produces a result.

use stampede_metrics::RunResult;

/// Export options shared by `run` and the commands built on it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ExportArgs {}

/// Writes every export asked for.
pub fn write_exports(_result: &RunResult, _args: &ExportArgs) -> anyhow::Result<()> {
    Ok(())
}
