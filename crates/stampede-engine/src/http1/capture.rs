//! What a response parser keeps of a response when a check, an extractor
//! or a script reads it: the final head as it arrived and the
//! body's data (chunked framing removed), each up to `--capture-max`.
//! Without a capture the parser only counts, as before.
//!
//! An encoded body (`Content-Encoding`) is decoded here, the one
//! place every HTTP/1.1 path parses through: for checks, only until the
//! kept body is full; with `--decode`, all of it, its decoded bytes
//! counted. A body that does not decode fails the response
//! ([`Capture::body_ended`]).

use super::decode::{content_encodings, decoder_for, BodyDecoder, DecodeError};
use crate::stream::StreamWatch;
use std::ops::Range;

/// Headers a captured head is split into, at most (the parser refuses more).
pub(crate) const MAX_CAPTURED_HEADERS: usize = 100;

/// The captured parts of the response being parsed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Capture {
    keep_head: bool,
    keep_body: bool,
    max: usize,
    head: Vec<u8>,
    body: Vec<u8>,
    /// The body was longer than `max`: checks see its first `max` bytes.
    truncated: bool,
    /// `--decode`: every body is decoded and its decoded bytes counted.
    count_decoded: bool,
    /// What the response's `Content-Encoding` asks (read from its head
    /// when something decodes).
    coding: Coding,
    /// Decoded body bytes of this response (the body as it came when not
    /// encoded); counted with `count_decoded`.
    decoded: u64,
    /// Body bytes have reached the decoder.
    fed: bool,
    /// Checks only: the kept body is full, the rest is not decoded.
    stopped: bool,
    /// Why the body did not decode.
    failure: Option<DecodeError>,
    /// `--sse`: the body watched as a stream of events.
    stream: Option<Box<StreamWatch>>,
}

/// The coding of the response being parsed.
#[derive(Debug, Default)]
enum Coding {
    /// Not encoded, or nothing decodes it.
    #[default]
    Plain,
    Encoded(Box<BodyDecoder>),
    /// A coding stampede does not decode: an error once a body byte comes.
    Unknown(DecodeError),
}

impl Clone for Coding {
    /// A capture is cloned as a template, before any response: a decoder
    /// in the middle of a body is not carried over.
    fn clone(&self) -> Self {
        Coding::Plain
    }
}

impl Capture {
    /// Keeps the head, the body, or both, each up to `max` bytes.
    pub(crate) fn new(keep_head: bool, keep_body: bool, max: usize) -> Capture {
        Capture {
            keep_head,
            keep_body,
            max,
            ..Capture::default()
        }
    }

    /// Decodes every encoded body and counts its decoded bytes (`--decode`),
    /// keeping nothing.
    pub(crate) fn decoding() -> Capture {
        Capture {
            count_decoded: true,
            ..Capture::default()
        }
    }

    /// Watches every body as a stream of events (`--sse`), keeping nothing.
    pub(crate) fn streaming() -> Capture {
        Capture {
            stream: Some(Box::default()),
            ..Capture::default()
        }
    }

    /// What `--sse` watched of the last response.
    pub(crate) fn stream(&self) -> Option<&StreamWatch> {
        self.stream.as_deref()
    }

    /// The stream watched, to go on with it (`--sse-reconnect`).
    pub(crate) fn stream_mut(&mut self) -> Option<&mut StreamWatch> {
        self.stream.as_deref_mut()
    }

    /// Forgets the stream watched, but for its last event ID: the next
    /// response is a new stream (a reconnection does not clear it).
    pub(crate) fn clear_stream(&mut self) {
        if let Some(stream) = &mut self.stream {
            stream.clear();
        }
    }

    /// A new response: the buffers are emptied, their memory kept.
    pub(crate) fn clear(&mut self) {
        self.head.clear();
        self.body.clear();
        self.truncated = false;
        self.coding = Coding::Plain;
        self.decoded = 0;
        self.fed = false;
        self.stopped = false;
        self.failure = None;
    }

