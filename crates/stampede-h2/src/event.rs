//! What the codec reports to its driver while reading server bytes.

use crate::error::ErrorCode;

/// How a stream ended. Every stream started gets exactly one
/// [`Event::Ended`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The whole response arrived (END_STREAM).
    Finished,
    /// The server reset the stream (RST_STREAM with this code, other than
    /// REFUSED_STREAM before a response).
    Reset(ErrorCode),
    /// The server did not process the request: its GOAWAY's last stream id
    /// is below this stream, or it refused the stream (REFUSED_STREAM) before
    /// answering. Safe to retry on another connection (RFC 9113 §8.7).
    Unprocessed,
    /// The codec ended the stream: the response broke a rule (a stream
    /// error, with the code sent in RST_STREAM), the connection failed (the
    /// code sent in GOAWAY), or it closed with the stream open (`Cancel`).
    Failed(ErrorCode),
}

/// A final response's head: `:status`, `content-length` and the fields the
/// driver asked for by name ([`crate::Config::capture`]).
#[derive(Debug, Clone, Copy)]
pub struct ResponseHead<'a> {
    /// The `:status` code.
    pub status: u16,
    /// `content-length`, when sent and valid.
    pub content_length: Option<u64>,
    pub(crate) captured: Captured<'a>,
}

impl<'a> ResponseHead<'a> {
    /// The first value of the `i`th captured name, if the response had it.
    pub fn field(&self, i: usize) -> Option<&'a [u8]> {
        self.captured.get(i)
    }
}

/// Values of captured fields, by the index of their name in
/// [`crate::Config::capture`].
#[derive(Debug, Clone, Copy)]
pub struct Captured<'a> {
    pub(crate) values: &'a [u8],
    pub(crate) spans: &'a [Option<(u32, u32)>],
}

impl<'a> Captured<'a> {
    /// The first value of the `i`th captured name, if present.
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        let (start, end) = (*self.spans.get(i)?)?;
        Some(&self.values[start as usize..end as usize])
    }
}

/// One thing that happened on the connection.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The server acknowledged our SETTINGS.
    SettingsAcked,
    /// A stream's final response head (1xx heads are skipped).
    Response {
        /// The stream.
        stream: u32,
        /// Its status and the fields asked for.
        head: ResponseHead<'a>,
    },
    /// Body octets of a stream (padding removed).
    Data {
        /// The stream.
        stream: u32,
        /// The octets.
        data: &'a [u8],
    },
    /// A stream's trailers: the captured fields among them.
    Trailers {
        /// The stream.
        stream: u32,
        /// The captured fields the trailers held.
        fields: Captured<'a>,
    },
    /// A stream ended (each stream once).
    Ended {
        /// The stream.
        stream: u32,
        /// How.
        end: End,
    },
    /// The server sent GOAWAY: no new streams on this connection. Streams
    /// above `last_stream_id` were reported [`End::Unprocessed`] just before.
    GoAway {
        /// The highest stream the server may have processed.
        last_stream_id: u32,
        /// Its error code.
        code: ErrorCode,
    },
}
