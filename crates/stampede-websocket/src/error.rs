//! What can be wrong with the bytes a peer sent: one typed error per rule
//! of RFC 6455 §5 and §7, each with the close code that ends the
//! connection over it (§7.4.1).

/// A frame or message that breaks the protocol. After one, the connection
/// is failed (§7.1.7): the reader sends a close with [`ProtocolError::close_code`]
/// and reads nothing more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolError {
    /// A client read a masked frame: a server must not mask (§5.1).
    MaskedFromServer,
    /// A server read an unmasked frame: a client must mask (§5.1).
    UnmaskedFromClient,
    /// An opcode §5.2 reserves (3–7, 0xB–0xF).
    BadOpcode(u8),
    /// A reserved bit set with no extension that gives it a meaning (§5.2):
    /// the bits as RSV1 0b100, RSV2 0b010, RSV3 0b001.
    ReservedBits(u8),
    /// A close, ping or pong with more than 125 bytes (§5.5).
    ControlTooLong(u64),
    /// A close, ping or pong without FIN (§5.5: never fragmented).
    ControlFragmented,
    /// A 64-bit length with its top bit set (§5.2).
    LengthTooLarge,
    /// A continuation frame with no message begun (§5.4).
    UnexpectedContinuation,
    /// A text or binary frame while a fragmented message is unfinished (§5.4).
    ExpectedContinuation,
    /// A message longer than the reader accepts (close code 1009).
    MessageTooBig {
        /// Its length so far, with the frame that crossed the limit.
        len: u64,
        /// The reader's limit.
        max: usize,
    },
    /// A text message or close reason that is not UTF-8 (§8.1; code 1007).
    BadUtf8,
    /// A close payload of one byte: a code needs two (§5.5.1).
    BadClosePayload,
    /// A `permessage-deflate` message that does not inflate (RFC 7692 §7.2.2).
    BadDeflate,
    /// A close code no endpoint may send (§7.4: below 1000, 1004–1006,
    /// 1015, unassigned ones below 3000, 5000 and over).
    BadCloseCode(u16),
}

impl ProtocolError {
    /// The close code the reader answers this error with (§7.4.1): 1007
    /// for bad UTF-8, 1009 for a message too big, 1002 for the rest.
    pub fn close_code(&self) -> u16 {
        match self {
            ProtocolError::BadUtf8 => 1007,
            ProtocolError::MessageTooBig { .. } => 1009,
            _ => 1002,
        }
    }
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtocolError::MaskedFromServer => write!(f, "masked frame from the server"),
            ProtocolError::UnmaskedFromClient => write!(f, "unmasked frame from the client"),
            ProtocolError::BadOpcode(op) => write!(f, "reserved opcode {op:#x}"),
            ProtocolError::ReservedBits(bits) => {
                write!(f, "reserved bits {bits:#05b} set with no extension")
            }
            ProtocolError::ControlTooLong(len) => {
                write!(f, "control frame of {len} bytes (at most 125)")
            }
            ProtocolError::ControlFragmented => write!(f, "fragmented control frame"),
            ProtocolError::LengthTooLarge => write!(f, "frame length with its top bit set"),
            ProtocolError::UnexpectedContinuation => {
                write!(f, "continuation frame with no message begun")
            }
            ProtocolError::ExpectedContinuation => {
                write!(f, "new message while a fragmented one is unfinished")
            }
            ProtocolError::MessageTooBig { len, max } => {
                write!(f, "message of {len} bytes (at most {max})")
            }
            ProtocolError::BadUtf8 => write!(f, "invalid UTF-8 in a text message or close reason"),
            ProtocolError::BadClosePayload => write!(f, "close frame with a one-byte payload"),
            ProtocolError::BadCloseCode(code) => write!(f, "close code {code} may not be sent"),
            ProtocolError::BadDeflate => {
                write!(f, "a permessage-deflate message that does not inflate")
            }
        }
    }
}

impl std::error::Error for ProtocolError {}
