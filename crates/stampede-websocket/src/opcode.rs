//! What a frame carries: its opcode (RFC 6455 §5.2), and the two kinds of
//! data message.

/// A frame's opcode. The reserved ones (3–7, 0xB–0xF) are no variant: the
/// header reader refuses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opcode {
    /// 0x0: the next fragment of a message begun by a text or binary frame.
    Continuation,
    /// 0x1: a text message (UTF-8), or its first fragment.
    Text,
    /// 0x2: a binary message, or its first fragment.
    Binary,
    /// 0x8: the close handshake.
    Close,
    /// 0x9: asks for a pong with the same payload.
    Ping,
    /// 0xA: the answer to a ping (or unsolicited, a heartbeat).
    Pong,
}

impl Opcode {
    /// The opcode of the low four bits' value, or `None` for a reserved one.
    pub fn from_bits(bits: u8) -> Option<Opcode> {
        Some(match bits {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xA => Opcode::Pong,
            _ => return None,
        })
    }

    /// The four bits on the wire.
    pub fn bits(self) -> u8 {
        match self {
            Opcode::Continuation => 0x0,
            Opcode::Text => 0x1,
            Opcode::Binary => 0x2,
            Opcode::Close => 0x8,
            Opcode::Ping => 0x9,
            Opcode::Pong => 0xA,
        }
    }

    /// Close, ping and pong: at most 125 bytes, never fragmented (§5.5).
    pub fn is_control(self) -> bool {
        matches!(self, Opcode::Close | Opcode::Ping | Opcode::Pong)
    }
}

/// The two kinds of data message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// UTF-8 text (validated when read).
    Text,
    /// Any bytes.
    Binary,
}

impl MessageKind {
    /// The opcode of the message's first frame.
    pub fn opcode(self) -> Opcode {
        match self {
            MessageKind::Text => Opcode::Text,
            MessageKind::Binary => Opcode::Binary,
        }
    }
}
