//! The decoder's table tests: RFC 6455 §5.7's examples byte for byte, every
//! stream split at every offset, and one bad frame per typed error.

use super::*;
use crate::encoder::{encode_close, encode_control, encode_frame, encode_message};

/// An event, owned, to compare across feeds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Got {
    Text(String),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<(u16, String)>),
}

fn own(e: Event<'_>) -> Got {
    match e {
        Event::Text(t) => Got::Text(t.to_string()),
        Event::Binary(b) => Got::Binary(b.to_vec()),
        Event::Ping(b) => Got::Ping(b.to_vec()),
        Event::Pong(b) => Got::Pong(b.to_vec()),
        Event::Close(c) => Got::Close(c.map(|c| (c.code, c.reason.to_string()))),
    }
}

/// Feeds `pieces` one after another as a socket would deliver them; every
/// event, or the first error.
fn feed(role: Role, pieces: &[&[u8]]) -> Result<Vec<Got>, ProtocolError> {
    let mut d = Decoder::new(role, 1 << 20);
    let mut buf = Vec::new();
    let mut got = Vec::new();
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            let Decoded { consumed, event } = d.decode(&mut buf)?;
            let event = event.map(own);
            buf.drain(..consumed);
            match event {
                Some(e) => got.push(e),
                None => break,
            }
        }
    }
    Ok(got)
}

/// The events of `wire` whole, and the same at every split and byte by byte.
fn events_at_every_split(role: Role, wire: &[u8]) -> Vec<Got> {
    let whole = feed(role, &[wire]).expect("the stream decodes");
    for at in 0..=wire.len() {
        let split = feed(role, &[&wire[..at], &wire[at..]]).expect("the split stream decodes");
        assert_eq!(split, whole, "split at {at} of {}", wire.len());
    }
    let bytes: Vec<&[u8]> = wire.chunks(1).collect();
    assert_eq!(feed(role, &bytes).expect("byte by byte"), whole);
    whole
}

#[test]
fn rfc_6455_section_5_7_examples() {
    // A single-frame unmasked text message.
    let hello = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    assert_eq!(
        events_at_every_split(Role::Client, &hello),
        [Got::Text("Hello".into())]
    );
    let mut out = Vec::new();
    encode_message(&mut out, MessageKind::Text, b"Hello", None);
    assert_eq!(out, hello);

    // A single-frame masked text message.
    let masked = [
        0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    assert_eq!(
        events_at_every_split(Role::Server, &masked),
        [Got::Text("Hello".into())]
    );
    let key = Some([0x37, 0xfa, 0x21, 0x3d]);
    out.clear();
    encode_message(&mut out, MessageKind::Text, b"Hello", key);
    assert_eq!(out, masked);

    // A fragmented unmasked text message: "Hel", then "lo".
    let fragmented = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f];
    assert_eq!(
        events_at_every_split(Role::Client, &fragmented),
        [Got::Text("Hello".into())]
    );
    out.clear();
    encode_frame(&mut out, false, Opcode::Text, b"Hel", None);
    encode_frame(&mut out, true, Opcode::Continuation, b"lo", None);
    assert_eq!(out, fragmented);

    // An unmasked ping, and a masked pong answering it.
    let ping = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    assert_eq!(
        events_at_every_split(Role::Client, &ping),
        [Got::Ping(b"Hello".to_vec())]
    );
    let pong = [
        0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    assert_eq!(
        events_at_every_split(Role::Server, &pong),
        [Got::Pong(b"Hello".to_vec())]
    );
    out.clear();
    encode_control(&mut out, Opcode::Ping, b"Hello", None).unwrap();
    encode_control(&mut out, Opcode::Pong, b"Hello", key).unwrap();
    assert_eq!(out, [&ping[..], &pong[..]].concat());
}

#[test]
fn rfc_6455_section_5_7_lengths() {
    // 256 bytes of binary in one unmasked frame: 0x82 0x7E 0x0100.
    let body: Vec<u8> = (0..256u32).map(|i| i as u8).collect();
    let mut out = Vec::new();
    encode_message(&mut out, MessageKind::Binary, &body, None);
    assert_eq!(out[..4], [0x82, 0x7e, 0x01, 0x00]);
    assert_eq!(out.len(), 4 + 256);
    assert_eq!(
        events_at_every_split(Role::Client, &out),
        [Got::Binary(body)]
    );

    // 64 KiB in one unmasked frame: 0x82 0x7F 0x0000000000010000.
    let body: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8).collect();
    out.clear();
    encode_message(&mut out, MessageKind::Binary, &body, None);
    assert_eq!(out[..10], [0x82, 0x7f, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00]);
    assert_eq!(out.len(), 10 + 65536);
    // Every split of 64 KiB would be 64 Ki decodes of 64 KiB: the header's
    // offsets, around the 126/127 boundaries, and byte by byte suffice.
    let whole = feed(Role::Client, &[&out]).unwrap();
    assert_eq!(whole, [Got::Binary(body.clone())]);
    for at in (0..=12).chain([4 + 65532, out.len() - 1, out.len()]) {
        assert_eq!(
            feed(Role::Client, &[&out[..at], &out[at..]]).unwrap(),
            whole
        );
    }
    let bytes: Vec<&[u8]> = out.chunks(1).collect();
    assert_eq!(feed(Role::Client, &bytes).unwrap(), whole);

    // The same, masked, from a client; and the lengths at each boundary.
    for len in [0usize, 125, 126, 127, 65535, 65536] {
        let body = vec![b'x'; len];
        out.clear();
        encode_message(&mut out, MessageKind::Text, &body, Some([1, 2, 3, 4]));
        let head = match len {
            0..=125 => 2,
            126..=65535 => 4,
            _ => 10,
        };
        assert_eq!(out.len(), head + 4 + len, "length {len}");
        let got = feed(Role::Server, &[&out]).unwrap();
        assert_eq!(got, [Got::Text("x".repeat(len))], "length {len}");
    }
}

