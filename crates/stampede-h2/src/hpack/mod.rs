//! HPACK (RFC 7541): the decoder for response header blocks, and the
//! encoder for request header blocks that never touch the dynamic table.
//!
//! Written here rather than taken from crates.io: measured on this machine
//! (decoding RFC 7541 C.6.1 and C.6.2, a typical response pair, in a loop),
//! `hpack` 0.3 and its forks `loona-hpack` 0.4 / `fluke-hpack` took ~180 µs
//! per pair (their Huffman decoder rebuilds its table on every string), and
//! `httlib-hpack` 0.1 (~1.5 µs, unmaintained since 2021) allocates a vector
//! per field and consumes its input buffer. `h2`'s HPACK is not public.

mod decoder;
mod huffman;
mod huffman_codes;
mod request_block;
mod static_table;

pub use decoder::{Decoder, HpackError};
pub use huffman::HuffmanError;
pub use request_block::{InvalidHeader, RequestBlock};

/// Decodes a Huffman-coded string literal's octets (RFC 7541 §5.2) into `out`.
pub fn decode_huffman(input: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    huffman::decode(input, out)
}
