//! Following redirects (`--redirects N`): which responses hop, where a
//! `Location` points, the hop's request, the other origins a worker reaches
//! and which of a slot's two connections a request uses. I/O-free rules
//! that every path follows (HTTP/1.1's and HTTP/2's); the plan carries the rule.

pub(crate) mod redirect;
pub(crate) mod redirect_location;
pub(crate) mod redirect_origin;
pub(crate) mod redirect_request;
pub(crate) mod redirect_switch;