    /// The final head arrived; `encoded`: it has a Content-Encoding field
    /// (the parser saw it), else its body is plain with no scan of the head.
    pub(super) fn head_arrived(&mut self, head: &[u8], encoded: bool) {
        if let Some(stream) = &mut self.stream {
            stream.head(head);
        }
        if self.keep_head {
            self.head.clear();
            self.head
                .extend_from_slice(&head[..head.len().min(self.max.max(1024))]);
        }
        self.read_coding(head, encoded);
    }

    /// Body bytes; `ends_piece`: they end a chunk, or a read of a body
    /// not chunked (what `--sse` counts as events of a body not an event stream).
    pub(super) fn body_piece(&mut self, data: &[u8], ends_piece: bool) {
        if let Some(stream) = &mut self.stream {
            stream.body(data, ends_piece);
        }
        self.body_data(data);
    }

    pub(super) fn body_data(&mut self, data: &[u8]) {
        match &mut self.coding {
            Coding::Plain => {
                self.decoded += data.len() as u64;
                if self.keep_body {
                    keep_bounded(&mut self.body, self.max, &mut self.truncated, data);
                }
            }
            Coding::Unknown(why) => {
                if self.failure.is_none() && !data.is_empty() {
                    self.failure = Some(why.clone());
                }
            }
            Coding::Encoded(decoder) => {
                if self.failure.is_some() || self.stopped || data.is_empty() {
                    return;
                }
                self.fed = true;
                let (keep, max) = (self.keep_body, self.max);
                let (body, truncated, decoded) =
                    (&mut self.body, &mut self.truncated, &mut self.decoded);
                let fed = decoder.feed(data, &mut |out| {
                    *decoded += out.len() as u64;
                    if keep {
                        keep_bounded(body, max, truncated, out);
                    }
                });
                if let Err(why) = fed {
                    self.failure = Some(why);
                }
                // For checks alone, decoding stops once the kept body is full.
                self.stopped = self.truncated && !self.count_decoded;
            }
        }
    }

    /// Reads the response's `Content-Encoding` when something decodes its
    /// body (checks on the body, `--decode`).
    fn read_coding(&mut self, head: &[u8], encoded: bool) {
        if !(self.keep_body || self.count_decoded) {
            return;
        }
        if !encoded {
            self.coding = Coding::Plain;
            return;
        }
        self.coding = match decoder_for(content_encodings(head)) {
            Ok(Some(decoder)) => Coding::Encoded(Box::new(decoder)),
            Ok(None) => Coding::Plain,
            Err(why) => Coding::Unknown(why),
        };
    }

    /// The response's body is complete: an encoded one is finished (a
    /// stream cut short is an error). Err when the body did not decode.
    pub(super) fn body_ended(&mut self) -> Result<(), ()> {
        if let Coding::Encoded(decoder) = &mut self.coding {
            if self.fed && !self.stopped && self.failure.is_none() {
                let (keep, max) = (self.keep_body, self.max);
                let (body, truncated, decoded) =
                    (&mut self.body, &mut self.truncated, &mut self.decoded);
                let finished = decoder.finish(&mut |out| {
                    *decoded += out.len() as u64;
                    if keep {
                        keep_bounded(body, max, truncated, out);
                    }
                });
                if let Err(why) = finished {
                    self.failure = Some(why);
                }
            }
        }
        match self.failure {
            Some(_) => Err(()),
            None => Ok(()),
        }
    }

    /// Why the last response's body did not decode.
    pub(crate) fn decode_failure(&self) -> Option<&DecodeError> {
        self.failure.as_ref()
    }

    /// With `--decode`: the decoded body bytes of the last response, and
    /// whether it came encoded.
    pub(crate) fn decoded(&self) -> Option<(u64, bool)> {
        let encoded = self.fed && matches!(self.coding, Coding::Encoded(_));
        self.count_decoded.then_some((self.decoded, encoded))
    }

