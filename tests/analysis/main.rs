//! From numbers to answers: SLO gates, compare, sweeps with knee and capacity, experiments
//! (and their client retransmits on a lossy link in a network namespace).
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod analysis_cli;
mod experiment_netns;
mod sweep_end_to_end;
mod sweep_run_args;
