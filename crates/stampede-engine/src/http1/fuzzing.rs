//! Invariant checks of the response parser for fuzzers and corpus replay:
//! never panic, never consume more than was given, and give the same answer
//! however the bytes are split across reads.

use super::{ResponseParser, ResponseProgress};

/// The parser's verdict on a byte stream fed in pieces of `piece` bytes.
fn parse_in_pieces(data: &[u8], piece: usize, head: bool) -> (String, usize) {
    let mut parser = ResponseParser::new(head);
    let mut pending: Vec<u8> = Vec::new();
    let mut consumed = 0;
    for part in data.chunks(piece.max(1)) {
        pending.extend_from_slice(part);
        match parser.advance(&pending) {
            Ok((used, progress)) => {
                assert!(used <= pending.len(), "consumed more than given");
                pending.drain(..used);
                consumed += used;
                if let ResponseProgress::Complete(done) = progress {
                    return (format!("{done:?}"), consumed);
                }
            }
            Err(e) => return (format!("{e:?}"), consumed),
        }
    }
    (format!("{:?}", parser.finish_on_close()), consumed)
}

/// Panics when the parser breaks an invariant on `data`.
pub fn check_response_parser(data: &[u8]) {
    for head in [false, true] {
        let whole = parse_in_pieces(data, data.len().max(1), head);
        for piece in [1, 2, 3, 7, 64, 1000] {
            let split = parse_in_pieces(data, piece, head);
            assert_eq!(
                whole.0, split.0,
                "split into {piece}-byte reads changed the verdict"
            );
            if whole.0.starts_with("Complete") {
                assert_eq!(whole.1, split.1, "split changed where the response ended");
            }
        }
    }
}
