//! Subcommands of the `stampede` binary, one file each.
pub mod demo;
pub mod run;
pub mod serve;
pub mod sweep;
