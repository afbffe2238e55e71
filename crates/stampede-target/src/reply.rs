//! What producing a response leaves for the connection to do: nothing, a delay,
//! a body to stream, or a WebSocket session. A leaf shared by the routes, the file server and the two
//! protocol loops that carry the work out.

use std::time::Duration;

use crate::route_label::Route;

/// Work left for the connection after the head (and maybe body) is in the buffer.
pub(crate) enum Reply {
    Done,
    /// Hold the bytes just produced until this much time has passed.
    Delay(Duration),
    /// Stream this body after the buffered bytes.
    Stream(Tail),
    /// A 101 was sent: the connection is now a WebSocket (HTTP/1.1 only;
    /// the route refuses the upgrade over HTTP/2 and HTTP/3).
    Upgrade(crate::ws_route::WsRoute),
}

/// A body too large to buffer.
pub(crate) enum Tail {
    Pattern {
        remaining: u64,
        chunked: bool,
    },
    File {
        file: std::fs::File,
        remaining: u64,
    },
    /// Pieces sent over time (`/sse`, `/stream`).
    Pieces(crate::pieces::Pieces),
}

/// What was produced for one request.
pub(crate) struct Outcome {
    pub status: u16,
    /// Body bytes (for the access log).
    pub body_bytes: usize,
    pub reply: Reply,
    /// The route that produced it (routes.rs sets it), for `serve --metrics`.
    pub route: Route,
}

impl Outcome {
    pub(crate) fn done(status: u16, body_bytes: usize) -> Self {
        Outcome {
            status,
            body_bytes,
            reply: Reply::Done,
            route: Route::Other,
        }
    }

    /// This outcome, as produced by `route`.
    #[inline]
    pub(crate) fn of(mut self, route: Route) -> Self {
        self.route = route;
        self
    }
}
