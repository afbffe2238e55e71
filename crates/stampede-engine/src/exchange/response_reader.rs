//! Reading one HTTP/1.1 response from the bytes a driver hands in: the one
//! rule of every HTTP/1.1 driver (the tokio slot in drive/connection.rs, the
//! reactors' `Ledger`). It stamps the response's first byte, counts its
//! bytes, parses them, and keeps the start of an answer that is not HTTP for
//! the error's sample. Bytes read beyond a complete response belong to the
//! next response of a pipelined batch: [`ResponseReader::carry`] moves them
//! to its count. No I/O: the drivers read and hand the bytes in.

use crate::exchange::read_buffer::ReadBuffer;
use crate::exchange::request_books::Clocks;
use crate::http1::{malformed_start, Complete, ResponseError, ResponseParser, ResponseProgress};
use stampede_metrics::ErrorKind;
use std::time::Instant;

#[derive(Debug)]
pub(crate) struct ResponseReader {
    /// The response's parser; its capture is what checks and redirects read.
    pub parser: ResponseParser,
    /// Bytes of an incomplete head, the next response's, or bytes no
    /// request asked for.
    leftover: ReadBuffer,
    /// The first bytes of a response that did not parse, for the sample.
    malformed_start: Option<Vec<u8>>,
}

impl ResponseReader {
    pub(crate) fn new(head_request: bool) -> ResponseReader {
        ResponseReader {
            parser: ResponseParser::new(head_request),
            leftover: ReadBuffer::default(),
            malformed_start: None,
        }
    }

    /// Bytes read at `now` into a buffer of the driver's own: parsed on
    /// their own when nothing is pending, after what is pending otherwise.
    pub(crate) fn received(
        &mut self,
        bytes: &[u8],
        clocks: &mut Clocks,
        now: Instant,
    ) -> Result<ResponseProgress, ErrorKind> {
        let first = stamp(clocks, now, bytes.len());
        let progress = self.leftover.parse_read(&mut self.parser, bytes);
        if let Some(start) = malformed_start(first, &progress, bytes) {
            self.malformed_start = Some(start.to_vec());
        }
        progress.map_err(response_error_kind)
    }

    /// Room to read into in place (a TLS stream's reads); then
    /// [`ResponseReader::filled`].
    pub(crate) fn spare(&mut self) -> &mut [u8] {
        self.leftover.spare()
    }

    /// `n` bytes were read at `now` into [`ResponseReader::spare`]: parsed
    /// after what was pending.
    pub(crate) fn filled(
        &mut self,
        n: usize,
        clocks: &mut Clocks,
        now: Instant,
    ) -> Result<ResponseProgress, ErrorKind> {
        let first = stamp(clocks, now, n);
        self.leftover.filled(n);
        self.parse_kept(first)
    }

    /// Keeps bytes that arrived while no response was awaited (the answer
    /// of a server that replied before the request was all out, or bytes no
    /// request asked for); they count when parsed.
    pub(crate) fn keep_early(&mut self, bytes: &[u8]) {
        self.leftover.append(bytes);
    }

    /// Parses at `now` what is pending (bytes kept early, or carried from
    /// the last response of a batch), counting it for this response.
    pub(crate) fn parse_pending(
        &mut self,
        clocks: &mut Clocks,
        now: Instant,
    ) -> Result<ResponseProgress, ErrorKind> {
        let pending = self.leftover.pending().len();
        if pending == 0 {
            return Ok(ResponseProgress::Partial);
        }
        let first = stamp(clocks, now, pending);
        self.parse_kept(first)
    }

    /// The response whose `clocks` these are completed and another of its
    /// batch follows: the bytes already read beyond it are the next one's.
    pub(crate) fn carry(&self, clocks: &mut Clocks) {
        let carried = self.leftover.pending().len() as u64;
        clocks.bytes_received = clocks.bytes_received.saturating_sub(carried);
    }

    /// The server ended the stream: a response framed by the close ends here.
    pub(crate) fn end_of_stream(&mut self) -> Result<Complete, ErrorKind> {
        match self.parser.finish_on_close() {
            Ok(mut done) => {
                done.keep_alive = false;
                Ok(done)
            }
            Err(error) => Err(response_error_kind(error)),
        }
    }

    /// The start of the last answer that was not HTTP, once.
    pub(crate) fn take_malformed_start(&mut self) -> Option<Vec<u8>> {
        self.malformed_start.take()
    }

    /// True when bytes are pending that no response has claimed.
    pub(crate) fn has_pending(&self) -> bool {
        !self.leftover.pending().is_empty()
    }

    /// Forgets what is pending (the connection is being replaced).
    pub(crate) fn clear(&mut self) {
        self.leftover.clear();
    }

    /// Swaps the pending bytes with a parked connection's.
    pub(crate) fn swap_pending(&mut self, parked: &mut ReadBuffer) {
        std::mem::swap(&mut self.leftover, parked);
    }

