//! What `--sse` watches of a streamed body, whatever carries it (HTTP/1.1's
//! parser, an HTTP/2 stream's DATA frames): the `text/event-stream` format
//! read as a browser's `EventSource` reads it (event_parser.rs), one
//! stream's clocks and counts (watch.rs), and how `--sse-reconnect` asks
//! for the rest of a stream (resume.rs). I/O-free, and below every
//! protocol: none of them is imported here.

mod event_parser;
mod resume;
mod watch;

pub(crate) use resume::{reconnection_delay, set_last_event_id, with_last_event_id};
pub(crate) use watch::{is_event_stream_type, StreamWatch};
