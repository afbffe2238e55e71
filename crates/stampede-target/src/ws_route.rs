//! What an upgraded connection does: `/ws/echo` or `/ws/push/{n}/{ms}`. A
//! leaf: the handshake (`websocket`) names it, `reply` carries it to the
//! connection, `ws_session` carries it out.

use std::time::Duration;

/// What the connection does once upgraded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WsRoute {
    /// Every text and binary message sent back as it came.
    Echo,
    /// `n` text messages (`0`, `1`, …), the first at once, one every
    /// `every`, then a close with code 1000.
    Push { n: u64, every: Duration },
}
