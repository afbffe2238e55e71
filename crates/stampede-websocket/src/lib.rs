//! stampede-websocket: WebSocket (RFC 6455) frames and messages, sans I/O.
//! Bytes in, messages and control frames out; messages out, bytes in a buffer.
//! It reads no socket and keeps no clock: the target's server side
//! (`stampede serve`'s `/ws/echo` and `/ws/push`) and the client's exchange
//! feed it the bytes their own loops read.
//!
//! It is a crate of its own because both sides use it and neither may
//! depend on the other: stampede-target depends on no client crate, so that
//! client and server bugs cannot cancel out. A shared codec could hide the
//! same misreading on both sides, so the server is checked against a peer
//! nobody here wrote (tests/protocols/websocket.rs: Python's `websockets`).
//!
//! Modules: `opcode` (what a frame carries), `head` (a frame's header read
//! and written), `mask` (the client's XOR mask), `close` (close codes and
//! reasons), `decoder` (frames assembled into messages, every rule of §5
//! checked), `encoder` (messages and control frames written), `error` (the
//! typed protocol errors and the close code each one ends a connection
//! with), `handshake` (`Sec-WebSocket-Accept`, `Sec-WebSocket-Protocol`
//! tokens), `deflate` (`permessage-deflate`, RFC 7692: the answer read,
//! messages compressed and inflated).
//!
//! ```
//! use stampede_websocket::{encode_message, Decoder, Event, MessageKind, Role};
//! let mut wire = Vec::new();
//! // A client masks what it sends (RFC 6455 §5.3).
//! encode_message(&mut wire, MessageKind::Text, b"Hello", Some([0x37, 0xfa, 0x21, 0x3d]));
//! let mut server = Decoder::new(Role::Server, 1 << 20);
//! let got = server.decode(&mut wire).unwrap();
//! assert_eq!(got.consumed, 11);
//! assert_eq!(got.event, Some(Event::Text("Hello")));
//! ```

mod close;
mod decoder;
mod deflate;
mod encoder;
mod error;
mod handshake;
mod head;
mod mask;
mod opcode;

pub use close::{close_code_is_valid, CloseFrame, CLOSE_NORMAL};
pub use decoder::{Decoded, Decoder, Event};
pub use deflate::{
    parse_deflate_answer, DeflateParams, MessageDeflater, MessageInflater, PERMESSAGE_DEFLATE,
};
pub use encoder::{encode_close, encode_control, encode_frame, encode_message};
pub use error::ProtocolError;
pub use handshake::{accept_key, is_token, key_is_valid, GUID};
pub use head::{FrameHead, MAX_CONTROL_PAYLOAD, MAX_HEAD};
pub use mask::apply_mask;
pub use opcode::{MessageKind, Opcode};

/// Which side of the connection this codec is. A server reads masked
/// frames and writes unmasked ones; a client the other way round (§5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Accepted the upgrade: reads masked frames.
    Server,
    /// Asked for the upgrade: reads unmasked frames.
    Client,
}
