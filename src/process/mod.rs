//! The process's edges, shared by every layer above: its exit status and
//! one-line error (`exit`, with `plan_flags` naming the flag a plan error is
//! about), its signals (`interrupt`), the terminal it may own (`terminal`),
//! and where results go (`output`, `exports`, `hlog_file`: the interval
//! log) and are read back
//! (`result_file`). Nothing here imports another folder of the binary.

pub mod exit;
pub mod exports;
pub mod hlog_file;
pub mod hlog_report;
pub mod interrupt;
pub mod output;
pub mod plan_flags;
pub mod result_file;
pub mod terminal;
