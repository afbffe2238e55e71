//! The command line of `stampede run` and everything built on it: the
//! arguments (`run_args` and its `*_args` parts, `count_arg`), the words
//! rendered back for a shell (`run_words`), sweep's arguments (`sweep_args`)
//! and ladder (`sweep_steps`),
//! a validated Plan built from the arguments (`plan_args`,
//! `workload_plan`), `har_run` (`--har`), `replay_args` (`stampede replay`: a log made into a run), `curl_command` (`--curl`, with `bash_words` reading the pasted
//! command), and `agent` (`--agent I/N`: the agent's share of the
//! plan, the wait for the start, the result's agent record).

pub mod agent;
pub mod bash_words;
pub mod connection_args;
pub mod count_arg;
pub mod curl_command;
pub mod har_run;
pub mod plan_args;
pub mod replay_args;
pub mod request_extras;
pub mod run_args;
pub mod run_words;
pub mod script_args;
pub mod sweep_args;
pub mod sweep_steps;
pub mod targets_args;
pub mod transport_args;
pub mod workload_args;
pub mod workload_plan;
