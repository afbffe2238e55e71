//! stampede-h2: an HTTP/2 client codec (RFC 9113) without I/O, with its own
//! HPACK (RFC 7541). Bytes in, events out; requests in, bytes out. It reads
//! no socket, keeps no clock and spawns nothing, so a reactor (epoll,
//! io_uring, or a test's blocking loop) drives it:
//!
//! 1. [`Connection::new`] queues the preface and SETTINGS in
//!    [`Connection::output`]; the driver writes it out and calls
//!    [`Connection::consume_output`] with what was written.
//! 2. [`Connection::start`] sends a request on a new stream while
//!    [`Connection::can_start`] (the server's SETTINGS_MAX_CONCURRENT_STREAMS
//!    and GOAWAY allow it). The request's header block is a [`RequestBlock`],
//!    encoded once and sent as is on every stream.
//! 3. Whatever the socket reads goes to [`Connection::receive`], which
//!    reports [`Event`]s: a response's head (`:status`, content-length and
//!    the fields asked for), body octets, trailers, GOAWAY, SETTINGS
//!    acknowledged, and for every stream exactly one [`Event::Ended`]
//!    ([`End::Finished`], [`End::Reset`], [`End::Unprocessed`] — retry it on
//!    a new connection — or [`End::Failed`]). It also queues what the
//!    protocol answers: SETTINGS and PING acknowledgements, batched
//!    WINDOW_UPDATEs, request body DATA as windows open.
//!
//! A server that breaks the protocol ends the connection with a typed
//! [`ConnectionError`] (an RFC 9113 [`ErrorCode`], the frame type, the rule)
//! and a GOAWAY, never a panic.
//!
//! Modules: `connection` (the state machine), `frame` (frame layout and
//! writers), `hpack` (decoder, Huffman, request blocks), `event`, `config`,
//! `error`, `fuzzing` (the fuzz target's check, replayed by the tests).
//!
//! ```
//! use stampede_h2::{Config, Connection, Event, RequestBlock};
//! let mut conn = Connection::new(Config::default());
//! let get = RequestBlock::new("GET", "http", "example.test", "/", &[]).unwrap();
//! let stream = conn.start(&get, None).unwrap();
//! assert_eq!(stream, 1);
//! assert!(conn.output().starts_with(b"PRI * HTTP/2.0"));
//! // The server's SETTINGS (empty), then HEADERS ":status 200" with END_STREAM.
//! let server = [0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 1, 5, 0, 0, 0, 1, 0x88];
//! let mut statuses = Vec::new();
//! conn.receive(&server, &mut |e| {
//!     if let Event::Response { head, .. } = e {
//!         statuses.push(head.status);
//!     }
//! })
//! .unwrap();
//! assert_eq!(statuses, [200]);
//! ```

mod config;
mod connection;
mod error;
mod event;
pub mod frame;
pub mod fuzzing;
pub mod hpack;

pub use config::Config;
pub use connection::{Connection, StartError};
pub use error::{ConnectionError, ErrorCode};
pub use event::{Captured, End, Event, ResponseHead};
pub use hpack::RequestBlock;

#[cfg(test)]
mod connection_tests;
