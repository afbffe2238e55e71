//! Invariant checks of the request parser and chunked-body decoder for
//! fuzzers and corpus replay: any bytes give a verdict (partial, complete or a
//! refusal with a status), never a panic, and never a consumed length beyond
//! the input.

use crate::body::decode_chunked;
use crate::request::{parse, Parsed};

/// Panics when the request parser or body decoder breaks an invariant on `data`.
pub fn check_request_parser(data: &[u8]) {
    for max_body in [0usize, 16, 1 << 20] {
        match parse(data, max_body) {
            Parsed::Partial => {}
            Parsed::Complete(head) => {
                let _ = head.path();
            }
            Parsed::Bad(bad) => {
                let status = bad.status();
                assert!((400..=599).contains(&status), "refusal status {status}");
            }
        }
        let mut out = Vec::new();
        if let Ok(Some(consumed)) = decode_chunked(data, max_body, &mut out) {
            assert!(
                consumed <= data.len(),
                "chunked decoder consumed past the input"
            );
            assert!(out.len() <= max_body, "decoded body over --max-body");
        }
    }
}
