//! `permessage-deflate` (RFC 7692): a message's payload compressed with
//! raw deflate, its frame marked with RSV1. The offer and the answer
//! (§7.1): the client offers `permessage-deflate` with no parameter, so a
//! server may answer only `server_no_context_takeover`,
//! `client_no_context_takeover` and `server_max_window_bits` (its own
//! window, which a 32 KiB inflate window reads whatever it is); anything
//! else in the answer fails the connection. A message is compressed with
//! a sync flush and the flush's 4-byte tail `00 00 ff ff` removed
//! (§7.2.1); it is inflated with that tail put back (§7.2.2).
//! "no context takeover" resets the compressor (or the inflater) after
//! every message (§7.1.1).

use crate::error::ProtocolError;
use crate::head::FrameHead;
use crate::mask::apply_mask;
use crate::opcode::MessageKind;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};

/// The extension's name in `Sec-WebSocket-Extensions`.
pub const PERMESSAGE_DEFLATE: &str = "permessage-deflate";

/// The tail a sync flush ends with, removed from each message (§7.2.1).
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// What the server's answer agreed to (§7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeflateParams {
    /// The server resets its compressor after each message: the client's
    /// inflater may too.
    pub server_no_context_takeover: bool,
    /// The client must reset its compressor after each message.
    pub client_no_context_takeover: bool,
    /// The window the server compresses with (8–15 bits), if it said.
    pub server_max_window_bits: Option<u8>,
}

/// Reads the server's `Sec-WebSocket-Extensions` answer to an offer of a
/// bare `permessage-deflate`: `Ok(None)` when it names no extension,
/// `Ok(Some)` when it accepted the offer, `Err` (why, for the error
/// sample) when it names another extension or a parameter the offer did
/// not allow (§7.1: the client fails the connection).
pub fn parse_deflate_answer(value: &str) -> Result<Option<DeflateParams>, String> {
    let mut agreed = None;
    for extension in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let mut parts = extension.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default();
        if !name.eq_ignore_ascii_case(PERMESSAGE_DEFLATE) {
            return Err(format!(
                "the server answered extension {name:?}, not offered"
            ));
        }
        if agreed.is_some() {
            return Err("the server answered permessage-deflate twice".into());
        }
        let mut params = DeflateParams::default();
        for param in parts.filter(|p| !p.is_empty()) {
            let (key, value) = match param.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().trim_matches('"'))),
                None => (param, None),
            };
            match (key.to_ascii_lowercase().as_str(), value) {
                ("server_no_context_takeover", None) => params.server_no_context_takeover = true,
                ("client_no_context_takeover", None) => params.client_no_context_takeover = true,
                ("server_max_window_bits", Some(bits)) => {
                    let bits = bits.parse().ok().filter(|b| (8..=15).contains(b));
                    params.server_max_window_bits = Some(bits.ok_or_else(|| {
                        format!("permessage-deflate answered {param:?}: bits must be 8..=15")
                    })?);
                }
                _ => {
                    return Err(format!(
                        "permessage-deflate answered {param:?}, which the offer did not allow (RFC 7692 §7.1)"
                    ))
                }
            }
        }
        agreed = Some(params);
    }
    Ok(agreed)
}

/// The sender's side: each message compressed into one RSV1 frame.
#[derive(Debug)]
pub struct MessageDeflater {
    compress: Compress,
    /// Reset after each message (no context takeover on this side).
    reset_each: bool,
    scratch: Vec<u8>,
}

impl MessageDeflater {
    /// A compressor; `reset_each`: no context takeover (the other side
    /// keeps no window of ours).
    pub fn new(reset_each: bool) -> MessageDeflater {
        MessageDeflater {
            compress: Compress::new(Compression::fast(), false),
            reset_each,
            scratch: Vec::new(),
        }
    }

