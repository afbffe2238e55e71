//! A frame's header (RFC 6455 §5.2): FIN, the three reserved bits, the
//! opcode, the mask bit, the payload length in 7, 7+16 or 7+64 bits, and
//! the mask key. Read from the front of a buffer, written onto the end of
//! one. The rules that hold for any frame are checked here (a known
//! opcode, a 63-bit length, control frames short and whole); those that
//! depend on the side and the message so far are the decoder's.

use crate::error::ProtocolError;
use crate::opcode::Opcode;

/// Longest header: 2 bytes, an 8-byte length, a 4-byte mask key.
pub const MAX_HEAD: usize = 14;
/// Longest payload of a close, ping or pong frame (§5.5).
pub const MAX_CONTROL_PAYLOAD: u64 = 125;

/// One frame's header, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    /// The last frame of its message.
    pub fin: bool,
    /// RSV1, RSV2, RSV3 as the low three bits (RSV1 is 0b100).
    pub rsv: u8,
    /// What the frame carries.
    pub opcode: Opcode,
    /// The mask key, when the mask bit is set.
    pub mask: Option<[u8; 4]>,
    /// Payload bytes.
    pub len: u64,
    /// Header bytes: where the payload starts.
    pub head_len: usize,
}

impl FrameHead {
    /// The header at the front of `buf`: `Ok(None)` while it is incomplete.
    pub fn parse(buf: &[u8]) -> Result<Option<FrameHead>, ProtocolError> {
        let [b0, b1, ..] = *buf else {
            return Ok(None);
        };
        let fin = b0 & 0x80 != 0;
        let rsv = (b0 >> 4) & 0b111;
        let opcode = Opcode::from_bits(b0 & 0x0f).ok_or(ProtocolError::BadOpcode(b0 & 0x0f))?;
        let masked = b1 & 0x80 != 0;
        let (len, mut at) = match b1 & 0x7f {
            126 => match buf.get(2..4) {
                Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
                None => return Ok(None),
            },
            127 => match buf.get(2..10) {
                Some(b) => {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(b);
                    (u64::from_be_bytes(word), 10)
                }
                None => return Ok(None),
            },
            short => (u64::from(short), 2),
        };
        // §5.2: "the most significant bit MUST be 0".
        if len >> 63 != 0 {
            return Err(ProtocolError::LengthTooLarge);
        }
        if opcode.is_control() {
            if len > MAX_CONTROL_PAYLOAD {
                return Err(ProtocolError::ControlTooLong(len));
            }
            if !fin {
                return Err(ProtocolError::ControlFragmented);
            }
        }
        let mask = if masked {
            let Some(k) = buf.get(at..at + 4) else {
                return Ok(None);
            };
            at += 4;
            Some([k[0], k[1], k[2], k[3]])
        } else {
            None
        };
        Ok(Some(FrameHead {
            fin,
            rsv,
            opcode,
            mask,
            len,
            head_len: at,
        }))
    }

    /// Appends the header of a frame of `len` payload bytes: the length in
    /// the fewest bytes that hold it, as §5.2 asks.
    pub fn write(out: &mut Vec<u8>, fin: bool, opcode: Opcode, mask: Option<[u8; 4]>, len: u64) {
        out.push(if fin { 0x80 } else { 0 } | opcode.bits());
        let mask_bit = if mask.is_some() { 0x80 } else { 0 };
        if len < 126 {
            out.push(mask_bit | len as u8);
        } else if let Ok(short) = u16::try_from(len) {
            out.push(mask_bit | 126);
            out.extend_from_slice(&short.to_be_bytes());
        } else {
            out.push(mask_bit | 127);
            out.extend_from_slice(&len.to_be_bytes());
        }
        if let Some(key) = mask {
            out.extend_from_slice(&key);
        }
    }
}
