//! Parses HTTP/1.x responses from a connection's read buffer and frames their
//! bodies (Content-Length, chunked, or until close; none for HEAD, 1xx, 204,
//! 304). Bodies are counted, and stored only when a check or a script
//! reads them ([`Capture`]). Interim 1xx responses are skipped.

use super::capture::Capture;
use super::chunked::ChunkedDecoder;
use super::head::{self, Field};

/// Largest response head accepted; beyond it the response is malformed.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How the body of the current response ends.
#[derive(Debug, Clone)]
pub(crate) enum Framing {
    /// No body (HEAD, 1xx, 204, 304, or Content-Length: 0).
    Empty,
    Length {
        remaining: u64,
    },
    Chunked(ChunkedDecoder),
    /// The body ends when the server closes the connection.
    UntilClose,
}

/// Why a response could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseError {
    /// Not valid HTTP/1.x (bad status line, headers, framing or chunk sizes).
    Malformed,
    /// The connection closed before the response was complete.
    ClosedEarly,
    /// The body did not decode by its `Content-Encoding` (decoded for
    /// `--decode` or a check; the reason is the capture's).
    Undecodable,
}

/// A complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Complete {
    /// The status code of the final (non-1xx) response.
    pub status: u16,
    /// The connection may carry another request.
    pub keep_alive: bool,
    /// The body's length as received (after de-chunking).
    pub body_bytes: u64,
}

/// What [`ResponseParser::advance`] found in the input it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseProgress {
    /// More bytes are needed; unconsumed input must be kept and extended.
    Partial,
    /// The response ended; bytes after it belong to the next one.
    Complete(Complete),
}

#[derive(Debug, Clone)]
enum State {
    Head,
    Body(Framing),
}

/// Incremental parser of one response at a time.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    head_request: bool,
    state: State,
    status: u16,
    keep_alive: bool,
    body_bytes: u64,
    /// What is kept of the response (`None`: counted only, the fast path).
    capture: Option<Box<Capture>>,
}

impl ResponseParser {
    /// A parser for responses to requests of this kind (HEAD responses have no body).
    pub fn new(head_request: bool) -> ResponseParser {
        ResponseParser {
            head_request,
            state: State::Head,
            status: 0,
            keep_alive: false,
            body_bytes: 0,
            capture: None,
        }
    }

    /// The response read so far, once its final head came: its status and
    /// body bytes (`--sse-for` ends a stream in its body).
    pub(crate) fn in_body(&self) -> Option<(u16, u64)> {
        matches!(self.state, State::Body(_)).then_some((self.status, self.body_bytes))
    }

    /// `--sse`: the next response is a new stream (its watch cleared).
    pub(crate) fn new_stream(&mut self) {
        if let Some(capture) = &mut self.capture {
            capture.clear_stream();
        }
    }

    /// `--sse-reconnect`: the stream watched, which the next response
    /// goes on with.
    pub(crate) fn stream_mut(&mut self) -> Option<&mut crate::stream::StreamWatch> {
        self.capture.as_mut().and_then(|c| c.stream_mut())
    }

    /// Keeps what `capture` asks of every response from now on.
    pub(crate) fn set_capture(&mut self, capture: Capture) {
        self.capture = Some(Box::new(capture));
    }

    /// What was kept of the response just completed (with a capture set).
    pub(crate) fn capture(&self) -> Option<&Capture> {
        self.capture.as_deref()
    }

    /// Says whether the next request is a HEAD (its response has no body).
    pub(crate) fn set_head_request(&mut self, head_request: bool) {
        self.head_request = head_request;
    }

