//! Running a mapped plan the way JMeter does, around stampede's engine:
//! what the binary's `stampede jmeter` hands each thread group's run and
//! prints after. Nothing here builds a plan or sends a request; the binary
//! runs each group (src/compat/jmeter/run.rs) and this owns the rest.
//!
//! - schedule.rs: thread-group scheduling (setUp, main, tearDown; side by
//!   side or serialized), each group's run on its own thread.
//! - active.rs: JTL `allThreads`, the running groups' threads.
//! - jtl_sink.rs: the `-l FILE` writer, an engine request sink per group;
//!   jtl_order.rs its lines in completion order; transactions.rs the
//!   Transaction Controllers' samples.
//! - summariser.rs: the Summariser's `summary +`/`summary =` lines during
//!   the run, from the engine's snapshots.
//! - report.rs: JMeter's lines around the run and the closing table.

pub mod active;
mod jtl_order;
pub mod jtl_sink;
pub mod report;
pub mod schedule;
pub mod summariser;
pub(crate) mod transactions;