#[test]
fn a_conversation_at_every_split() {
    // Control frames between fragments (§5.4 allows them), then a close.
    let key = Some([9, 8, 7, 6]);
    let mut wire = Vec::new();
    encode_frame(&mut wire, false, Opcode::Binary, b"\x00\x01", key);
    encode_control(&mut wire, Opcode::Ping, b"p", key).unwrap();
    encode_frame(&mut wire, false, Opcode::Continuation, b"", key);
    encode_frame(&mut wire, true, Opcode::Continuation, b"\xff", key);
    encode_message(&mut wire, MessageKind::Text, "héllo".as_bytes(), key);
    encode_message(&mut wire, MessageKind::Binary, b"", key);
    encode_close(&mut wire, Some(1000), "done", key).unwrap();
    assert_eq!(
        events_at_every_split(Role::Server, &wire),
        [
            Got::Ping(b"p".to_vec()),
            Got::Binary(vec![0, 1, 0xff]),
            Got::Text("héllo".into()),
            Got::Binary(Vec::new()),
            Got::Close(Some((1000, "done".into()))),
        ]
    );
    // A text message whose UTF-8 character is split across fragments.
    wire.clear();
    let e_acute = "é".as_bytes();
    encode_frame(&mut wire, false, Opcode::Text, &e_acute[..1], None);
    encode_frame(&mut wire, true, Opcode::Continuation, &e_acute[1..], None);
    encode_close(&mut wire, None, "", None).unwrap();
    assert_eq!(
        events_at_every_split(Role::Client, &wire),
        [Got::Text("é".into()), Got::Close(None)]
    );
}

