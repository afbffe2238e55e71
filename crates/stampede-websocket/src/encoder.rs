//! Writing frames onto the end of a buffer: data messages, pings, pongs
//! and closes, masked with the key the caller gives (a client draws one
//! per frame, §5.3; a server gives none). No allocation beyond the
//! buffer's growth.

use crate::close::close_code_is_valid;
use crate::error::ProtocolError;
use crate::head::{FrameHead, MAX_CONTROL_PAYLOAD};
use crate::mask::apply_mask;
use crate::opcode::{MessageKind, Opcode};

/// Appends one frame as given, checking nothing: a fragment of a message
/// (`fin` false, then [`Opcode::Continuation`]s), or in a test a frame
/// that breaks a rule on purpose.
pub fn encode_frame(
    out: &mut Vec<u8>,
    fin: bool,
    opcode: Opcode,
    payload: &[u8],
    mask: Option<[u8; 4]>,
) {
    FrameHead::write(out, fin, opcode, mask, payload.len() as u64);
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(key) = mask {
        apply_mask(&mut out[start..], key);
    }
}

/// Appends a whole message as one frame.
pub fn encode_message(out: &mut Vec<u8>, kind: MessageKind, payload: &[u8], mask: Option<[u8; 4]>) {
    encode_frame(out, true, kind.opcode(), payload, mask);
}

/// Appends a ping or pong (or a close payload already built): refused
/// when it is a data opcode or its payload is over 125 bytes (§5.5).
pub fn encode_control(
    out: &mut Vec<u8>,
    opcode: Opcode,
    payload: &[u8],
    mask: Option<[u8; 4]>,
) -> Result<(), ProtocolError> {
    if !opcode.is_control() {
        return Err(ProtocolError::BadOpcode(opcode.bits()));
    }
    if payload.len() as u64 > MAX_CONTROL_PAYLOAD {
        return Err(ProtocolError::ControlTooLong(payload.len() as u64));
    }
    encode_frame(out, true, opcode, payload, mask);
    Ok(())
}

/// Appends a close frame: with no code an empty payload (and `reason` must
/// be empty), else the code and the reason. Refused for a code no endpoint
/// may send or a reason past 123 bytes.
pub fn encode_close(
    out: &mut Vec<u8>,
    code: Option<u16>,
    reason: &str,
    mask: Option<[u8; 4]>,
) -> Result<(), ProtocolError> {
    let Some(code) = code else {
        if !reason.is_empty() {
            return Err(ProtocolError::BadClosePayload);
        }
        return encode_control(out, Opcode::Close, b"", mask);
    };
    if !close_code_is_valid(code) {
        return Err(ProtocolError::BadCloseCode(code));
    }
    let mut payload = [0u8; MAX_CONTROL_PAYLOAD as usize];
    let len = 2 + reason.len();
    if len as u64 > MAX_CONTROL_PAYLOAD {
        return Err(ProtocolError::ControlTooLong(len as u64));
    }
    payload[..2].copy_from_slice(&code.to_be_bytes());
    payload[2..len].copy_from_slice(reason.as_bytes());
    encode_control(out, Opcode::Close, &payload[..len], mask)
}
