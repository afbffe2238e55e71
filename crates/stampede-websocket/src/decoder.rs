//! Frames read into messages (RFC 6455 §5): the reader's side of a
//! connection. It takes the bytes read so far, unmasks the complete frames
//! in place, joins fragments, and hands out one event at a time: a whole
//! text or binary message, a ping, a pong or a close. Each rule of §5 is
//! checked as the frame's header arrives, so a bad frame is refused before
//! its payload is waited for. The caller drops the bytes it was told were
//! consumed and reads more when no event came. Once `permessage-deflate`
//! is agreed ([`Decoder::inflate_with`]), a message whose first frame has
//! RSV1 is inflated before it is handed out (RFC 7692 §6.1, §7.2.2).

use crate::close::CloseFrame;
use crate::deflate::MessageInflater;
use crate::error::ProtocolError;
use crate::head::FrameHead;
use crate::mask::apply_mask;
use crate::opcode::{MessageKind, Opcode};
use crate::Role;

/// What one call to [`Decoder::decode`] found.
#[derive(Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// Bytes at the front of the buffer read (the caller drops them).
    pub consumed: usize,
    /// The event, or `None` when the rest of the buffer holds no complete
    /// one: read more, then call again with what is left.
    pub event: Option<Event<'a>>,
}

/// One thing the peer said.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A whole text message, UTF-8 checked.
    Text(&'a str),
    /// A whole binary message.
    Binary(&'a [u8]),
    /// A ping: answer with a pong of the same payload (§5.5.2).
    Ping(&'a [u8]),
    /// A pong.
    Pong(&'a [u8]),
    /// A close, with its code and reason if it had any: answer with a close
    /// (§5.5.1), then read nothing more.
    Close(Option<CloseFrame<'a>>),
}

/// Where the frame that ends a `decode` call was, once its payload is unmasked.
enum Found {
    More,
    Control(Opcode, usize, usize),
    Whole(MessageKind, usize, usize),
    Assembled(MessageKind),
    /// A whole message in one frame, compressed (RSV1).
    Compressed(MessageKind, usize, usize),
    /// A fragmented message joined, compressed.
    AssembledCompressed(MessageKind),
}

/// The reader's state across reads: the side, the message limit and the
/// fragments of an unfinished message.
#[derive(Debug)]
pub struct Decoder {
    role: Role,
    max_message: usize,
    /// The kind of the fragmented message being joined, if one is.
    partial: Option<MessageKind>,
    /// Its payload so far (kept for the next message: no allocation per message).
    assembly: Vec<u8>,
    /// `permessage-deflate` agreed: RSV1 marks a compressed message.
    inflater: Option<MessageInflater>,
    /// The fragmented message being joined is compressed.
    partial_compressed: bool,
    /// The last compressed message, inflated.
    inflated: Vec<u8>,
}

impl Decoder {
    /// A reader for `role`'s side that refuses messages over `max_message` bytes.
    pub fn new(role: Role, max_message: usize) -> Decoder {
        Decoder {
            role,
            max_message,
            partial: None,
            assembly: Vec::new(),
            inflater: None,
            partial_compressed: false,
            inflated: Vec::new(),
        }
    }

    /// `permessage-deflate` was agreed: from now on a data message whose
    /// first frame has RSV1 is inflated with `inflater`.
    pub fn inflate_with(&mut self, inflater: MessageInflater) {
        self.inflater = Some(inflater);
    }

    /// Whether a fragmented message is begun and unfinished (a close now
    /// ends it mid-message).
    pub fn in_message(&self) -> bool {
        self.partial.is_some()
    }

    /// The first event in `buf`, with the bytes it took. Complete frames
    /// before it are unmasked in place; a frame not yet whole is left as
    /// it is, for the next call.
    pub fn decode<'a>(&'a mut self, buf: &'a mut [u8]) -> Result<Decoded<'a>, ProtocolError> {
        let mut consumed = 0;
        let found = loop {
            let Some(head) = FrameHead::parse(&buf[consumed..])? else {
                break Found::More;
            };
            self.check(&head)?;
            let start = consumed + head.head_len;
            // `check` bounds `len` by `max_message`, a usize.
            let end = start + head.len as usize;
            if end > buf.len() {
                break Found::More;
            }
            if let Some(key) = head.mask {
                apply_mask(&mut buf[start..end], key);
            }
            consumed = end;
            let compressed = head.rsv & 0b100 != 0;
            match (head.opcode, head.fin) {
                (op, _) if op.is_control() => break Found::Control(op, start, end),
                (Opcode::Continuation, fin) => {
                    self.assembly.extend_from_slice(&buf[start..end]);
                    if fin {
                        let kind = self.partial.take().unwrap_or(MessageKind::Binary);
                        if std::mem::take(&mut self.partial_compressed) {
                            break Found::AssembledCompressed(kind);
                        }
                        break Found::Assembled(kind);
                    }
                }
                (op, true) if compressed => break Found::Compressed(kind_of(op), start, end),
                (op, true) => break Found::Whole(kind_of(op), start, end),
                (op, false) => {
                    self.partial_compressed = compressed;
                    self.partial = Some(kind_of(op));
                    self.assembly.clear();
                    self.assembly.extend_from_slice(&buf[start..end]);
                }
            }
        };
        let event = match found {
            Found::More => None,
            Found::Control(op, start, end) => Some(control(op, &buf[start..end])?),
            Found::Whole(kind, start, end) => Some(message(kind, &buf[start..end])?),
            Found::Assembled(kind) => Some(message(kind, &self.assembly)?),
            Found::Compressed(kind, start, end) => {
                let inflater = self.inflater.as_mut().expect("RSV1 checked");
                inflater.inflate(&buf[start..end], &mut self.inflated, self.max_message)?;
                Some(message(kind, &self.inflated)?)
            }
            Found::AssembledCompressed(kind) => {
                let inflater = self.inflater.as_mut().expect("RSV1 checked");
                inflater.inflate(&self.assembly, &mut self.inflated, self.max_message)?;
                Some(message(kind, &self.inflated)?)
            }
        };
        Ok(Decoded { consumed, event })
    }

    /// The rules a header breaks whatever its payload: the mask for the
    /// side, the reserved bits, the order of fragments, the size.
    fn check(&self, head: &FrameHead) -> Result<(), ProtocolError> {
        match (self.role, head.mask.is_some()) {
            (Role::Server, false) => return Err(ProtocolError::UnmaskedFromClient),
            (Role::Client, true) => return Err(ProtocolError::MaskedFromServer),
            _ => {}
        }
        // RSV1 means compressed on a message's first frame, once
        // permessage-deflate is agreed (RFC 7692 §6.1); nowhere else.
        let first_data = matches!(head.opcode, Opcode::Text | Opcode::Binary);
        let allowed = if self.inflater.is_some() && first_data {
            0b100
        } else {
            0
        };
        if head.rsv & !allowed != 0 {
            return Err(ProtocolError::ReservedBits(head.rsv));
        }
        match head.opcode {
            Opcode::Continuation if self.partial.is_none() => {
                return Err(ProtocolError::UnexpectedContinuation)
            }
            Opcode::Text | Opcode::Binary if self.partial.is_some() => {
                return Err(ProtocolError::ExpectedContinuation)
            }
            _ => {}
        }
        let so_far = if head.opcode == Opcode::Continuation {
            self.assembly.len() as u64
        } else {
            0
        };
        let len = so_far.saturating_add(head.len);
        if len > self.max_message as u64 {
            return Err(ProtocolError::MessageTooBig {
                len,
                max: self.max_message,
            });
        }
        Ok(())
    }
}

fn kind_of(op: Opcode) -> MessageKind {
    if op == Opcode::Text {
        MessageKind::Text
    } else {
        MessageKind::Binary
    }
}

fn message(kind: MessageKind, payload: &[u8]) -> Result<Event<'_>, ProtocolError> {
    Ok(match kind {
        MessageKind::Text => {
            Event::Text(std::str::from_utf8(payload).map_err(|_| ProtocolError::BadUtf8)?)
        }
        MessageKind::Binary => Event::Binary(payload),
    })
}

fn control(op: Opcode, payload: &[u8]) -> Result<Event<'_>, ProtocolError> {
    Ok(match op {
        Opcode::Ping => Event::Ping(payload),
        Opcode::Pong => Event::Pong(payload),
        _ => Event::Close(CloseFrame::parse(payload)?),
    })
}

#[cfg(test)]
#[path = "decoder_tests.rs"]
mod tests;