    /// Prepares for the next response on the connection.
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.status = 0;
        self.keep_alive = false;
        self.body_bytes = 0;
        if let Some(capture) = &mut self.capture {
            capture.clear();
        }
    }

    /// Consumes what it can of `input`; returns the bytes consumed and whether
    /// the response is complete. Bytes after a complete response stay unconsumed.
    pub fn advance(&mut self, input: &[u8]) -> Result<(usize, ResponseProgress), ResponseError> {
        let mut at = 0;
        loop {
            if let State::Head = self.state {
                match self.parse_head(&input[at..])? {
                    Some(head_len) => at += head_len,
                    None => return Ok((at, ResponseProgress::Partial)),
                }
                continue;
            }
            let State::Body(framing) = &mut self.state else {
                unreachable!("head handled above")
            };
            let (used, done) = match framing {
                Framing::Empty => (0, true),
                Framing::Length { remaining } => {
                    let take = (*remaining).min((input.len() - at) as u64);
                    if let Some(capture) = &mut self.capture {
                        capture.body_piece(&input[at..at + take as usize], true);
                    }
                    *remaining -= take;
                    self.body_bytes += take;
                    (take as usize, *remaining == 0)
                }
                Framing::Chunked(decoder) => {
                    let (used, data) = match &mut self.capture {
                        Some(capture) => decoder.advance_with(&input[at..], |data, ends| {
                            capture.body_piece(data, ends)
                        }),
                        None => decoder.advance(&input[at..]),
                    }
                    .map_err(|_| ResponseError::Malformed)?;
                    self.body_bytes += data;
                    (used, decoder.is_done())
                }
                Framing::UntilClose => {
                    let rest = input.len() - at;
                    if let Some(capture) = &mut self.capture {
                        capture.body_piece(&input[at..], true);
                    }
                    self.body_bytes += rest as u64;
                    (rest, false)
                }
            };
            at += used;
            let progress = if done {
                self.body_ended()?;
                ResponseProgress::Complete(self.complete())
            } else {
                ResponseProgress::Partial
            };
            return Ok((at, progress));
        }
    }

    /// The peer closed the connection: the response is complete only when its
    /// body was delimited by the close.
    pub(crate) fn finish_on_close(&mut self) -> Result<Complete, ResponseError> {
        match self.state {
            State::Body(Framing::UntilClose) => {
                self.body_ended()?;
                Ok(self.complete())
            }
            _ => Err(ResponseError::ClosedEarly),
        }
    }

    /// The body is complete: a capture that decodes it finishes decoding.
    fn body_ended(&mut self) -> Result<(), ResponseError> {
        match &mut self.capture {
            Some(capture) => capture
                .body_ended()
                .map_err(|()| ResponseError::Undecodable),
            None => Ok(()),
        }
    }

    fn complete(&self) -> Complete {
        Complete {
            status: self.status,
            keep_alive: self.keep_alive,
            body_bytes: self.body_bytes,
        }
    }

    /// Parses a response head; `None` when it is not all there yet. Interim 1xx
    /// responses are consumed and leave the parser waiting for the next head.
    fn parse_head(&mut self, input: &[u8]) -> Result<Option<usize>, ResponseError> {
        let mut fields = FramingFields::default();
        let head = match head::parse(input, |field, value| fields.record(field, value)) {
            Ok(Some(head)) => head,
            Ok(None) if input.len() < MAX_HEAD_BYTES => return Ok(None),
            _ => return Err(ResponseError::Malformed),
        };
        let status = head.status;
        if !(100..=599).contains(&status) {
            return Err(ResponseError::Malformed);
        }
        if (100..200).contains(&status) && status != 101 {
            return Ok(Some(head.len));
        }
        if fields.bad_length {
            return Err(ResponseError::Malformed);
        }
        // Without a Connection header saying otherwise, HTTP/1.0 closes.
        let mut close = fields.close.unwrap_or(head.minor_version == 0);
        let bodiless = self.head_request || status == 204 || status == 304 || status == 101;
        let framing = if bodiless {
            Framing::Empty
        } else if fields.chunked {
            Framing::Chunked(ChunkedDecoder::default())
        } else if let Some(remaining) = fields.length {
            if remaining == 0 {
                Framing::Empty
            } else {
                Framing::Length { remaining }
            }
        } else {
            close = true;
            Framing::UntilClose
        };
        if let Some(capture) = &mut self.capture {
            capture.head_arrived(&input[..head.len], fields.encoded);
        }
        self.status = status;
        self.keep_alive = !close && status != 101;
        self.state = State::Body(framing);
        Ok(Some(head.len))
    }
}

