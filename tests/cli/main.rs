//! The command line itself: the messages a user meets, refused counts, plan errors naming their
//! flags.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod negative_counts;
mod plan_error_flags;
mod user_messages;
