//! Chunked transfer coding (RFC 9112 §7.1), decoded byte by byte so a body may
//! arrive split anywhere across reads. Chunk extensions and trailers are
//! skipped; data is counted, and handed to a caller that keeps it only
//! when a check needs the body ([`ChunkedDecoder::advance_with`]).

/// Where the decoder is inside a chunked body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size { value: u64, digits: u32 },
    Extension { value: u64 },
    SizeLf { value: u64 },
    Data { remaining: u64 },
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    FinalLf,
    Done,
}

/// Longest chunk-size line we accept in hex digits (2^64 would overflow).
const MAX_SIZE_DIGITS: u32 = 15;

/// A malformed chunked body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkError;

/// Incremental chunked-body decoder.
#[derive(Debug, Clone)]
pub(crate) struct ChunkedDecoder {
    state: State,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder {
            state: State::Size {
                value: 0,
                digits: 0,
            },
        }
    }
}

impl ChunkedDecoder {
    /// True once the last chunk and the trailers have been read.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consumes bytes of the body; returns `(consumed, data_bytes)`. Stops at
    /// the end of the body, leaving later bytes (a next response) unconsumed.
    pub(crate) fn advance(&mut self, input: &[u8]) -> Result<(usize, u64), ChunkError> {
        self.advance_with(input, |_, _| {})
    }

    /// As [`ChunkedDecoder::advance`], handing each run of data bytes to
    /// `data_of`, with whether the run ends its chunk.
    #[inline]
    pub(crate) fn advance_with(
        &mut self,
        input: &[u8],
        mut data_of: impl FnMut(&[u8], bool),
    ) -> Result<(usize, u64), ChunkError> {
        let mut at = 0;
        let mut data = 0u64;
        while at < input.len() && self.state != State::Done {
            if let State::Data { remaining } = self.state {
                let take = remaining.min((input.len() - at) as u64);
                data_of(&input[at..at + take as usize], take == remaining);
                at += take as usize;
                data += take;
                self.state = if take == remaining {
                    State::DataCr
                } else {
                    State::Data {
                        remaining: remaining - take,
                    }
                };
                continue;
            }
            self.state = self.step(input[at])?;
            at += 1;
        }
        Ok((at, data))
    }

    fn step(&self, byte: u8) -> Result<State, ChunkError> {
        Ok(match (self.state, byte) {
            (State::Size { value, digits }, _) if byte.is_ascii_hexdigit() => {
                if digits >= MAX_SIZE_DIGITS {
                    return Err(ChunkError);
                }
                let digit = (byte as char).to_digit(16).expect("checked hex digit") as u64;
                State::Size {
                    value: value * 16 + digit,
                    digits: digits + 1,
                }
            }
            (State::Size { digits: 0, .. }, _) => return Err(ChunkError),
            (State::Size { value, .. }, b';' | b' ' | b'\t') => State::Extension { value },
            (State::Size { value, .. } | State::Extension { value }, b'\r') => {
                State::SizeLf { value }
            }
            (State::Extension { .. }, b'\n') => return Err(ChunkError),
            (State::Extension { value }, _) => State::Extension { value },
            (State::SizeLf { value: 0 }, b'\n') => State::TrailerStart,
            (State::SizeLf { value }, b'\n') => State::Data { remaining: value },
            (State::DataCr, b'\r') => State::DataLf,
            (State::DataLf, b'\n') => State::Size {
                value: 0,
                digits: 0,
            },
            (State::TrailerStart, b'\r') => State::FinalLf,
            (State::TrailerStart | State::TrailerLine, b'\n') => State::TrailerStart,
            (State::TrailerStart | State::TrailerLine, _) => State::TrailerLine,
            (State::FinalLf, b'\n') => State::Done,
            _ => return Err(ChunkError),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = b"5;name=value\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";

    fn decode_in_pieces(input: &[u8], piece: usize) -> (usize, u64, bool) {
        let mut decoder = ChunkedDecoder::default();
        let (mut consumed, mut data) = (0, 0);
        for part in input.chunks(piece) {
            let (used, n) = decoder.advance(part).unwrap();
            consumed += used;
            data += n;
            if decoder.is_done() {
                break;
            }
        }
        (consumed, data, decoder.is_done())
    }

    #[test]
    fn decodes_extensions_and_trailers_at_any_split() {
        let body_len = BODY.len() - 4;
        for piece in 1..=BODY.len() {
            let (consumed, data, done) = decode_in_pieces(BODY, piece);
            assert!(done, "piece {piece}");
            assert_eq!(data, 31, "piece {piece}");
            // Consumption stops at the end of the body, whatever the split.
            assert_eq!(consumed, body_len, "piece {piece}");
        }
        let mut decoder = ChunkedDecoder::default();
        assert_eq!(decoder.advance(BODY).unwrap(), (body_len, 31));
    }

    #[test]
    fn rejects_malformed_sizes_and_framing() {
        for bad in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"5\r\nhelloXX",
            b"fffffffffffffffff\r\n",
            b"5\n",
        ] {
            let mut decoder = ChunkedDecoder::default();
            assert!(
                decoder.advance(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