/// What the framing headers of a head said, gathered while the head is
/// parsed and judged once it is complete and not interim: a bad
/// Content-Length in a head still arriving, or in a skipped 1xx, is no error.
#[derive(Debug, Default)]
struct FramingFields {
    /// The Content-Length, when every one of them gave this same value.
    length: Option<u64>,
    /// Some Content-Length was not a number, or differed from another.
    bad_length: bool,
    /// The last Transfer-Encoding ends in `chunked`.
    chunked: bool,
    /// The last Connection header naming `close` or `keep-alive` said close.
    close: Option<bool>,
    /// A Content-Encoding field came: a capture that decodes reads it.
    encoded: bool,
}

impl FramingFields {
    fn record(&mut self, field: Field, value: &[u8]) {
        match field {
            Field::ContentLength => match parse_length(value) {
                Some(value) if self.length.is_none_or(|seen| seen == value) => {
                    self.length = Some(value)
                }
                _ => self.bad_length = true,
            },
            Field::TransferEncoding => self.chunked = last_token_is(value, b"chunked"),
            Field::Connection => {
                if let Some(close) = connection_close(value) {
                    self.close = Some(close);
                }
            }
            Field::ContentEncoding => self.encoded = true,
        }
    }
}

/// What a Connection value says about closing: `Some(true)` when it names
/// `close`, else `Some(false)` when it names `keep-alive`, else nothing.
fn connection_close(value: &[u8]) -> Option<bool> {
    // A lone token, the usual value, needs no splitting.
    if value.eq_ignore_ascii_case(b"keep-alive") {
        return Some(false);
    }
    if value.eq_ignore_ascii_case(b"close") {
        return Some(true);
    }
    // One pass over the tokens for both.
    let mut keep_alive = false;
    for token in tokens(value) {
        if token.eq_ignore_ascii_case(b"close") {
            return Some(true);
        }
        keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
    }
    keep_alive.then_some(false)
}

/// A Content-Length value: decimal digits with optional surrounding spaces.
fn parse_length(value: &[u8]) -> Option<u64> {
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|b| *b == b',').map(|t| t.trim_ascii())
}