    /// Parses what is pending; `first`: these are the response's first bytes.
    fn parse_kept(&mut self, first: bool) -> Result<ResponseProgress, ErrorKind> {
        let progress = self.leftover.parse_pending(&mut self.parser);
        // A parse that fails consumes nothing: what is pending is the answer.
        if let Some(start) = malformed_start(first, &progress, self.leftover.pending()) {
            self.malformed_start = Some(start.to_vec());
        }
        progress.map_err(response_error_kind)
    }
}

/// Stamps the response's first byte at `now` and counts `n` bytes; true
/// when these are its first.
fn stamp(clocks: &mut Clocks, now: Instant, n: usize) -> bool {
    let first = clocks.first_byte.is_none();
    clocks.first_byte.get_or_insert(now);
    clocks.bytes_received += n as u64;
    first
}

/// The error class of a response that could not be read.
fn response_error_kind(error: ResponseError) -> ErrorKind {
    match error {
        ResponseError::Malformed => ErrorKind::MalformedResponse,
        ResponseError::ClosedEarly => ErrorKind::ClosedEarly,
        ResponseError::Undecodable => ErrorKind::UndecodableBody,
    }
}

#[cfg(test)]
mod tests {
    //! The reader fed bytes as a socket would hand them in, without a
    //! socket: every split of a response, pipelined and chunked responses,
    //! answers that are not HTTP, early closes, 1xx, HEAD and 304.

    use super::*;
    use crate::http1::Complete;
    use std::time::Duration;

    const PAGE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    const CHUNKED: &[u8] =
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";

    /// A clock that moves 1 ms per read, so the first byte's stamp shows.
    struct Feed {
        reader: ResponseReader,
        clocks: Clocks,
        epoch: Instant,
        reads: u32,
    }

    impl Feed {
        fn new(head_request: bool) -> Feed {
            let epoch = Instant::now();
            Feed {
                reader: ResponseReader::new(head_request),
                clocks: Clocks::new(epoch),
                epoch,
                reads: 0,
            }
        }

        fn now(&mut self) -> Instant {
            self.reads += 1;
            self.epoch + Duration::from_millis(u64::from(self.reads))
        }

        /// Hands `bytes` in through the scratch-buffer path.
        fn read(&mut self, bytes: &[u8]) -> Result<ResponseProgress, ErrorKind> {
            let now = self.now();
            self.reader.received(bytes, &mut self.clocks, now)
        }

        /// Hands `bytes` in through the in-place path (TLS reads).
        fn read_in_place(&mut self, mut bytes: &[u8]) -> Result<ResponseProgress, ErrorKind> {
            let now = self.now();
            let mut progress = Ok(ResponseProgress::Partial);
            while !bytes.is_empty() {
                let spare = self.reader.spare();
                let n = spare.len().min(bytes.len());
                spare[..n].copy_from_slice(&bytes[..n]);
                bytes = &bytes[n..];
                progress = self.reader.filled(n, &mut self.clocks, now);
            }
            progress
        }

        fn first_byte_ms(&self) -> u128 {
            let first = self.clocks.first_byte.expect("a first byte");
            (first - self.epoch).as_millis()
        }
    }

    fn complete(status: u16, body_bytes: u64, keep_alive: bool) -> ResponseProgress {
        ResponseProgress::Complete(Complete {
            status,
            keep_alive,
            body_bytes,
        })
    }

    #[test]
    fn a_response_split_at_every_offset_reads_the_same_on_both_paths() {
        for response in [PAGE, CHUNKED] {
            for at in 0..=response.len() {
                for in_place in [false, true] {
                    let mut feed = Feed::new(false);
                    let (a, b) = response.split_at(at);
                    let mut progress = Ok(ResponseProgress::Partial);
                    for part in [a, b].into_iter().filter(|p| !p.is_empty()) {
                        assert_eq!(progress, Ok(ResponseProgress::Partial), "split at {at}");
                        progress = if in_place {
                            feed.read_in_place(part)
                        } else {
                            feed.read(part)
                        };
                    }
                    assert_eq!(progress, Ok(complete(200, 5, true)), "split at {at}");
                    assert_eq!(feed.clocks.bytes_received, response.len() as u64);
                    assert_eq!(feed.first_byte_ms(), 1, "stamped at the first read");
                    assert!(!feed.reader.has_pending());
                }
            }
        }
    }

    #[test]
    fn pipelined_responses_are_counted_each_its_own_bytes() {
        let mut both = PAGE.to_vec();
        both.extend_from_slice(CHUNKED);
        let mut feed = Feed::new(false);
        assert_eq!(feed.read(&both), Ok(complete(200, 5, true)));
        assert!(feed.reader.has_pending(), "the second response is kept");
        feed.reader.carry(&mut feed.clocks);
        assert_eq!(feed.clocks.bytes_received, PAGE.len() as u64);
        // The next response of the batch, from what was carried.
        let mut next = Clocks::new(feed.epoch);
        feed.reader.parser.reset();
        let now = feed.now();
        let progress = feed.reader.parse_pending(&mut next, now);
        assert_eq!(progress, Ok(complete(200, 5, true)));
        assert_eq!(next.bytes_received, CHUNKED.len() as u64);
        assert_eq!(
            next.first_byte,
            Some(now),
            "its first byte is when it is parsed"
        );
    }

