//! The client side of one HTTP/2 connection (RFC 9113), without I/O.
//!
//! A driver (a reactor, or a test's blocking loop) moves bytes: what the
//! socket read goes to [`Connection::receive`], which reports [`Event`]s;
//! what [`Connection::output`] holds goes to the socket, and
//! [`Connection::consume_output`] drops what was written. Requests start with
//! [`Connection::start`] while [`Connection::can_start`] says the server's
//! SETTINGS_MAX_CONCURRENT_STREAMS and GOAWAY allow.
//!
//! Hot path: a frame read whole from the input slice is handled in place; only
//! a frame split across reads is copied (into one reused buffer), and so is a
//! header block split into CONTINUATION frames. Window updates are batched:
//! one per stream or connection once half of that window is consumed.

use bytes::Bytes;

use crate::config::Config;
use crate::error::{ConnectionError, ErrorCode};
use crate::event::{Captured, End, Event, ResponseHead};
use crate::frame::{self, setting, Head};
use crate::hpack::{Decoder, RequestBlock};

/// The largest window (RFC 9113 §6.9.1).
const MAX_WINDOW: i64 = (1 << 31) - 1;
/// The window every stream and the connection start with (§6.9.2).
const DEFAULT_WINDOW: u32 = 65_535;
/// The HPACK table size we allow the server's encoder (our default SETTINGS).
const HEADER_TABLE_SIZE: usize = 4_096;

/// Why a request could not start on this connection now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartError {
    /// As many streams are open as the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS allows: wait for one to end.
    Busy,
    /// The server sent GOAWAY: start it on a new connection.
    GoingAway,
    /// Stream ids are used up (2^31): open a new connection.
    IdsExhausted,
    /// The connection failed or closed.
    Closed,
}

/// The server's settings as last received (defaults until then).
#[derive(Debug, Clone, Copy)]
struct PeerSettings {
    max_frame_size: u32,
    initial_window: u32,
    max_concurrent: u32,
}

/// One open stream: the request's body still to send, both windows, and
/// what has been read of the response.
#[derive(Debug)]
struct Stream {
    id: u32,
    send_window: i64,
    recv_window: i64,
    /// Received DATA not yet given back with WINDOW_UPDATE.
    recv_consumed: u32,
    /// The request body, and how much of it is sent.
    body: Option<Bytes>,
    sent: usize,
    /// END_STREAM sent.
    local_done: bool,
    /// The final response head arrived.
    got_head: bool,
    content_length: Option<u64>,
    received: u64,
}

/// One HTTP/2 client connection's state.
pub struct Connection {
    config: Config,
    out: Vec<u8>,
    out_start: usize,
    /// The start of a frame split across reads.
    partial: Vec<u8>,
    hpack: Decoder,
    peer: PeerSettings,
    got_settings: bool,
    send_window: i64,
    recv_window: i64,
    recv_consumed: u32,
    /// Open streams, by rising id (new ids are always the largest).
    streams: Vec<Stream>,
    next_id: u32,
    goaway: Option<u32>,
    /// A header block being assembled from HEADERS and CONTINUATION.
    block: Vec<u8>,
    /// The stream and END_STREAM of that block, while it is incomplete.
    continuation: Option<(u32, bool)>,
    captured_values: Vec<u8>,
    captured_spans: Vec<Option<(u32, u32)>>,
    failed: Option<ConnectionError>,
    /// The server lowered SETTINGS_HEADER_TABLE_SIZE: the next block starts
    /// with a size update to 0 (RFC 7541 §4.2; our table is always empty).
    table_update: bool,
}

fn error(code: ErrorCode, frame_type: u8, reason: &'static str) -> ConnectionError {
    ConnectionError {
        code,
        frame_type,
        reason,
    }
}