fn last_token_is(value: &[u8], token: &[u8]) -> bool {
    // The last token is what follows the last comma: found from the end.
    value
        .rsplit(|b| *b == b',')
        .next()
        .is_some_and(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `piece` bytes the way a connection does:
    /// unconsumed bytes are kept and extended by the next read.
    fn parse_split(
        input: &[u8],
        piece: usize,
        head: bool,
    ) -> (Result<Complete, ResponseError>, usize) {
        let mut parser = ResponseParser::new(head);
        let mut buffer = Vec::new();
        let mut consumed_total = 0;
        for part in input.chunks(piece) {
            buffer.extend_from_slice(part);
            let (used, progress) = match parser.advance(&buffer) {
                Ok(step) => step,
                Err(e) => return (Err(e), consumed_total),
            };
            buffer.drain(..used);
            consumed_total += used;
            if let ResponseProgress::Complete(done) = progress {
                return (Ok(done), consumed_total);
            }
        }
        (parser.finish_on_close(), consumed_total)
    }

    fn parse_all_splits(input: &[u8], head: bool) -> Result<Complete, ResponseError> {
        let whole = parse_split(input, input.len(), head);
        for piece in 1..input.len() {
            assert_eq!(parse_split(input, piece, head).0, whole.0, "piece {piece}");
        }
        whole.0
    }

    #[test]
    fn content_length_body() {
        let done = parse_all_splits(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false);
        assert_eq!(
            done,
            Ok(Complete {
                status: 200,
                keep_alive: true,
                body_bytes: 5
            })
        );
    }

    #[test]
    fn chunked_body_with_trailers() {
        let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n";
        let done = parse_all_splits(input, false).unwrap();
        assert_eq!(
            (done.status, done.body_bytes, done.keep_alive),
            (200, 3, true)
        );
    }

    #[test]
    fn close_delimited_body() {
        let done = parse_all_splits(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", false).unwrap();
        assert_eq!((done.body_bytes, done.keep_alive), (13, false));
    }

    #[test]
    fn bodiless_responses() {
        for input in [
            &b"HTTP/1.1 204 No Content\r\n\r\n"[..],
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
        ] {
            assert_eq!(parse_all_splits(input, false).unwrap().body_bytes, 0);
        }
        let done =
            parse_all_splits(b"HTTP/1.1 200 OK\r\nContent-Length: 515\r\n\r\n", true).unwrap();
        assert_eq!(done.body_bytes, 0);
    }

    #[test]
    fn interim_responses_are_skipped() {
        let input = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(parse_all_splits(input, false).unwrap().status, 201);
    }

    #[test]
    fn keep_alive_rules() {
        let close = parse_all_splits(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(!close.unwrap().keep_alive);
        let old = parse_all_splits(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false);
        assert!(!old.unwrap().keep_alive);
        let old_ka = parse_all_splits(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(old_ka.unwrap().keep_alive);
    }

    #[test]
    fn content_length_values() {
        assert_eq!(parse_length(b" 515 "), Some(515));
        assert_eq!(parse_length(b"18446744073709551615"), None, "20 digits");
        for bad in [&b""[..], b"+4", b"-1", b"1 2", b"0x10"] {
            assert_eq!(
                parse_length(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn leaves_the_next_response_unconsumed() {
        let input = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n";
        let mut parser = ResponseParser::new(false);
        let (used, progress) = parser.advance(input).unwrap();
        assert!(matches!(progress, ResponseProgress::Complete(_)));
        assert_eq!(used, input.len() - 17);
    }

    #[test]
    fn errors() {
        let cases: [(&[u8], ResponseError); 5] = [
            (b"garbage\r\n\r\n", ResponseError::Malformed),
            (b"HTTP/1.1 999 Nope\r\n\r\n", ResponseError::Malformed),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
                ResponseError::Malformed,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
                ResponseError::ClosedEarly,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
                ResponseError::Malformed,
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_split(input, input.len(), false).0, Err(expected));
        }
        let mut parser = ResponseParser::new(false);
        let huge = [
            b"HTTP/1.1 200 OK\r\nX: ".as_slice(),
            &[b'a'; MAX_HEAD_BYTES],
        ]
        .concat();
        assert_eq!(parser.advance(&huge), Err(ResponseError::Malformed));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The framing headers judged the way the parser did when it had all of
    /// them in hand at once (before head.rs): (length, chunked, close), or
    /// `None` for a malformed Content-Length.
    fn judged_all_at_once(
        fields: &[(Field, Vec<u8>)],
        http11: bool,
    ) -> Option<(Option<u64>, bool, bool)> {
        let has_token =
            |value: &[u8], token: &[u8]| tokens(value).any(|t| t.eq_ignore_ascii_case(token));
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut close = !http11;
        for (field, value) in fields {
            match field {
                Field::ContentLength => {
                    let value = parse_length(value)?;
                    if length.is_some_and(|seen| seen != value) {
                        return None;
                    }
                    length = Some(value);
                }
                Field::TransferEncoding => {
                    chunked = tokens(value)
                        .last()
                        .is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
                }
                Field::Connection => {
                    if has_token(value, b"close") {
                        close = true;
                    } else if has_token(value, b"keep-alive") {
                        close = false;
                    }
                }
                // Not a framing field.
                Field::ContentEncoding => {}
            }
        }
        Some((length, chunked, close))
    }

    fn framing_field() -> impl Strategy<Value = (Field, Vec<u8>)> {
        let token = prop::sample::select(vec![
            "close",
            "Close",
            "keep-alive",
            "Keep-Alive",
            "chunked",
            "CHUNKED",
            "gzip",
            "x",
            "",
        ]);
        let list = proptest::collection::vec((token, "[ \t]{0,2}", "[ \t]{0,2}"), 1..4).prop_map(
            |tokens| {
                let tokens: Vec<String> = tokens
                    .into_iter()
                    .map(|(token, before, after)| format!("{before}{token}{after}"))
                    .collect();
                tokens.join(",").into_bytes()
            },
        );
        let length = prop_oneof![
            "[0-9]{1,3}".prop_map(String::into_bytes),
            "[ 0-9a-f+-]{0,4}".prop_map(String::into_bytes),
        ];
        prop_oneof![
            length.prop_map(|value| (Field::ContentLength, value)),
            list.clone()
                .prop_map(|value| (Field::TransferEncoding, value)),
            list.prop_map(|value| (Field::Connection, value)),
        ]
    }

    proptest! {
        /// Recording the framing headers one at a time as the head parser
        /// finds them, then judging, decides as judging them all at once did.
        #[test]
        fn framing_fields_judge_as_before(
            fields in proptest::collection::vec(framing_field(), 0..5),
            http11 in any::<bool>(),
        ) {
            let mut recorded = FramingFields::default();
            for (field, value) in &fields {
                recorded.record(*field, value);
            }
            let judged = (!recorded.bad_length).then(|| {
                (recorded.length, recorded.chunked, recorded.close.unwrap_or(!http11))
            });
            prop_assert_eq!(judged, judged_all_at_once(&fields, http11));
        }
    }

    /// A valid response: status, some headers, and a body framed by
    /// Content-Length or by chunks of the given sizes.
    fn response() -> impl Strategy<Value = (Vec<u8>, u16, u64)> {
        let status = prop_oneof![Just(200u16), Just(201), Just(404), Just(500)];
        let body = proptest::collection::vec(any::<u8>(), 0..300);
        let chunks = proptest::collection::vec(1usize..40, 0..6);
        let headers = proptest::collection::vec("[A-Za-z]{1,8}", 0..4);
        (status, body, prop::bool::ANY, chunks, headers).prop_map(
            |(status, body, chunked, chunk_sizes, names)| {
                let mut out = format!("HTTP/1.1 {status} X\r\n").into_bytes();
                for name in names {
                    out.extend_from_slice(format!("X-{name}: v\r\n").as_bytes());
                }
                if chunked {
                    out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                    let mut rest = &body[..];
                    for size in chunk_sizes.iter().cycle() {
                        if rest.is_empty() {
                            break;
                        }
                        let take = (*size).min(rest.len());
                        out.extend_from_slice(format!("{take:x}\r\n").as_bytes());
                        out.extend_from_slice(&rest[..take]);
                        out.extend_from_slice(b"\r\n");
                        rest = &rest[take..];
                    }
                    if !rest.is_empty() {
                        out.extend_from_slice(format!("{:x}\r\n", rest.len()).as_bytes());
                        out.extend_from_slice(rest);
                        out.extend_from_slice(b"\r\n");
                    }
                    out.extend_from_slice(b"0\r\n\r\n");
                } else {
                    out.extend_from_slice(
                        format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
                    );
                    out.extend_from_slice(&body);
                }
                (out, status, body.len() as u64)
            },
        )
    }

    proptest! {
        #[test]
        fn any_split_into_reads_parses_the_same((bytes, status, body_len) in response(), cuts in proptest::collection::vec(any::<usize>(), 0..8)) {
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            points.push(bytes.len());
            points.sort_unstable();
            let mut parser = ResponseParser::new(false);
            let mut pending = Vec::new();
            let mut from = 0;
            let mut done = None;
            for to in points {
                pending.extend_from_slice(&bytes[from..to]);
                from = to;
                let (used, progress) = parser.advance(&pending).expect("valid response");
                pending.drain(..used);
                if let ResponseProgress::Complete(complete) = progress {
                    done = Some(complete);
                    break;
                }
            }
            let done = done.expect("complete once all bytes are in");
            prop_assert_eq!(done.status, status);
            prop_assert_eq!(done.body_bytes, body_len);
            prop_assert!(done.keep_alive);
            prop_assert!(pending.is_empty());
        }
    }
}
