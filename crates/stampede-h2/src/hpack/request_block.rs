//! A request's header block, encoded once and sent on every stream.
//!
//! Why one block can be reused: HPACK state lives in the dynamic table, and
//! this encoder never touches it. Every field is either an exact static-table
//! index (`:method GET` is the one octet 0x82) or a literal *without
//! indexing* (RFC 7541 §6.2.2) whose name is a static index or a literal.
//! Such a block inserts nothing into the server's dynamic table and refers to
//! no dynamic entry, so it decodes to the same fields whatever the table
//! holds, on any stream and any connection. The price is a few octets per
//! request against an indexing encoder; the gain is no encoding at all per
//! request. Strings are sent raw (no Huffman): the block is built once.

use super::static_table::{find_exact, find_name};

/// A header field HTTP/2 cannot carry: the name is empty, has upper case or
/// a character outside a token, it is connection-specific (RFC 9113
/// §8.2.2), or the value holds CR, LF or NUL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidHeader {
    /// The offending name, as given.
    pub name: String,
}

impl std::fmt::Display for InvalidHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "header {:?} cannot be sent over HTTP/2", self.name)
    }
}

impl std::error::Error for InvalidHeader {}

/// A request's encoded header block, ready to send on any stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestBlock {
    bytes: Vec<u8>,
}

/// Connection-specific fields HTTP/2 forbids (RFC 9113 §8.2.2).
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

impl RequestBlock {
    /// Encodes `method scheme://authority path` with `headers` (names in any
    /// case; they are sent in lower case). `host` is dropped when an
    /// authority is given (`:authority` replaces it); `te` is allowed only as
    /// `trailers`.
    pub fn new(
        method: &str,
        scheme: &str,
        authority: &str,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Result<RequestBlock, InvalidHeader> {
        let mut bytes = Vec::with_capacity(64);
        field(&mut bytes, b":method", method.as_bytes());
        field(&mut bytes, b":scheme", scheme.as_bytes());
        field(&mut bytes, b":authority", authority.as_bytes());
        field(&mut bytes, b":path", path.as_bytes());
        let mut lower = Vec::new();
        for &(name, value) in headers {
            let bad = || InvalidHeader {
                name: name.to_string(),
            };
            lower.clear();
            lower.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
            let token =
                !lower.is_empty() && lower.iter().all(|&b| b.is_ascii_graphic() && b != b':');
            let clean_value = !value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0));
            let te_ok = lower != b"te" || value.eq_ignore_ascii_case("trailers");
            if !token
                || !clean_value
                || !te_ok
                || CONNECTION_SPECIFIC.iter().any(|c| c.as_bytes() == lower)
            {
                return Err(bad());
            }
            if lower == b"host" && !authority.is_empty() {
                continue;
            }
            field(&mut bytes, &lower, value.as_bytes());
        }
        Ok(RequestBlock { bytes })
    }

    /// The encoded block.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Appends one field: an exact static index, else a literal without indexing.
fn field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    if let Some(index) = find_exact(name, value) {
        integer(out, 0x80, 7, index);
        return;
    }
    match find_name(name) {
        Some(index) => integer(out, 0x00, 4, index),
        None => {
            out.push(0x00);
            string(out, name);
        }
    }
    string(out, value);
}

/// A raw (not Huffman) string literal.
fn string(out: &mut Vec<u8>, s: &[u8]) {
    integer(out, 0x00, 7, s.len());
    out.extend_from_slice(s);
}

/// An integer with a `prefix`-bit prefix after the pattern bits `high`.
fn integer(out: &mut Vec<u8>, high: u8, prefix: u8, mut value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(high | value as u8);
        return;
    }
    out.push(high | max as u8);
    value -= max;
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::super::Decoder;
    use super::*;

    fn decoded(block: &RequestBlock, d: &mut Decoder) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        d.decode(block.as_bytes(), |n, v| out.push((n.to_vec(), v.to_vec())))
            .unwrap();
        out
    }

    #[test]
    fn a_block_decodes_the_same_after_the_table_changed() {
        // Over 127 octets: its length takes a multi-octet integer.
        let path = format!("/{}", "x".repeat(200));
        let block = RequestBlock::new(
            "GET",
            "http",
            "www.example.com",
            &path,
            &[
                ("User-Agent", "stampede"),
                ("X-Custom", "1"),
                ("Host", "ignored"),
            ],
        )
        .unwrap();
        // GET and http are one octet each (exact static entries).
        assert_eq!(&block.as_bytes()[..2], &[0x82, 0x86]);
        let mut d = Decoder::new(4096);
        let first = decoded(&block, &mut d);
        assert_eq!(d.table_size(), 0, "the block inserts nothing");
        // Fill the table with unrelated entries (RFC 7541 C.3.1), then decode again.
        d.decode(&[0x40, 1, b'a', 1, b'b'], |_, _| {}).unwrap();
        assert_eq!(decoded(&block, &mut d), first);
        let names: Vec<&[u8]> = first.iter().map(|(n, _)| &n[..]).collect();
        assert_eq!(
            names,
            [
                &b":method"[..],
                b":scheme",
                b":authority",
                b":path",
                b"user-agent",
                b"x-custom"
            ]
        );
        assert_eq!(first[3].1, path.as_bytes());
    }

    #[test]
    fn fields_http2_forbids_are_refused() {
        for (name, value) in [
            ("Connection", "close"),
            ("te", "gzip"),
            ("bad name", "x"),
            ("x", "a\r\nb"),
            ("", "x"),
        ] {
            assert!(
                RequestBlock::new("GET", "http", "h", "/", &[(name, value)]).is_err(),
                "{name}"
            );
        }
        assert!(RequestBlock::new("GET", "http", "h", "/", &[("TE", "trailers")]).is_ok());
    }
}
