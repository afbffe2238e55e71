//! Typed protocol errors: RFC 9113 §7's error codes, and the connection
//! error the codec ends a connection with (code, frame type, reason).

/// An HTTP/2 error code (RFC 9113 §7), as sent in RST_STREAM and GOAWAY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 0x0: graceful shutdown, or not an error.
    NoError,
    /// 0x1: an unspecific protocol violation.
    ProtocolError,
    /// 0x2: an unexpected internal error.
    InternalError,
    /// 0x3: the flow-control protocol was violated.
    FlowControlError,
    /// 0x4: SETTINGS were not acknowledged in time.
    SettingsTimeout,
    /// 0x5: a frame arrived on a half-closed stream.
    StreamClosed,
    /// 0x6: a frame of an invalid size.
    FrameSizeError,
    /// 0x7: the stream was refused before any processing.
    RefusedStream,
    /// 0x8: the stream is no longer needed.
    Cancel,
    /// 0x9: the header compression context cannot be kept.
    CompressionError,
    /// 0xa: a CONNECT's connection was reset.
    ConnectError,
    /// 0xb: the peer is generating excessive load.
    EnhanceYourCalm,
    /// 0xc: the transport does not meet security requirements.
    InadequateSecurity,
    /// 0xd: HTTP/1.1 is required.
    Http11Required,
    /// A code RFC 9113 does not define (treated as INTERNAL_ERROR, §7).
    Unknown(u32),
}

impl ErrorCode {
    /// The code for its number on the wire.
    pub fn from_u32(code: u32) -> ErrorCode {
        use ErrorCode::*;
        match code {
            0x0 => NoError,
            0x1 => ProtocolError,
            0x2 => InternalError,
            0x3 => FlowControlError,
            0x4 => SettingsTimeout,
            0x5 => StreamClosed,
            0x6 => FrameSizeError,
            0x7 => RefusedStream,
            0x8 => Cancel,
            0x9 => CompressionError,
            0xa => ConnectError,
            0xb => EnhanceYourCalm,
            0xc => InadequateSecurity,
            0xd => Http11Required,
            other => Unknown(other),
        }
    }

    /// Its number on the wire.
    pub fn to_u32(self) -> u32 {
        use ErrorCode::*;
        match self {
            NoError => 0x0,
            ProtocolError => 0x1,
            InternalError => 0x2,
            FlowControlError => 0x3,
            SettingsTimeout => 0x4,
            StreamClosed => 0x5,
            FrameSizeError => 0x6,
            RefusedStream => 0x7,
            Cancel => 0x8,
            CompressionError => 0x9,
            ConnectError => 0xa,
            EnhanceYourCalm => 0xb,
            InadequateSecurity => 0xc,
            Http11Required => 0xd,
            Unknown(other) => other,
        }
    }
}

/// Why the codec ended a connection: the code it sent in its GOAWAY, the
/// type of the frame that broke the rule (a sample for the report) and the
/// rule, in a few words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionError {
    /// The error code sent to the server in GOAWAY.
    pub code: ErrorCode,
    /// The type of the offending frame (0x0 DATA … 0x9 CONTINUATION).
    pub frame_type: u8,
    /// The rule broken.
    pub reason: &'static str,
}

impl std::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HTTP/2 {:?} on a frame of type {:#x}: {}",
            self.code, self.frame_type, self.reason
        )
    }
}

impl std::error::Error for ConnectionError {}