#[test]
fn each_bad_frame_has_its_error() {
    let key = Some([1, 2, 3, 4]);
    let frame = |fin: bool, op: Opcode, payload: &[u8], mask: Option<[u8; 4]>| {
        let mut out = Vec::new();
        encode_frame(&mut out, fin, op, payload, mask);
        out
    };
    let long = [b'a'; 126];
    let cases: Vec<(&str, Role, Vec<u8>, ProtocolError, u16)> = vec![
        (
            "masked from a server",
            Role::Client,
            frame(true, Opcode::Text, b"hi", key),
            ProtocolError::MaskedFromServer,
            1002,
        ),
        (
            "unmasked from a client",
            Role::Server,
            frame(true, Opcode::Text, b"hi", None),
            ProtocolError::UnmaskedFromClient,
            1002,
        ),
        (
            "opcode 3",
            Role::Client,
            vec![0x83, 0x00],
            ProtocolError::BadOpcode(3),
            1002,
        ),
        (
            "opcode 0xB",
            Role::Client,
            vec![0x8b, 0x00],
            ProtocolError::BadOpcode(0xb),
            1002,
        ),
        (
            "RSV1 without an extension",
            Role::Client,
            vec![0xc1, 0x00],
            ProtocolError::ReservedBits(0b100),
            1002,
        ),
        (
            "RSV3",
            Role::Client,
            vec![0x91, 0x00],
            ProtocolError::ReservedBits(0b001),
            1002,
        ),
        (
            "ping of 126 bytes",
            Role::Client,
            frame(true, Opcode::Ping, &long, None),
            ProtocolError::ControlTooLong(126),
            1002,
        ),
        (
            "fragmented ping",
            Role::Client,
            frame(false, Opcode::Ping, b"", None),
            ProtocolError::ControlFragmented,
            1002,
        ),
        (
            "length with its top bit set",
            Role::Client,
            vec![0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0],
            ProtocolError::LengthTooLarge,
            1002,
        ),
        (
            "continuation first",
            Role::Client,
            frame(true, Opcode::Continuation, b"x", None),
            ProtocolError::UnexpectedContinuation,
            1002,
        ),
        (
            "new message mid-message",
            Role::Client,
            [
                frame(false, Opcode::Text, b"a", None),
                frame(true, Opcode::Text, b"b", None),
            ]
            .concat(),
            ProtocolError::ExpectedContinuation,
            1002,
        ),
        (
            "invalid UTF-8 in text",
            Role::Client,
            frame(true, Opcode::Text, b"\xc3\x28", None),
            ProtocolError::BadUtf8,
            1007,
        ),
        (
            "invalid UTF-8 across fragments",
            Role::Client,
            [
                frame(false, Opcode::Text, b"\xc3", None),
                frame(true, Opcode::Continuation, b"\x28", None),
            ]
            .concat(),
            ProtocolError::BadUtf8,
            1007,
        ),
        (
            "invalid UTF-8 in a close reason",
            Role::Client,
            frame(true, Opcode::Close, b"\x03\xe8\xff", None),
            ProtocolError::BadUtf8,
            1007,
        ),
        (
            "one-byte close",
            Role::Client,
            frame(true, Opcode::Close, b"\x03", None),
            ProtocolError::BadClosePayload,
            1002,
        ),
        (
            "close code 1006",
            Role::Client,
            frame(true, Opcode::Close, b"\x03\xee", None),
            ProtocolError::BadCloseCode(1006),
            1002,
        ),
    ];
    for (name, role, wire, error, code) in cases {
        assert_eq!(feed(role, &[&wire]), Err(error.clone()), "{name}");
        assert_eq!(error.close_code(), code, "{name}");
        assert!(!error.to_string().is_empty(), "{name}");
        // The header's errors come before its payload is in (a 126-byte
        // ping's header has its 16-bit length).
        let head_len = if error == ProtocolError::ControlTooLong(126) {
            4
        } else {
            2
        };
        let head_only = &wire[..head_len];
        if matches!(
            error,
            ProtocolError::BadOpcode(_)
                | ProtocolError::ReservedBits(_)
                | ProtocolError::ControlTooLong(_)
                | ProtocolError::ControlFragmented
        ) {
            assert_eq!(feed(role, &[head_only]), Err(error), "{name}, header only");
        }
    }
}

