//! HTTP/1.x on the client side: the request encoded once per plan, the
//! response framer that counts bodies, storing them only for checks, and
//! the content codings every path decodes with (`--decode`, checks on an
//! encoded body); what `--sse` watches of a body is stream/'s, fed by the
//! capture.

mod capture;
mod chunked;
mod decode;
mod decoded_count;
mod fuzzing;
mod head;
pub(crate) mod malformed;
mod request;
mod response;

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
