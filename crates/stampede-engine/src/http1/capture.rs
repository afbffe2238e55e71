//! What a response parser keeps of a response when a check, an extractor
//! or a script reads it (issue 18): the final head as it arrived and the
//! body's data (chunked framing removed), each up to `--capture-max`.
//! Without a capture the parser only counts, as before.

use std::ops::Range;

/// Headers a captured head is split into, at most (the parser refuses more).
pub const MAX_CAPTURED_HEADERS: usize = 100;

/// The captured parts of the response being parsed.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    keep_head: bool,
    keep_body: bool,
    max: usize,
    head: Vec<u8>,
    body: Vec<u8>,
    /// The body was longer than `max`: checks see its first `max` bytes.
    truncated: bool,
}

impl Capture {
    /// Keeps the head, the body, or both, each up to `max` bytes.
    pub fn new(keep_head: bool, keep_body: bool, max: usize) -> Capture {
        Capture {
            keep_head,
            keep_body,
            max,
            ..Capture::default()
        }
    }

    /// A new response: the buffers are emptied, their memory kept.
    pub fn clear(&mut self) {
        self.head.clear();
        self.body.clear();
        self.truncated = false;
    }

    pub(super) fn head_arrived(&mut self, head: &[u8]) {
        if self.keep_head {
            self.head.clear();
            self.head
                .extend_from_slice(&head[..head.len().min(self.max.max(1024))]);
        }
    }

    pub(super) fn body_data(&mut self, data: &[u8]) {
        if !self.keep_body {
            return;
        }
        let room = self.max.saturating_sub(self.body.len());
        if data.len() > room {
            self.truncated = true;
        }
        self.body.extend_from_slice(&data[..data.len().min(room)]);
    }

    /// The body kept (its first `--capture-max` bytes).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The header fields of the kept head, as `(name, value)` ranges into
    /// [`Capture::head_bytes`], written into `out`; returns how many.
    pub fn header_ranges(
        &self,
        out: &mut [(Range<usize>, Range<usize>); MAX_CAPTURED_HEADERS],
    ) -> usize {
        let mut n = 0;
        self.for_each_header(|name, value| {
            out[n] = (name, value);
            n += 1;
        });
        n
    }

    /// Calls `field` with the `(name, value)` ranges into
    /// [`Capture::head_bytes`] of each header field of the kept head, in
    /// order, at most [`MAX_CAPTURED_HEADERS`] of them (nothing to fill
    /// first: a script's `response()` reads them per response).
    /// The head was validated by the parser: lines end in CRLF (or LF).
    pub fn for_each_header(&self, mut field: impl FnMut(Range<usize>, Range<usize>)) {
        let head = &self.head;
        let mut n = 0;
        let mut at = match memchr_newline(head, 0) {
            Some(end) => end + 1,
            None => return,
        };
        while at < head.len() && n < MAX_CAPTURED_HEADERS {
            let end = memchr_newline(head, at).unwrap_or(head.len());
            let line = trim_cr(at, end, head);
            if line.is_empty() {
                break;
            }
            if let Some(colon) = head[line.clone()].iter().position(|&b| b == b':') {
                let name = line.start..line.start + colon;
                let value = trim_spaces(head, line.start + colon + 1..line.end);
                field(name, value);
                n += 1;
            }
            at = end + 1;
        }
    }

    pub fn head_bytes(&self) -> &[u8] {
        &self.head
    }

    /// The first header named `name` (ASCII case-insensitive) of the kept head.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        let mut ranges: [(Range<usize>, Range<usize>); MAX_CAPTURED_HEADERS] =
            std::array::from_fn(|_| (0..0, 0..0));
        let n = self.header_ranges(&mut ranges);
        ranges[..n]
            .iter()
            .find(|(field, _)| self.head[field.clone()].eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, value)| &self.head[value.clone()])
    }

    /// This capture widened to keep whatever `other` keeps too.
    pub fn union(mut self, other: Capture) -> Capture {
        self.keep_head |= other.keep_head;
        self.keep_body |= other.keep_body;
        self.max = self.max.max(other.max);
        self
    }
}

fn memchr_newline(bytes: &[u8], from: usize) -> Option<usize> {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| from + i)
}

fn trim_cr(start: usize, end: usize, bytes: &[u8]) -> Range<usize> {
    if end > start && bytes[end - 1] == b'\r' {
        start..end - 1
    } else {
        start..end
    }
}

fn trim_spaces(bytes: &[u8], mut range: Range<usize>) -> Range<usize> {
    while range.start < range.end && matches!(bytes[range.start], b' ' | b'\t') {
        range.start += 1;
    }
    while range.end > range.start && matches!(bytes[range.end - 1], b' ' | b'\t') {
        range.end -= 1;
    }
    range
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_headers_and_bounds_the_body() {
        let mut capture = Capture::new(true, true, 4);
        capture.head_arrived(b"HTTP/1.1 200 OK\r\nContent-Type:  json \r\nX-Id: 7\r\n\r\n");
        capture.body_data(b"abc");
        capture.body_data(b"def");
        assert_eq!(capture.body(), b"abcd");
        assert!(capture.truncated());
        let mut ranges: [(Range<usize>, Range<usize>); MAX_CAPTURED_HEADERS] =
            std::array::from_fn(|_| (0..0, 0..0));
        let n = capture.header_ranges(&mut ranges);
        assert_eq!(n, 2);
        let head = capture.head_bytes();
        assert_eq!(&head[ranges[0].0.clone()], b"Content-Type");
        assert_eq!(&head[ranges[0].1.clone()], b"json");
        assert_eq!(&head[ranges[1].1.clone()], b"7");
        capture.clear();
        assert!(capture.body().is_empty() && !capture.truncated());
    }
}
