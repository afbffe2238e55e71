//! Frame layout (RFC 9113 §4.1, §6): the 9-octet header, the frame types and
//! flags, and writers that append whole frames to an output buffer.

/// DATA (§6.1).
pub const DATA: u8 = 0x0;
/// HEADERS (§6.2).
pub const HEADERS: u8 = 0x1;
/// PRIORITY (§6.3), deprecated: read and ignored.
pub const PRIORITY: u8 = 0x2;
/// RST_STREAM (§6.4).
pub const RST_STREAM: u8 = 0x3;
/// SETTINGS (§6.5).
pub const SETTINGS: u8 = 0x4;
/// PUSH_PROMISE (§6.6): refused, the client disables push.
pub const PUSH_PROMISE: u8 = 0x5;
/// PING (§6.7).
pub const PING: u8 = 0x6;
/// GOAWAY (§6.8).
pub const GOAWAY: u8 = 0x7;
/// WINDOW_UPDATE (§6.9).
pub const WINDOW_UPDATE: u8 = 0x8;
/// CONTINUATION (§6.10).
pub const CONTINUATION: u8 = 0x9;

/// END_STREAM on DATA and HEADERS.
pub const END_STREAM: u8 = 0x1;
/// ACK on SETTINGS and PING.
pub const ACK: u8 = 0x1;
/// END_HEADERS on HEADERS and CONTINUATION.
pub const END_HEADERS: u8 = 0x4;
/// PADDED on DATA and HEADERS.
pub const PADDED: u8 = 0x8;
/// PRIORITY on HEADERS: 5 octets of priority before the block.
pub const PRIORITY_FLAG: u8 = 0x20;

/// The length of a frame header.
pub const HEADER_LEN: usize = 9;

/// The client connection preface (§3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// SETTINGS parameters (§6.5.2).
pub mod setting {
    /// SETTINGS_HEADER_TABLE_SIZE.
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    /// SETTINGS_ENABLE_PUSH.
    pub const ENABLE_PUSH: u16 = 0x2;
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    /// SETTINGS_MAX_FRAME_SIZE.
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// A frame header read off the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Payload length.
    pub len: usize,
    /// Frame type.
    pub kind: u8,
    /// Flags.
    pub flags: u8,
    /// Stream identifier (the reserved bit cleared).
    pub stream: u32,
}

impl Head {
    /// Reads the first 9 octets of `b` (which must hold them).
    pub fn parse(b: &[u8]) -> Head {
        Head {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }
}

/// Appends a frame header.
pub fn write_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a SETTINGS frame with `params`.
pub fn write_settings(out: &mut Vec<u8>, params: &[(u16, u32)]) {
    write_head(out, params.len() * 6, SETTINGS, 0, 0);
    for &(id, value) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends a WINDOW_UPDATE frame.
pub fn write_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    write_head(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends a RST_STREAM frame.
pub fn write_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    write_head(out, 4, RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a GOAWAY frame without debug data.
pub fn write_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    write_head(out, 8, GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}
