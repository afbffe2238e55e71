//! Subcommands of the `stampede` binary, one file each.
pub mod serve;