    /// Appends `payload` as one compressed message frame (RSV1 set),
    /// masked with `mask` when given.
    pub fn encode_message(
        &mut self,
        out: &mut Vec<u8>,
        kind: MessageKind,
        payload: &[u8],
        mask: Option<[u8; 4]>,
    ) {
        self.scratch.clear();
        let start_in = self.compress.total_in();
        loop {
            self.scratch.reserve(payload.len() / 2 + 64);
            let taken = (self.compress.total_in() - start_in) as usize;
            self.compress
                .compress_vec(&payload[taken..], &mut self.scratch, FlushCompress::Sync)
                .expect("deflate takes any bytes");
            let taken = (self.compress.total_in() - start_in) as usize;
            // The flush is whole once the output had room to spare.
            if taken == payload.len() && self.scratch.len() < self.scratch.capacity() {
                break;
            }
        }
        debug_assert!(self.scratch.ends_with(&TAIL));
        let body = self.scratch.len().saturating_sub(TAIL.len());
        let at = out.len();
        FrameHead::write(out, true, kind.opcode(), mask, body as u64);
        out[at] |= 0x40;
        let start = out.len();
        out.extend_from_slice(&self.scratch[..body]);
        if let Some(key) = mask {
            apply_mask(&mut out[start..], key);
        }
        if self.reset_each {
            self.compress.reset();
        }
    }
}

/// The reader's side: a compressed message's payload inflated.
#[derive(Debug)]
pub struct MessageInflater {
    decompress: Decompress,
    /// Reset after each message (the sender keeps no context).
    reset_each: bool,
}

impl MessageInflater {
    /// An inflater; `reset_each`: the sender resets its compressor after
    /// each message.
    pub fn new(reset_each: bool) -> MessageInflater {
        MessageInflater {
            decompress: Decompress::new(false),
            reset_each,
        }
    }