    /// The body kept (its first `--capture-max` bytes).
    pub(crate) fn body(&self) -> &[u8] {
        &self.body
    }

    #[cfg(test)]
    pub(crate) fn truncated(&self) -> bool {
        self.truncated
    }

    /// The header fields of the kept head, as `(name, value)` ranges into
    /// [`Capture::head_bytes`], written into `out`; returns how many.
    pub(crate) fn header_ranges(
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
    pub(crate) fn for_each_header(&self, mut field: impl FnMut(Range<usize>, Range<usize>)) {
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

    pub(crate) fn head_bytes(&self) -> &[u8] {
        &self.head
    }

    /// The first header named `name` (ASCII case-insensitive) of the kept head.
    pub(crate) fn header(&self, name: &str) -> Option<&[u8]> {
        let mut ranges: [(Range<usize>, Range<usize>); MAX_CAPTURED_HEADERS] =
            std::array::from_fn(|_| (0..0, 0..0));
        let n = self.header_ranges(&mut ranges);
        ranges[..n]
            .iter()
            .find(|(field, _)| self.head[field.clone()].eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, value)| &self.head[value.clone()])
    }

    /// This capture widened to keep whatever `other` keeps too.
    pub(crate) fn union(mut self, other: Capture) -> Capture {
        self.keep_head |= other.keep_head;
        self.keep_body |= other.keep_body;
        self.count_decoded |= other.count_decoded;
        self.max = self.max.max(other.max);
        self.stream = self.stream.or(other.stream);
        self
    }
}

/// Appends `data` to `body` up to `max` bytes; `truncated` once some did not fit.
fn keep_bounded(body: &mut Vec<u8>, max: usize, truncated: &mut bool, data: &[u8]) {
    let room = max.saturating_sub(body.len());
    if data.len() > room {
        *truncated = true;
    }
    body.extend_from_slice(&data[..data.len().min(room)]);
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
        capture.head_arrived(
            b"HTTP/1.1 200 OK\r\nContent-Type:  json \r\nX-Id: 7\r\n\r\n",
            false,
        );
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

    fn gzip(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    const GZIP_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n";

    #[test]
    fn checks_see_the_decoded_body_up_to_the_limit() {
        let plain: Vec<u8> = (0..5000u32)
            .flat_map(|i| i.to_string().into_bytes())
            .collect();
        let body = gzip(&plain);
        let mut capture = Capture::new(false, true, 100);
        capture.head_arrived(GZIP_HEAD, true);
        for piece in body.chunks(3) {
            capture.body_data(piece);
        }
        assert_eq!(capture.body_ended(), Ok(()));
        assert_eq!(capture.body(), &plain[..100]);
        assert!(capture.truncated());
        // Checks alone count nothing.
        assert_eq!(capture.decoded(), None);
    }

    #[test]
    fn decode_counts_every_byte_and_names_a_failure() {
        let plain = vec![b'z'; 70_000];
        let mut capture = Capture::decoding().union(Capture::new(true, false, 1024));
        capture.head_arrived(GZIP_HEAD, true);
        capture.body_data(&gzip(&plain));
        assert_eq!(capture.body_ended(), Ok(()));
        assert_eq!(capture.decoded(), Some((70_000, true)));
        assert!(capture.body().is_empty(), "--decode keeps nothing");
        capture.clear();
        capture.head_arrived(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", false);
        capture.body_data(b"abc");
        assert_eq!(capture.body_ended(), Ok(()));
        assert_eq!(capture.decoded(), Some((3, false)));
        capture.clear();
        capture.head_arrived(GZIP_HEAD, true);
        capture.body_data(b"not gzip");
        assert_eq!(capture.body_ended(), Err(()));
        let why = capture.decode_failure().expect("a reason").to_string();
        assert!(why.starts_with("gzip body did not decode"), "{why}");
    }
}
