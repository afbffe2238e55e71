//! The opening handshake's one computation (RFC 6455 §4.2.2): the server
//! proves it read the client's `Sec-WebSocket-Key` by answering
//! `Sec-WebSocket-Accept` = base64(SHA-1(key + GUID)); the client checks it.

use base64::Engine;

/// The GUID §1.3 appends to the key.
pub const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// `Sec-WebSocket-Accept` for the key as the client sent it (trimmed).
pub fn accept_key(key: &str) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(key.trim().as_bytes());
    ctx.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(ctx.finish().as_ref())
}

/// Whether `name` is an HTTP token (RFC 9110 §5.6.2), as a subprotocol's
/// name in `Sec-WebSocket-Protocol` must be (RFC 6455 §4.1): visible
/// ASCII, none of the separators `"(),/:;<=>?@[\]{}`.
pub fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether `key` is what §4.1 asks of a client: 16 bytes, base64-encoded.
pub fn key_is_valid(key: &str) -> bool {
    base64::engine::general_purpose::STANDARD
        .decode(key.trim())
        .is_ok_and(|k| k.len() == 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_example() {
        // RFC 6455 §1.3's sample key and answer.
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert!(key_is_valid("dGhlIHNhbXBsZSBub25jZQ=="));
        assert!(!key_is_valid("dGhlIHNhbXBsZQ=="));
        assert!(!key_is_valid("not base64!"));
        assert!(is_token("chat.v2") && is_token("graphql-ws"));
        assert!(!is_token("") && !is_token("a b") && !is_token("a,b") && !is_token("é"));
    }
}
