//! What every worker keeps, whichever loop drives it: what its connections
//! share (context.rs) and the one rule booking a request's end (booking.rs),
//! its state and recorder (worker_state.rs), its housekeeping, the open model's instants
//! (pacer.rs) and where each goes (open_slots.rs), the connect backoff, its
//! group's start and the request log.
//! The loops in drive/ call these; nothing here imports a loop.

pub(crate) mod backoff;
pub(crate) mod booking;
pub(crate) mod context;
pub(crate) mod group_start;
pub(crate) mod housekeeping;
pub(crate) mod load_end;
pub(crate) mod open_slots;
pub(crate) mod pacer;
pub(crate) mod request_log;
pub(crate) mod worker_state;
