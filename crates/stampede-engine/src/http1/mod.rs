//! HTTP/1.x on the client side: the request encoded once per plan, the
//! response framer that counts bodies, storing them only for checks, and
//! the content codings every path decodes with (`--decode`, checks on an
//! encoded body), and what `--sse` watches of a streamed body (sse.rs,
//! stream_watch.rs), and how `--sse-reconnect` asks for the rest of a
//! stream (sse_resume.rs).

mod capture;
mod chunked;
mod decode;
mod decoded_count;
mod fuzzing;
mod head;
pub(crate) mod malformed;
mod request;
mod response;
mod sse;
mod sse_resume;
mod stream_watch;

pub(crate) use capture::{Capture, MAX_CAPTURED_HEADERS};
pub(crate) use chunked::ChunkedDecoder;
pub(crate) use decode::DecodeError;
pub(crate) use decoded_count::DecodedCount;
pub use fuzzing::check_response_parser;
pub(crate) use malformed::{malformed_reason, malformed_start};
pub(crate) use request::encode_request;
pub use request::encode_request_to;
pub use response::{Complete, ResponseParser, ResponseProgress};
pub(crate) use response::{ResponseError, MAX_HEAD_BYTES};
pub(crate) use sse_resume::{reconnection_delay, with_last_event_id};
