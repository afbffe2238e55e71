//! Subcommands of the `stampede` binary, one file each.
pub mod compare;
pub mod demo;
pub mod k8s;
pub mod merge;
pub mod report;
pub mod run;
pub mod serve;
pub mod sweep;
