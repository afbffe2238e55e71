//! The front-ends that imitate other tools (ab, wrk, webbench, press): their flags, their reports
//! byte for byte, their progress lines.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod ab_connect_tls;
mod compat_flag_effects;
mod compat_frontends;
mod compat_progress;
mod golden_compat;