    /// Inflates one message's payload (as it came, tail removed) into
    /// `out` (emptied first), refusing more than `max` bytes.
    pub fn inflate(
        &mut self,
        payload: &[u8],
        out: &mut Vec<u8>,
        max: usize,
    ) -> Result<(), ProtocolError> {
        out.clear();
        'inputs: for input in [payload, &TAIL[..]] {
            let mut taken = 0;
            loop {
                if out.len() == out.capacity() {
                    out.reserve((input.len() * 2).max(256));
                }
                let (before_in, before_out) = (self.decompress.total_in(), out.len());
                let status = self
                    .decompress
                    .decompress_vec(&input[taken..], out, FlushDecompress::Sync)
                    .map_err(|_| ProtocolError::BadDeflate)?;
                if out.len() > max {
                    return Err(ProtocolError::MessageTooBig {
                        len: out.len() as u64,
                        max,
                    });
                }
                let read = (self.decompress.total_in() - before_in) as usize;
                taken += read;
                if status == flate2::Status::StreamEnd {
                    // A final block (§7.2.3.3): the next message is a new
                    // stream; nothing after it, the tail included, is read.
                    self.decompress.reset(false);
                    break 'inputs;
                }
                let stalled = taken == input.len() || (read == 0 && out.len() == before_out);
                // Done with this input once it is all read and the output
                // had room left, or once nothing moves.
                if stalled && out.len() < out.capacity() {
                    break;
                }
            }
        }
        if self.reset_each {
            self.decompress.reset(false);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_rfc_7692_allows() {
        assert_eq!(parse_deflate_answer(""), Ok(None));
        assert_eq!(
            parse_deflate_answer("permessage-deflate"),
            Ok(Some(DeflateParams::default()))
        );
        let p = parse_deflate_answer(
            "permessage-deflate; server_max_window_bits=12; client_no_context_takeover; server_no_context_takeover",
        )
        .unwrap()
        .unwrap();
        assert!(p.client_no_context_takeover && p.server_no_context_takeover);
        assert_eq!(p.server_max_window_bits, Some(12));
        // Not offered: client_max_window_bits, another extension, bad bits.
        assert!(parse_deflate_answer("permessage-deflate; client_max_window_bits=10").is_err());
        assert!(parse_deflate_answer("x-webkit-deflate-frame").is_err());
        assert!(parse_deflate_answer("permessage-deflate; server_max_window_bits=16").is_err());
        assert!(parse_deflate_answer("permessage-deflate, permessage-deflate").is_err());
    }

    #[test]
    fn the_rfc_examples_inflate_and_a_round_trip_keeps_its_context() {
        // RFC 7692 §7.2.3.1 and §7.2.3.2: "Hello", then "Hello" again with
        // the window of the first.
        let mut inflater = MessageInflater::new(false);
        let mut out = Vec::new();
        inflater
            .inflate(&[0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00], &mut out, 100)
            .unwrap();
        assert_eq!(out, b"Hello");
        inflater
            .inflate(&[0xf2, 0x00, 0x11, 0x00, 0x00], &mut out, 100)
            .unwrap();
        assert_eq!(out, b"Hello");
        // §7.2.3.6: an empty message is one 0x00 byte.
        let mut deflater = MessageDeflater::new(false);
        let mut frame = Vec::new();
        deflater.encode_message(&mut frame, MessageKind::Text, b"", None);
        assert_eq!(frame, [0xc1, 0x01, 0x00]);
        // Many messages, context kept on both sides, then reset on both.
        for reset in [false, true] {
            let mut deflater = MessageDeflater::new(reset);
            let mut inflater = MessageInflater::new(reset);
            for i in 0..50 {
                let text = format!("message {i} {}", "abc".repeat(i * 40));
                let mut frame = Vec::new();
                deflater.encode_message(&mut frame, MessageKind::Text, text.as_bytes(), None);
                let head = FrameHead::parse(&frame).unwrap().unwrap();
                assert_eq!(head.rsv, 0b100);
                inflater
                    .inflate(&frame[head.head_len..], &mut out, 1 << 20)
                    .unwrap();
                assert_eq!(out, text.as_bytes(), "reset {reset}, message {i}");
            }
        }
        assert_eq!(
            inflater.inflate(&[0xff, 0xff, 0xff], &mut out, 100),
            Err(ProtocolError::BadDeflate)
        );
    }

    #[test]
    fn the_decoder_inflates_rsv1_messages_only_once_agreed() {
        use crate::{encode_frame, Decoder, Event, Opcode, Role};
        let mut deflater = MessageDeflater::new(false);
        let mut wire = Vec::new();
        deflater.encode_message(&mut wire, MessageKind::Text, b"Hello, hello, hello", None);
        // Not agreed: RSV1 is a reserved bit.
        let mut plain = Decoder::new(Role::Client, 1 << 20);
        assert_eq!(
            plain.decode(&mut wire.clone()).unwrap_err(),
            ProtocolError::ReservedBits(0b100)
        );
        let mut decoder = Decoder::new(Role::Client, 1 << 20);
        decoder.inflate_with(MessageInflater::new(false));
        let got = decoder.decode(&mut wire).unwrap();
        assert_eq!(got.event, Some(Event::Text("Hello, hello, hello")));
        // A fragmented compressed message: RSV1 on its first frame only.
        let mut whole = Vec::new();
        deflater.encode_message(&mut whole, MessageKind::Binary, &[7u8; 300], None);
        let head = FrameHead::parse(&whole).unwrap().unwrap();
        let body = &whole[head.head_len..];
        let (a, b) = body.split_at(body.len() / 2);
        let mut frags = Vec::new();
        encode_frame(&mut frags, false, Opcode::Binary, a, None);
        frags[0] |= 0x40;
        encode_frame(&mut frags, true, Opcode::Continuation, b, None);
        let got = decoder.decode(&mut frags).unwrap();
        assert_eq!(got.event, Some(Event::Binary(&[7u8; 300][..])));
        let mut bad = Vec::new();
        encode_frame(&mut bad, false, Opcode::Binary, a, None);
        encode_frame(&mut bad, true, Opcode::Continuation, b, None);
        let second = 2 + a.len();
        bad[second] |= 0x40;
        assert_eq!(
            decoder.decode(&mut bad).unwrap_err(),
            ProtocolError::ReservedBits(0b100),
            "RSV1 on a continuation"
        );
    }
}
