//! The client and the built-in target when things go wrong: hostile servers and clients, every
//! error class, Ctrl-C, no connection at all, the fuzz corpus replayed.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod faults;
mod fuzz_replay;
mod hostile_clients;
mod no_connection;
mod run_errors;
mod run_interrupt;
