//! Real workloads on the engine: templated requests rendered
//! into each connection's own buffer, feeder rows taken per iteration,
//! responses judged by checks and extractors, and scenario steps walked in
//! order by each virtual user. Both paths use it the same way: the reactors'
//! books (exchange/ledger.rs) and the tokio slot (connection.rs) each hold a
//! [`UserSession`] per connection and ask it for the next request and for
//! the verdict on each response, so the rules are written once, here; a
//! scenario's groups start, end and stop by one clock (phases.rs).
//!
//! A run without templates, checks or extractors has no workload: its
//! requests stay the pre-encoded bytes, and nothing here runs.

mod cookie_jar;
mod judge;
mod phases;
mod rendezvous;
mod session;
mod spec;
mod step_rules;

pub(crate) use judge::{Answer, Judgement};
pub(crate) use phases::RunPhases;
pub(crate) use phases::{PhaseTicket, START_POLL};
pub(crate) use rendezvous::{Rendezvous, RendezvousPoints, Ticket};
pub(crate) use session::{NotPrepared, UserSession, WorkerWorkload};
pub use spec::{GroupWork, StepWork, WorkloadSpec};
pub(crate) use step_rules::{some_step_follows, StepRules};