#[test]
fn a_message_over_the_limit_is_refused_at_its_header() {
    let mut d = Decoder::new(Role::Client, 10);
    let mut wire = Vec::new();
    encode_message(&mut wire, MessageKind::Binary, &[0; 10], None);
    assert!(d.decode(&mut wire).unwrap().event.is_some());
    // Only the header of an 11-byte message: refused already.
    let mut head = vec![0x82, 11];
    let err = d.decode(&mut head).unwrap_err();
    assert_eq!(err, ProtocolError::MessageTooBig { len: 11, max: 10 });
    assert_eq!(err.close_code(), 1009);
    // Fragments add up.
    let mut d = Decoder::new(Role::Client, 10);
    let mut wire = Vec::new();
    encode_frame(&mut wire, false, Opcode::Binary, &[0; 6], None);
    encode_frame(&mut wire, true, Opcode::Continuation, &[0; 5], None);
    let err = d.decode(&mut wire).unwrap_err();
    assert_eq!(err, ProtocolError::MessageTooBig { len: 11, max: 10 });
}

#[test]
fn mid_message_is_known_and_encoders_refuse_bad_control_frames() {
    let mut d = Decoder::new(Role::Client, 100);
    let mut wire = Vec::new();
    encode_frame(&mut wire, false, Opcode::Text, b"a", None);
    let got = d.decode(&mut wire).unwrap();
    assert_eq!((got.consumed, got.event), (3, None));
    assert!(d.in_message());

    let mut out = Vec::new();
    assert_eq!(
        encode_control(&mut out, Opcode::Ping, &[0; 126], None),
        Err(ProtocolError::ControlTooLong(126))
    );
    assert_eq!(
        encode_control(&mut out, Opcode::Text, b"", None),
        Err(ProtocolError::BadOpcode(1))
    );
    assert_eq!(
        encode_close(&mut out, Some(1005), "", None),
        Err(ProtocolError::BadCloseCode(1005))
    );
    assert_eq!(
        encode_close(&mut out, Some(1000), &"r".repeat(124), None),
        Err(ProtocolError::ControlTooLong(126))
    );
    assert!(out.is_empty(), "nothing written for a refused frame");
    encode_close(&mut out, Some(1000), &"r".repeat(123), None).unwrap();
    assert_eq!(out.len(), 2 + 125);
}

#[test]
fn any_bytes_give_events_or_an_error_never_a_panic() {
    // Deterministic mutations of a valid conversation (byte flips,
    // truncations, random bytes), fed whole and in two pieces: every call
    // ends with an event, a request for more, or an error, and never
    // claims more bytes than it was given.
    let mut valid = Vec::new();
    let key = Some([5, 6, 7, 8]);
    encode_frame(&mut valid, false, Opcode::Text, "hé".as_bytes(), key);
    encode_control(&mut valid, Opcode::Ping, b"x", key).unwrap();
    encode_frame(&mut valid, true, Opcode::Continuation, b"llo", key);
    encode_message(&mut valid, MessageKind::Binary, &[7; 300], key);
    encode_close(&mut valid, Some(1001), "bye", key).unwrap();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..20_000 {
        let mut wire = valid.clone();
        match round % 3 {
            0 => {
                for _ in 0..1 + next() % 4 {
                    let at = (next() % wire.len() as u64) as usize;
                    wire[at] ^= 1 << (next() % 8);
                }
            }
            1 => wire.truncate((next() % wire.len() as u64) as usize),
            _ => {
                wire = (0..next() % 64).map(|_| next() as u8).collect();
            }
        }
        for role in [Role::Server, Role::Client] {
            let split = (next() % (wire.len() as u64 + 1)) as usize;
            let mut d = Decoder::new(role, 1 << 16);
            let mut buf = Vec::new();
            'pieces: for piece in [&wire[..split], &wire[split..]] {
                buf.extend_from_slice(piece);
                loop {
                    let len = buf.len();
                    match d.decode(&mut buf) {
                        Err(_) => break 'pieces,
                        Ok(Decoded { consumed, event }) => {
                            assert!(consumed <= len, "round {round}");
                            let done = event.is_none();
                            buf.drain(..consumed);
                            if done {
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
}