impl Connection {
    /// A connection whose output starts with the preface, our SETTINGS and,
    /// for a connection window above 65,535, the WINDOW_UPDATE that opens it.
    pub fn new(mut config: Config) -> Connection {
        // The range RFC 9113 §6.5.2 allows; outside it the server would refuse our SETTINGS.
        config.max_frame_size = config.max_frame_size.clamp(16_384, 16_777_215);
        config.stream_window = config.stream_window.min(MAX_WINDOW as u32);
        config.connection_window = config.connection_window.min(MAX_WINDOW as u32);
        let mut out = Vec::with_capacity(1024);
        out.extend_from_slice(frame::PREFACE);
        frame::write_settings(
            &mut out,
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::INITIAL_WINDOW_SIZE, config.stream_window),
                (setting::MAX_FRAME_SIZE, config.max_frame_size),
            ],
        );
        if config.connection_window > DEFAULT_WINDOW {
            frame::write_window_update(&mut out, 0, config.connection_window - DEFAULT_WINDOW);
        }
        let spans = vec![None; config.capture.len()];
        Connection {
            recv_window: i64::from(config.connection_window.max(DEFAULT_WINDOW)),
            config,
            out,
            out_start: 0,
            partial: Vec::new(),
            hpack: Decoder::new(HEADER_TABLE_SIZE),
            peer: PeerSettings {
                max_frame_size: 16_384,
                initial_window: DEFAULT_WINDOW,
                max_concurrent: u32::MAX,
            },
            got_settings: false,
            send_window: i64::from(DEFAULT_WINDOW),
            recv_consumed: 0,
            streams: Vec::new(),
            next_id: 1,
            goaway: None,
            block: Vec::new(),
            continuation: None,
            captured_values: Vec::new(),
            captured_spans: spans,
            failed: None,
            table_update: false,
        }
    }

    /// Bytes waiting to be written to the socket.
    pub fn output(&self) -> &[u8] {
        &self.out[self.out_start..]
    }

    /// Drops the first `n` bytes of [`Connection::output`] (written).
    pub fn consume_output(&mut self, n: usize) {
        self.out_start = (self.out_start + n).min(self.out.len());
        if self.out_start == self.out.len() {
            self.out.clear();
            self.out_start = 0;
        }
    }

    /// Whether a request may start now.
    pub fn can_start(&self) -> bool {
        self.failed.is_none()
            && self.goaway.is_none()
            && (self.streams.len() as u64) < u64::from(self.stream_limit())
            && self.next_id <= 0x7fff_ffff
    }

    /// How many streams may be open: the server's limit, and before its
    /// SETTINGS [`Config::streams_before_settings`].
    fn stream_limit(&self) -> u32 {
        if self.got_settings {
            self.peer.max_concurrent
        } else {
            self.peer
                .max_concurrent
                .min(self.config.streams_before_settings)
        }
    }

    /// Streams started and not yet ended.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// True once the server's first SETTINGS arrived (the first frame it
    /// must send): a failure before it is a server that may not speak
    /// HTTP/2 at all.
    pub fn got_settings(&self) -> bool {
        self.got_settings
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (`u32::MAX` until it
    /// sends one).
    pub fn max_concurrent_streams(&self) -> u32 {
        self.peer.max_concurrent
    }

    /// The last stream id of the server's GOAWAY, if it sent one.
    pub fn goaway(&self) -> Option<u32> {
        self.goaway
    }

    /// The error that ended the connection, if any.
    pub fn failure(&self) -> Option<ConnectionError> {
        self.failed
    }

    /// Starts a request: HEADERS (and CONTINUATION when the block is larger
    /// than the server's frame size), then as much of `body` as the windows
    /// allow; the rest follows as WINDOW_UPDATEs arrive. Returns the stream id.
    pub fn start(
        &mut self,
        request: &RequestBlock,
        body: Option<Bytes>,
    ) -> Result<u32, StartError> {
        if self.failed.is_some() {
            return Err(StartError::Closed);
        }
        if self.goaway.is_some() {
            return Err(StartError::GoingAway);
        }
        if self.next_id > 0x7fff_ffff {
            return Err(StartError::IdsExhausted);
        }
        if (self.streams.len() as u64) >= u64::from(self.stream_limit()) {
            return Err(StartError::Busy);
        }
        let id = self.next_id;
        self.next_id += 2;
        let body = body.filter(|b| !b.is_empty());
        let end = body.is_none();
        self.write_header_block(id, request.as_bytes(), end);
        self.streams.push(Stream {
            id,
            send_window: i64::from(self.peer.initial_window),
            recv_window: i64::from(self.config.stream_window),
            recv_consumed: 0,
            body,
            sent: 0,
            local_done: end,
            got_head: false,
            content_length: None,
            received: 0,
        });
        if !end {
            self.flush_bodies();
        }
        Ok(id)
    }

    /// Resets a stream the driver gave up on (a timeout): RST_STREAM(CANCEL).
    /// No [`Event::Ended`] follows. False when the stream is not open.
    pub fn cancel(&mut self, stream: u32) -> bool {
        match self.find(stream) {
            Some(i) => {
                self.streams.remove(i);
                frame::write_rst_stream(&mut self.out, stream, ErrorCode::Cancel.to_u32());
                true
            }
            None => false,
        }
    }

    /// The transport closed: every open stream ends [`End::Failed`] with
    /// `Cancel`, and the connection takes no more requests.
    pub fn closed(&mut self, on: &mut impl FnMut(Event<'_>)) {
        if self.failed.is_none() {
            self.failed = Some(error(ErrorCode::Cancel, 0, "the transport closed"));
        }
        for s in self.streams.drain(..) {
            on(Event::Ended {
                stream: s.id,
                end: End::Failed(ErrorCode::Cancel),
            });
        }
    }

    /// Reads server bytes (any amount, split anywhere), reporting events. A
    /// protocol violation ends the connection: GOAWAY with its code is
    /// queued in the output, every open stream ends [`End::Failed`], and
    /// this and every later call returns the error.
    pub fn receive(
        &mut self,
        input: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let result = self.receive_frames(input, on);
        if let Err(e) = result {
            self.fail(e, on);
        }
        result
    }

    /// Completes a frame split by the last read (copying only its missing
    /// part), then handles the rest of `input` in place; keeps what is left
    /// of an incomplete frame.
    fn receive_frames(
        &mut self,
        mut input: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if !self.partial.is_empty() {
            let mut buf = std::mem::take(&mut self.partial);
            if buf.len() < frame::HEADER_LEN {
                let take = (frame::HEADER_LEN - buf.len()).min(input.len());
                buf.extend_from_slice(&input[..take]);
                input = &input[take..];
            }
            if buf.len() >= frame::HEADER_LEN {
                let head = Head::parse(&buf);
                // An oversized frame is refused by `frames` from its header alone.
                if head.len <= self.config.max_frame_size as usize {
                    let take = (frame::HEADER_LEN + head.len - buf.len()).min(input.len());
                    buf.extend_from_slice(&input[..take]);
                    input = &input[take..];
                }
            }
            let used = self.frames(&buf, on)?;
            if used == 0 {
                // Still incomplete: all of the input went into it.
                self.partial = buf;
                return Ok(());
            }
            buf.clear();
            self.partial = buf;
        }
        let used = self.frames(input, on)?;
        self.partial.extend_from_slice(&input[used..]);
        Ok(())
    }

    fn fail(&mut self, e: ConnectionError, on: &mut impl FnMut(Event<'_>)) {
        self.failed = Some(e);
        self.partial.clear();
        // No server-initiated stream was ever accepted: the last is 0.
        frame::write_goaway(&mut self.out, 0, e.code.to_u32());
        for s in self.streams.drain(..) {
            on(Event::Ended {
                stream: s.id,
                end: End::Failed(e.code),
            });
        }
    }

    /// Handles every whole frame of `buf`; returns the bytes used.
    fn frames(
        &mut self,
        buf: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<usize, ConnectionError> {
        let mut at = 0;
        while buf.len() - at >= frame::HEADER_LEN {
            let head = Head::parse(&buf[at..]);
            if head.len > self.config.max_frame_size as usize {
                return Err(error(
                    ErrorCode::FrameSizeError,
                    head.kind,
                    "frame larger than our SETTINGS_MAX_FRAME_SIZE",
                ));
            }
            let end = at + frame::HEADER_LEN + head.len;
            if end > buf.len() {
                break;
            }
            self.frame(head, &buf[at + frame::HEADER_LEN..end], on)?;
            at = end;
        }
        Ok(at)
    }

    fn frame(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if !self.got_settings && (head.kind != frame::SETTINGS || head.flags & frame::ACK != 0) {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "the server's preface is not a SETTINGS frame",
            ));
        }
        if let Some((stream, _)) = self.continuation {
            if head.kind != frame::CONTINUATION || head.stream != stream {
                return Err(error(
                    ErrorCode::ProtocolError,
                    head.kind,
                    "a frame inside a header block",
                ));
            }
        }
        match head.kind {
            frame::DATA => self.data(head, payload, on),
            frame::HEADERS => self.headers(head, payload, on),
            frame::PRIORITY => self.priority(head, payload, on),
            frame::RST_STREAM => self.rst_stream(head, payload, on),
            frame::SETTINGS => self.settings(head, payload, on),
            frame::PUSH_PROMISE => Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "PUSH_PROMISE with push disabled",
            )),
            frame::PING => self.ping(head, payload),
            frame::GOAWAY => self.goaway_frame(head, payload, on),
            frame::WINDOW_UPDATE => self.window_update(head, payload, on),
            frame::CONTINUATION => self.continuation_frame(head, payload, on),
            // Unknown frame types are ignored (RFC 9113 §4.1, §5.5).
            _ => Ok(()),
        }
    }

    fn find(&self, stream: u32) -> Option<usize> {
        self.streams.binary_search_by_key(&stream, |s| s.id).ok()
    }

    /// A frame on a stream the client never opened (even, or not yet used)
    /// is a connection error (RFC 9113 §5.1, idle state).
    fn known(&self, head: Head) -> Result<(), ConnectionError> {
        if head.stream == 0 {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "a stream frame on stream 0",
            ));
        }
        if head.stream.is_multiple_of(2) || head.stream >= self.next_id {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "a frame on a stream the client never opened",
            ));
        }
        Ok(())
    }

    /// The payload of a DATA or HEADERS frame without its padding.
    fn unpadded(head: Head, payload: &[u8]) -> Result<&[u8], ConnectionError> {
        if head.flags & frame::PADDED == 0 {
            return Ok(payload);
        }
        let (&pad, rest) = payload.split_first().ok_or(error(
            ErrorCode::FrameSizeError,
            head.kind,
            "PADDED without a pad length",
        ))?;
        let keep = rest.len().checked_sub(usize::from(pad)).ok_or(error(
            ErrorCode::ProtocolError,
            head.kind,
            "padding longer than the frame",
        ))?;
        Ok(&rest[..keep])
    }

    fn data(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        self.known(head)?;
        let len = payload.len();
        // The whole frame, padding included, counts against both windows (§6.9.1).
        if len as i64 > self.recv_window {
            return Err(error(
                ErrorCode::FlowControlError,
                head.kind,
                "DATA beyond the connection window",
            ));
        }
        self.recv_window -= len as i64;
        self.recv_consumed += len as u32;
        if self.recv_consumed > 0
            && self.recv_consumed >= self.config.connection_window.max(DEFAULT_WINDOW) / 2
        {
            frame::write_window_update(&mut self.out, 0, self.recv_consumed);
            self.recv_window += i64::from(self.recv_consumed);
            self.recv_consumed = 0;
        }
        let data = Self::unpadded(head, payload)?;
        let Some(i) = self.find(head.stream) else {
            // A stream that ended (reset by us, or answered): ignored.
            return Ok(());
        };
        let s = &mut self.streams[i];
        if len as i64 > s.recv_window {
            return Err(error(
                ErrorCode::FlowControlError,
                head.kind,
                "DATA beyond the stream window",
            ));
        }
        s.recv_window -= len as i64;
        if !s.got_head {
            self.stream_error(i, ErrorCode::ProtocolError, on);
            return Ok(());
        }
        s.received += data.len() as u64;
        if s.content_length.is_some_and(|n| s.received > n) {
            self.stream_error(i, ErrorCode::ProtocolError, on);
            return Ok(());
        }
        if !data.is_empty() {
            on(Event::Data {
                stream: head.stream,
                data,
            });
        }
        let s = &mut self.streams[i];
        if head.flags & frame::END_STREAM != 0 {
            if s.content_length.is_some_and(|n| n != s.received) {
                self.stream_error(i, ErrorCode::ProtocolError, on);
            } else {
                self.finish(i, on);
            }
            return Ok(());
        }
        s.recv_consumed += len as u32;
        // Never an increment of 0 (a PROTOCOL_ERROR for the server), whatever the window.
        if s.recv_consumed > 0 && s.recv_consumed >= self.config.stream_window / 2 {
            frame::write_window_update(&mut self.out, s.id, s.recv_consumed);
            s.recv_window += i64::from(s.recv_consumed);
            s.recv_consumed = 0;
        }
        Ok(())
    }

    fn headers(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        self.known(head)?;
        let mut block = Self::unpadded(head, payload)?;
        if head.flags & frame::PRIORITY_FLAG != 0 {
            block = block.get(5..).ok_or(error(
                ErrorCode::FrameSizeError,
                head.kind,
                "HEADERS too short for its priority",
            ))?;
        }
        let end_stream = head.flags & frame::END_STREAM != 0;
        if head.flags & frame::END_HEADERS != 0 {
            return self.header_block(head.stream, end_stream, block, on);
        }
        if block.len() > self.config.max_header_block {
            return Err(error(
                ErrorCode::EnhanceYourCalm,
                head.kind,
                "a header block larger than allowed",
            ));
        }
        self.block.clear();
        self.block.extend_from_slice(block);
        self.continuation = Some((head.stream, end_stream));
        Ok(())
    }

    fn continuation_frame(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        let Some((stream, end_stream)) = self.continuation else {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "CONTINUATION without HEADERS",
            ));
        };
        if self.block.len() + payload.len() > self.config.max_header_block {
            return Err(error(
                ErrorCode::EnhanceYourCalm,
                head.kind,
                "a header block larger than allowed",
            ));
        }
        self.block.extend_from_slice(payload);
        if head.flags & frame::END_HEADERS == 0 {
            return Ok(());
        }
        self.continuation = None;
        let block = std::mem::take(&mut self.block);
        let result = self.header_block(stream, end_stream, &block, on);
        self.block = block;
        result
    }

    /// A complete response header block: decoded always (the HPACK table must
    /// stay in step even for a stream that ended), then applied to its stream.
    fn header_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        self.captured_values.clear();
        self.captured_spans.iter_mut().for_each(|s| *s = None);
        let mut status: Option<u16> = None;
        let mut content_length: Option<u64> = None;
        let mut malformed = false;
        let capture = &self.config.capture;
        let values = &mut self.captured_values;
        let spans = &mut self.captured_spans;
        // Only what is read below: pseudo-fields (each checked),
        // content-length and the captured fields.
        let wanted = |name: &[u8]| {
            name.first() == Some(&b':')
                || name == b"content-length"
                || capture.iter().any(|want| want.as_slice() == name)
        };
        self.hpack
            .decode_wanted(block, wanted, |name, value| {
                if name == b":status" {
                    malformed |= status.is_some();
                    status = parse_status(value);
                    malformed |= status.is_none();
                } else if name.first() == Some(&b':') {
                    malformed = true;
                } else {
                    if name == b"content-length" {
                        match parse_u64(value) {
                            Some(n) if content_length.is_none_or(|c| c == n) => {
                                content_length = Some(n)
                            }
                            _ => malformed = true,
                        }
                    }
                    for (want, span) in capture.iter().zip(spans.iter_mut()) {
                        if span.is_none() && want.as_slice() == name {
                            let start = values.len() as u32;
                            values.extend_from_slice(value);
                            *span = Some((start, values.len() as u32));
                        }
                    }
                }
            })
            .map_err(|_| {
                error(
                    ErrorCode::CompressionError,
                    frame::HEADERS,
                    "a header block HPACK cannot decode",
                )
            })?;
        let Some(i) = self.find(stream) else {
            return Ok(());
        };
        let captured = Captured {
            values: &self.captured_values,
            spans: &self.captured_spans,
        };
        let s = &mut self.streams[i];
        if s.got_head {
            // Trailers: they end the stream and carry no pseudo-field (§8.1).
            if !end_stream || status.is_some() || malformed {
                self.stream_error(i, ErrorCode::ProtocolError, on);
                return Ok(());
            }
            on(Event::Trailers {
                stream,
                fields: captured,
            });
            if s.content_length.is_some_and(|n| n != s.received) {
                self.stream_error(i, ErrorCode::ProtocolError, on);
            } else {
                self.finish(i, on);
            }
            return Ok(());
        }
        let status = match status {
            Some(code) if !malformed => code,
            _ => {
                self.stream_error(i, ErrorCode::ProtocolError, on);
                return Ok(());
            }
        };
        if (100..200).contains(&status) {
            // Interim responses precede the final one; 101 is not allowed (§8.6).
            if end_stream || status == 101 {
                self.stream_error(i, ErrorCode::ProtocolError, on);
            }
            return Ok(());
        }
        s.got_head = true;
        s.content_length = content_length;
        on(Event::Response {
            stream,
            head: ResponseHead {
                status,
                content_length,
                captured,
            },
        });
        if end_stream {
            if content_length.is_some_and(|n| n != 0) {
                self.stream_error(i, ErrorCode::ProtocolError, on);
            } else {
                self.finish(i, on);
            }
        }
        Ok(())
    }

    fn priority(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if head.stream == 0 {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "PRIORITY on stream 0",
            ));
        }
        if payload.len() != 5 {
            if let Some(i) = self.find(head.stream) {
                self.stream_error(i, ErrorCode::FrameSizeError, on);
            }
        }
        // Otherwise ignored: RFC 9113 deprecates the priority scheme.
        Ok(())
    }

    fn rst_stream(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if payload.len() != 4 {
            return Err(error(
                ErrorCode::FrameSizeError,
                head.kind,
                "RST_STREAM not 4 octets",
            ));
        }
        self.known(head)?;
        let Some(i) = self.find(head.stream) else {
            return Ok(());
        };
        let code = ErrorCode::from_u32(u32::from_be_bytes([
            payload[0], payload[1], payload[2], payload[3],
        ]));
        let s = self.streams.remove(i);
        let end = if code == ErrorCode::RefusedStream && !s.got_head {
            End::Unprocessed
        } else {
            End::Reset(code)
        };
        on(Event::Ended { stream: s.id, end });
        Ok(())
    }

    fn settings(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if head.stream != 0 {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "SETTINGS on a stream",
            ));
        }
        if head.flags & frame::ACK != 0 {
            if !payload.is_empty() {
                return Err(error(
                    ErrorCode::FrameSizeError,
                    head.kind,
                    "SETTINGS ACK with a payload",
                ));
            }
            on(Event::SettingsAcked);
            return Ok(());
        }
        if !payload.len().is_multiple_of(6) {
            return Err(error(
                ErrorCode::FrameSizeError,
                head.kind,
                "SETTINGS not a multiple of 6 octets",
            ));
        }
        for p in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([p[0], p[1]]);
            let value = u32::from_be_bytes([p[2], p[3], p[4], p[5]]);
            match id {
                setting::HEADER_TABLE_SIZE => {
                    self.table_update |= (value as usize) < HEADER_TABLE_SIZE
                }
                setting::ENABLE_PUSH if value != 0 => {
                    return Err(error(
                        ErrorCode::ProtocolError,
                        head.kind,
                        "a server's SETTINGS_ENABLE_PUSH is not 0",
                    ));
                }
                setting::MAX_CONCURRENT_STREAMS => self.peer.max_concurrent = value,
                setting::INITIAL_WINDOW_SIZE => {
                    if i64::from(value) > MAX_WINDOW {
                        return Err(error(
                            ErrorCode::FlowControlError,
                            head.kind,
                            "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1",
                        ));
                    }
                    // The change applies to every open stream's window (§6.9.2).
                    let delta = i64::from(value) - i64::from(self.peer.initial_window);
                    for s in &mut self.streams {
                        s.send_window += delta;
                        if s.send_window > MAX_WINDOW {
                            return Err(error(
                                ErrorCode::FlowControlError,
                                head.kind,
                                "a stream window above 2^31-1",
                            ));
                        }
                    }
                    self.peer.initial_window = value;
                }
                setting::MAX_FRAME_SIZE => {
                    if !(16_384..=16_777_215).contains(&value) {
                        return Err(error(
                            ErrorCode::ProtocolError,
                            head.kind,
                            "SETTINGS_MAX_FRAME_SIZE out of range",
                        ));
                    }
                    self.peer.max_frame_size = value;
                }
                // MAX_HEADER_LIST_SIZE is advisory; unknown settings are ignored (§6.5.2).
                _ => {}
            }
        }
        self.got_settings = true;
        frame::write_head(&mut self.out, 0, frame::SETTINGS, frame::ACK, 0);
        self.flush_bodies();
        Ok(())
    }

    fn ping(&mut self, head: Head, payload: &[u8]) -> Result<(), ConnectionError> {
        if payload.len() != 8 {
            return Err(error(
                ErrorCode::FrameSizeError,
                head.kind,
                "PING not 8 octets",
            ));
        }
        if head.stream != 0 {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "PING on a stream",
            ));
        }
        if head.flags & frame::ACK == 0 {
            frame::write_head(&mut self.out, 8, frame::PING, frame::ACK, 0);
            self.out.extend_from_slice(payload);
        }
        Ok(())
    }

    fn goaway_frame(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if payload.len() < 8 {
            return Err(error(
                ErrorCode::FrameSizeError,
                head.kind,
                "GOAWAY shorter than 8 octets",
            ));
        }
        if head.stream != 0 {
            return Err(error(
                ErrorCode::ProtocolError,
                head.kind,
                "GOAWAY on a stream",
            ));
        }
        let last =
            u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff;
        let code = ErrorCode::from_u32(u32::from_be_bytes([
            payload[4], payload[5], payload[6], payload[7],
        ]));
        // A later GOAWAY may only lower the last id (§6.8).
        let last = self.goaway.map_or(last, |prev| prev.min(last));
        self.goaway = Some(last);
        let keep = self.streams.partition_point(|s| s.id <= last);
        for s in self.streams.drain(keep..) {
            on(Event::Ended {
                stream: s.id,
                end: End::Unprocessed,
            });
        }
        on(Event::GoAway {
            last_stream_id: last,
            code,
        });
        Ok(())
    }

    fn window_update(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnectionError> {
        if payload.len() != 4 {
            return Err(error(
                ErrorCode::FrameSizeError,
                head.kind,
                "WINDOW_UPDATE not 4 octets",
            ));
        }
        let increment = i64::from(
            u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff,
        );
        if head.stream == 0 {
            if increment == 0 {
                return Err(error(
                    ErrorCode::ProtocolError,
                    head.kind,
                    "WINDOW_UPDATE of 0",
                ));
            }
            self.send_window += increment;
            if self.send_window > MAX_WINDOW {
                return Err(error(
                    ErrorCode::FlowControlError,
                    head.kind,
                    "the connection window above 2^31-1",
                ));
            }
        } else {
            self.known(head)?;
            let Some(i) = self.find(head.stream) else {
                return Ok(());
            };
            let s = &mut self.streams[i];
            s.send_window += increment;
            if increment == 0 || s.send_window > MAX_WINDOW {
                let code = if increment == 0 {
                    ErrorCode::ProtocolError
                } else {
                    ErrorCode::FlowControlError
                };
                self.stream_error(i, code, on);
                return Ok(());
            }
        }
        self.flush_bodies();
        Ok(())
    }

    /// A stream error (§5.4.2): RST_STREAM with `code`, the stream ends Failed.
    fn stream_error(&mut self, i: usize, code: ErrorCode, on: &mut impl FnMut(Event<'_>)) {
        let s = self.streams.remove(i);
        frame::write_rst_stream(&mut self.out, s.id, code.to_u32());
        on(Event::Ended {
            stream: s.id,
            end: End::Failed(code),
        });
    }

    /// The response is complete. A request body still being sent is cut
    /// short with RST_STREAM(NO_ERROR), as a server may ask (§8.1).
    fn finish(&mut self, i: usize, on: &mut impl FnMut(Event<'_>)) {
        let s = self.streams.remove(i);
        if !s.local_done {
            frame::write_rst_stream(&mut self.out, s.id, ErrorCode::NoError.to_u32());
        }
        on(Event::Ended {
            stream: s.id,
            end: End::Finished,
        });
    }

    fn write_header_block(&mut self, stream: u32, block: &[u8], end_stream: bool) {
        let end_flag = if end_stream { frame::END_STREAM } else { 0 };
        let max = self.peer.max_frame_size as usize;
        if !self.table_update && block.len() <= max {
            frame::write_head(
                &mut self.out,
                block.len(),
                frame::HEADERS,
                frame::END_HEADERS | end_flag,
                stream,
            );
            self.out.extend_from_slice(block);
            return;
        }
        // Rare: a size update to prepend, or a block larger than a frame.
        let mut whole = Vec::with_capacity(block.len() + 1);
        if std::mem::take(&mut self.table_update) {
            whole.push(0x20);
        }
        whole.extend_from_slice(block);
        let mut chunks = whole.chunks(max).peekable();
        let mut kind = frame::HEADERS;
        let mut flags = end_flag;
        while let Some(chunk) = chunks.next() {
            if chunks.peek().is_none() {
                flags |= frame::END_HEADERS;
            }
            frame::write_head(&mut self.out, chunk.len(), kind, flags, stream);
            self.out.extend_from_slice(chunk);
            kind = frame::CONTINUATION;
            flags = 0;
        }
    }

    /// Sends what the windows allow of every pending request body, oldest
    /// stream first, in DATA frames no larger than the server's frame size.
    fn flush_bodies(&mut self) {
        let max = self.peer.max_frame_size as usize;
        for s in &mut self.streams {
            if self.send_window <= 0 {
                return;
            }
            let Some(body) = &s.body else { continue };
            while s.sent < body.len() && s.send_window > 0 && self.send_window > 0 {
                let n = (body.len() - s.sent)
                    .min(max)
                    .min(s.send_window as usize)
                    .min(self.send_window as usize);
                let last = s.sent + n == body.len();
                frame::write_head(
                    &mut self.out,
                    n,
                    frame::DATA,
                    if last { frame::END_STREAM } else { 0 },
                    s.id,
                );
                self.out.extend_from_slice(&body[s.sent..s.sent + n]);
                s.sent += n;
                s.send_window -= n as i64;
                self.send_window -= n as i64;
            }
            if s.sent == body.len() {
                s.body = None;
                s.local_done = true;
            }
        }
    }
}

/// A three-digit status code.
fn parse_status(v: &[u8]) -> Option<u16> {
    match v {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

/// A decimal content-length (digits only, no overflow).
fn parse_u64(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 {
        return None;
    }
    v.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}