    #[test]
    fn an_answer_that_is_not_http_is_kept_for_the_sample_once() {
        for in_place in [false, true] {
            let mut feed = Feed::new(false);
            let tls_alert = [21u8, 3, 3, 0, 2, 2, 40];
            let progress = if in_place {
                feed.read_in_place(&tls_alert)
            } else {
                feed.read(&tls_alert)
            };
            assert_eq!(progress, Err(ErrorKind::MalformedResponse));
            assert_eq!(feed.reader.take_malformed_start(), Some(tls_alert.to_vec()));
            assert_eq!(feed.reader.take_malformed_start(), None, "taken once");
        }
        // Garbage after a good start is malformed, but no first bytes to show.
        let mut feed = Feed::new(false);
        assert_eq!(
            feed.read(b"HTTP/1.1 200 OK\r\n"),
            Ok(ResponseProgress::Partial)
        );
        assert_eq!(
            feed.read(b"\x00\x01 nonsense\r\n\r\n"),
            Err(ErrorKind::MalformedResponse)
        );
        assert_eq!(feed.reader.take_malformed_start(), None);
        // A long answer: only its first 32 bytes are kept.
        let mut feed = Feed::new(false);
        let long = [b'x'; 100];
        assert_eq!(feed.read(&long), Err(ErrorKind::MalformedResponse));
        assert_eq!(
            feed.reader.take_malformed_start().map(|s| s.len()),
            Some(32)
        );
    }

    #[test]
    fn the_close_ends_a_body_framed_by_it_and_cuts_any_other() {
        let mut feed = Feed::new(false);
        assert_eq!(
            feed.read(b"HTTP/1.1 200 OK\r\n\r\nuntil the close"),
            Ok(ResponseProgress::Partial)
        );
        assert_eq!(
            feed.reader.end_of_stream(),
            Ok(Complete {
                status: 200,
                keep_alive: false,
                body_bytes: 15
            })
        );
        let mut feed = Feed::new(false);
        assert_eq!(
            feed.read(&PAGE[..PAGE.len() - 2]),
            Ok(ResponseProgress::Partial)
        );
        assert_eq!(feed.reader.end_of_stream(), Err(ErrorKind::ClosedEarly));
        let mut feed = Feed::new(false);
        assert_eq!(feed.read(b"HTTP/1.1 200"), Ok(ResponseProgress::Partial));
        assert_eq!(feed.reader.end_of_stream(), Err(ErrorKind::ClosedEarly));
    }

    #[test]
    fn interim_answers_head_and_not_modified_have_no_body_to_wait_for() {
        let mut feed = Feed::new(false);
        let mut continued = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
        continued.extend_from_slice(PAGE);
        assert_eq!(feed.read(&continued), Ok(complete(200, 5, true)));
        assert_eq!(feed.clocks.bytes_received, continued.len() as u64);
        let mut feed = Feed::new(true);
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(feed.read(head), Ok(complete(200, 0, true)));
        let mut feed = Feed::new(false);
        let not_modified = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(feed.read(not_modified), Ok(complete(304, 0, true)));
    }

    #[test]
    fn bytes_kept_early_count_when_parsed() {
        let mut feed = Feed::new(false);
        let too_large =
            b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        feed.reader.keep_early(too_large);
        assert_eq!(feed.clocks.bytes_received, 0, "not counted while kept");
        let now = feed.now();
        let progress = feed.reader.parse_pending(&mut feed.clocks, now);
        assert_eq!(progress, Ok(complete(413, 0, false)));
        assert_eq!(feed.clocks.bytes_received, too_large.len() as u64);
        let now = feed.now();
        let nothing = feed.reader.parse_pending(&mut feed.clocks, now);
        assert_eq!(nothing, Ok(ResponseProgress::Partial), "nothing pending");
        assert_eq!(feed.clocks.bytes_received, too_large.len() as u64);
    }

    #[test]
    fn pending_bytes_are_forgotten_with_the_connection_or_parked_with_it() {
        let mut feed = Feed::new(false);
        feed.reader.keep_early(b"HTTP/1.1 20");
        assert!(feed.reader.has_pending());
        // Parked with its connection (a redirect's other origin), then back.
        let mut parked = ReadBuffer::default();
        feed.reader.swap_pending(&mut parked);
        assert!(!feed.reader.has_pending());
        assert_eq!(parked.pending(), b"HTTP/1.1 20");
        feed.reader.swap_pending(&mut parked);
        assert!(feed.reader.has_pending());
        // The connection is replaced: nothing of it is pending any more.
        feed.reader.clear();
        assert!(!feed.reader.has_pending());
        let now = feed.now();
        assert_eq!(
            feed.reader.parse_pending(&mut feed.clocks, now),
            Ok(ResponseProgress::Partial)
        );
        assert_eq!(feed.clocks.bytes_received, 0);
    }
}
