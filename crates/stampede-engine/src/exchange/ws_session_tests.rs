//! The client session against a server played by hand: the upgrade's
//! bytes, the answers it accepts and refuses, replies matched by order,
//! frames split at every offset, pings, closes and bad frames; the
//! subprotocol chosen and `permessage-deflate` agreed or refused.

use super::*;
use stampede_plan::{parse_header, Header, WebSocketSpec};
use stampede_websocket::{encode_frame, CloseFrame, MessageInflater};

fn config(headers: &[&str]) -> WsConfig {
    let headers: Vec<Header> = headers.iter().map(|h| parse_header(h).unwrap()).collect();
    let spec = WebSocketSpec {
        message: b"hi".to_vec(),
        ..WebSocketSpec::default()
    };
    WsConfig::new("/ws/echo?x=1", "127.0.0.1:3000", &headers, &spec)
}

fn session() -> WsSession {
    WsSession::new(&config(&[]), fastrand::Rng::with_seed(7))
}

/// The key the session sent, read back from its upgrade request.
fn key_of(request: &[u8]) -> String {
    let text = std::str::from_utf8(request).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Sec-WebSocket-Key: "))
        .unwrap();
    line["Sec-WebSocket-Key: ".len()..].to_string()
}

fn accepted(key: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        accept_key(key)
    )
    .into_bytes()
}

/// A session whose upgrade was accepted, its outbox emptied.
fn open() -> WsSession {
    let mut s = session();
    let answer = accepted(&key_of(s.outbox()));
    s.written();
    let mut events = Vec::new();
    s.received(&answer, &mut events).unwrap();
    assert_eq!(events, [WsEvent::Upgraded]);
    s
}

/// What a server reads from the session's outbox: each frame's event,
/// unmasked, as text.
fn server_reads(bytes: &[u8]) -> Vec<String> {
    let mut server = Decoder::new(Role::Server, 1 << 20);
    let mut buf = bytes.to_vec();
    let mut at = 0;
    let mut seen = Vec::new();
    while at < buf.len() {
        let d = server.decode(&mut buf[at..]).unwrap();
        at += d.consumed;
        match d.event {
            Some(Event::Text(t)) => seen.push(format!("text {t}")),
            Some(Event::Pong(p)) => seen.push(format!("pong {}", String::from_utf8_lossy(p))),
            Some(Event::Close(Some(CloseFrame { code, .. }))) => seen.push(format!("close {code}")),
            Some(other) => seen.push(format!("{other:?}")),
            None => break,
        }
    }
    seen
}

#[test]
fn the_upgrade_request_has_a_fresh_key_and_the_users_headers() {
    let s = WsSession::new(
        &config(&["X-Token: abc", "Connection: close"]),
        fastrand::Rng::with_seed(1),
    );
    let text = String::from_utf8(s.outbox().to_vec()).unwrap();
    assert!(
        text.starts_with("GET /ws/echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n"),
        "{text}"
    );
    assert!(
        text.contains("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"),
        "{text}"
    );
    assert!(text.contains("\r\nSec-WebSocket-Version: 13\r\n"), "{text}");
    assert!(text.contains("\r\nX-Token: abc\r\n"), "{text}");
    // The upgrade's own Connection header is the one sent.
    assert!(!text.contains("Connection: close"), "{text}");
    assert!(text.ends_with("\r\n\r\n"), "{text}");
    assert!(stampede_websocket::key_is_valid(&key_of(s.outbox())));
    let other = WsSession::new(&config(&[]), fastrand::Rng::with_seed(2));
    assert_ne!(key_of(s.outbox()), key_of(other.outbox()));
    let own_host = WsSession::new(&config(&["Host: example.org"]), fastrand::Rng::with_seed(1));
    let text = String::from_utf8(own_host.outbox().to_vec()).unwrap();
    assert_eq!(text.matches("Host: ").count(), 1, "{text}");
    assert!(text.contains("Host: example.org\r\n"), "{text}");
}

#[test]
fn an_answer_split_anywhere_upgrades_once() {
    let base = session();
    let answer = accepted(&key_of(base.outbox()));
    for cut in 0..=answer.len() {
        let mut s = WsSession::new(&config(&[]), fastrand::Rng::with_seed(7));
        let mut events = Vec::new();
        s.received(&answer[..cut], &mut events).unwrap();
        s.received(&answer[cut..], &mut events).unwrap();
        assert_eq!(events, [WsEvent::Upgraded], "cut at {cut}");
        assert!(s.is_open());
    }
}

#[test]
fn a_refused_or_wrong_upgrade_is_an_upgrade_error() {
    let cases: [(&[u8], &str); 5] = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "200 OK, not 101"),
        // A TLS alert: what a TLS port answers a plain upgrade with.
        (b"\x15\x03\x03\x00\x02\x02\x32", "use a wss:// URL"),
        (b"HTTP/1.1 403 Forbidden\r\n\r\n", "403"),
        (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n",
            "is not",
        ),
        (
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n",
            "Upgrade: websocket",
        ),
    ];
    for (answer, says) in cases {
        let mut s = session();
        let failure = s.received(answer, &mut Vec::new()).unwrap_err();
        assert_eq!(failure.kind, ErrorKind::WsUpgradeRefused);
        assert!(failure.reason.contains(says), "{}", failure.reason);
    }
    let mut garbage = session();
    let failure = garbage
        .received(b"SSH-2.0-x\r\n\r\n", &mut Vec::new())
        .unwrap_err();
    assert_eq!(failure.kind, ErrorKind::WsUpgradeRefused);
}

#[test]
fn replies_match_the_oldest_unanswered_message_in_frames_split_at_every_offset() {
    let t0 = Instant::now();
    let t1 = t0 + std::time::Duration::from_millis(1);
    let mut wire = Vec::new();
    encode_message(&mut wire, MessageKind::Text, b"one", None);
    encode_frame(&mut wire, false, Opcode::Text, b"tw", None);
    encode_control(&mut wire, Opcode::Ping, b"p", None).unwrap();
    encode_frame(&mut wire, true, Opcode::Continuation, b"o", None);
    encode_message(&mut wire, MessageKind::Binary, &[0u8; 200], None);
    for cut in 0..=wire.len() {
        let mut s = open();
        s.send_message(b"hi", t0);
        s.send_message(b"hi", t1);
        assert_eq!(s.unanswered(), 2);
        let mut events = Vec::new();
        s.received(&wire[..cut], &mut events).unwrap();
        s.received(&wire[cut..], &mut events).unwrap();
        assert_eq!(
            events,
            [
                WsEvent::Reply { intended: t0 },
                WsEvent::PingAnswered,
                WsEvent::Reply { intended: t1 },
                WsEvent::Unsolicited,
            ],
            "cut at {cut}"
        );
        assert_eq!(s.bytes_received, wire.len() as u64);
        assert_eq!(s.unanswered(), 0);
        assert_eq!(server_reads(s.outbox()), ["text hi", "text hi", "pong p"]);
    }
}

#[test]
fn a_ping_is_answered_with_a_masked_pong_of_its_payload() {
    let mut s = open();
    let mut wire = Vec::new();
    encode_control(&mut wire, Opcode::Ping, b"are you there", None).unwrap();
    let mut events = Vec::new();
    s.received(&wire, &mut events).unwrap();
    assert_eq!(events, [WsEvent::PingAnswered]);
    // Masked: the mask bit of the second byte.
    assert_eq!(s.outbox()[1] & 0x80, 0x80);
    assert_eq!(server_reads(s.outbox()), ["pong are you there"]);
    assert_eq!(s.bytes_sent, s.outbox().len() as u64);
}

#[test]
fn the_servers_close_is_echoed_and_the_clients_close_awaits_the_servers() {
    let mut s = open();
    s.send_message(b"hi", Instant::now());
    s.written();
    let mut wire = Vec::new();
    encode_close(&mut wire, Some(1001), "going away", None).unwrap();
    let mut events = Vec::new();
    s.received(&wire, &mut events).unwrap();
    assert_eq!(events, [WsEvent::Closed { code: Some(1001) }]);
    assert!(s.is_closed());
    assert_eq!(server_reads(s.outbox()), ["close 1001"]);
    assert_eq!(s.take_unanswered().len(), 1);

    let mut c = open();
    c.close(1000);
    assert!(!c.is_open() && !c.is_closed());
    assert_eq!(server_reads(c.outbox()), ["close 1000"]);
    c.written();
    let mut wire = Vec::new();
    encode_close(&mut wire, None, "", None).unwrap();
    let mut events = Vec::new();
    c.received(&wire, &mut events).unwrap();
    assert_eq!(events, [WsEvent::Closed { code: None }]);
    assert!(c.is_closed());
    assert!(
        c.outbox().is_empty(),
        "a close answered is not answered again"
    );
}

#[test]
fn the_clients_close_gives_up_its_unanswered_messages_and_reads_their_replies_as_nothing() {
    let mut c = open();
    c.send_message(b"one", Instant::now());
    c.send_message(b"two", Instant::now());
    c.written();
    c.close(1000);
    assert!(c.is_closing());
    assert_eq!(
        c.unanswered(),
        0,
        "given up: the driver leaves them unfinished"
    );
    let mut wire = Vec::new();
    encode_message(&mut wire, MessageKind::Text, b"one", None);
    encode_message(&mut wire, MessageKind::Text, b"two", None);
    encode_message(&mut wire, MessageKind::Text, b"pushed", None);
    encode_close(&mut wire, Some(1000), "", None).unwrap();
    let mut events = Vec::new();
    c.received(&wire, &mut events).unwrap();
    assert_eq!(
        events,
        [WsEvent::Unsolicited, WsEvent::Closed { code: Some(1000) }],
        "the two replies are nothing, a third message is a push"
    );
    assert!(c.is_closed());
    assert_eq!(c.bytes_received, wire.len() as u64);
}

#[test]
fn a_close_with_a_reason_keeps_it_within_a_control_frame() {
    let mut c = open();
    c.close_with(1008, "no reply within --timeout");
    let mut buf = c.outbox().to_vec();
    let mut server = Decoder::new(Role::Server, 1 << 20);
    let decoded = server.decode(&mut buf).unwrap();
    let Some(Event::Close(Some(frame))) = decoded.event else {
        panic!("a close");
    };
    assert_eq!(
        (frame.code, frame.reason),
        (1008, "no reply within --timeout")
    );
    assert!(c.is_closing());

    // A reason over 123 bytes is cut at a character's boundary (§5.5).
    let mut long = open();
    long.close_with(1008, &"é".repeat(100));
    let mut buf = long.outbox().to_vec();
    let mut server = Decoder::new(Role::Server, 1 << 20);
    let decoded = server.decode(&mut buf).unwrap();
    let Some(Event::Close(Some(frame))) = decoded.event else {
        panic!("a close");
    };
    assert_eq!(frame.reason, "é".repeat(61));
}

#[test]
fn a_bad_frame_fails_the_connection_with_its_close_code() {
    let mut s = open();
    let mut wire = Vec::new();
    encode_message(&mut wire, MessageKind::Text, b"masked", Some([1, 2, 3, 4]));
    let failure = s.received(&wire, &mut Vec::new()).unwrap_err();
    assert_eq!(failure.kind, ErrorKind::WsProtocol);
    assert!(failure.reason.contains("masked"), "{}", failure.reason);
    assert_eq!(server_reads(s.outbox()), ["close 1002"]);
    assert!(s.is_closed());

    let mut utf8 = open();
    let mut wire = Vec::new();
    encode_frame(&mut wire, true, Opcode::Text, b"\xff\xfe", None);
    let failure = utf8.received(&wire, &mut Vec::new()).unwrap_err();
    assert_eq!(failure.kind, ErrorKind::WsProtocol);
    assert_eq!(server_reads(utf8.outbox()), ["close 1007"]);
}

/// A session offering `subprotocols` (and deflate when `deflate`), whose
/// upgrade was answered with `extra` header lines; the result of reading it.
fn answered_with(
    subprotocols: &[&str],
    deflate: bool,
    extra: &str,
) -> (WsSession, Result<(), WsFailure>) {
    let spec = WebSocketSpec {
        subprotocols: subprotocols.iter().map(|s| s.to_string()).collect(),
        deflate,
        ..WebSocketSpec::default()
    };
    let config = WsConfig::new("/", "127.0.0.1:3000", &[], &spec);
    let mut s = WsSession::new(&config, fastrand::Rng::with_seed(3));
    let key = key_of(s.outbox());
    let mut answer = accepted(&key);
    answer.truncate(answer.len() - 2);
    answer.extend_from_slice(extra.as_bytes());
    answer.extend_from_slice(b"\r\n");
    s.written();
    let result = s.received(&answer, &mut Vec::new());
    (s, result)
}

#[test]
fn subprotocols_are_offered_and_the_servers_choice_must_be_one_of_them() {
    let spec = WebSocketSpec {
        subprotocols: vec!["chat.v2".into(), "chat".into()],
        deflate: true,
        ..WebSocketSpec::default()
    };
    let config = WsConfig::new(
        "/",
        "h",
        &[parse_header("Sec-WebSocket-Protocol: x").unwrap()],
        &spec,
    );
    let text = String::from_utf8(
        WsSession::new(&config, fastrand::Rng::with_seed(1))
            .outbox()
            .to_vec(),
    )
    .unwrap();
    assert!(
        text.contains("\r\nSec-WebSocket-Protocol: chat.v2, chat\r\n"),
        "{text}"
    );
    assert!(
        text.contains("\r\nSec-WebSocket-Extensions: permessage-deflate\r\n"),
        "{text}"
    );
    assert_eq!(
        text.matches("Sec-WebSocket-Protocol").count(),
        1,
        "ours, not the user's: {text}"
    );

    let (s, ok) = answered_with(
        &["chat.v2", "chat"],
        false,
        "Sec-WebSocket-Protocol: chat\r\n",
    );
    ok.unwrap();
    assert_eq!(s.subprotocol(), Some("chat"));
    let (s, ok) = answered_with(&["chat"], false, "");
    ok.unwrap();
    assert_eq!(s.subprotocol(), None, "a server may choose none");
    for (offered, extra, says) in [
        (
            &["chat"][..],
            "Sec-WebSocket-Protocol: evil\r\n",
            "\"evil\", which was not offered (chat)",
        ),
        (
            &[],
            "Sec-WebSocket-Protocol: chat\r\n",
            "not offered (none was)",
        ),
        (
            &["a", "b"],
            "Sec-WebSocket-Protocol: a\r\nSec-WebSocket-Protocol: b\r\n",
            "not offered",
        ),
    ] {
        let failure = answered_with(offered, false, extra).1.unwrap_err();
        assert_eq!(failure.kind, ErrorKind::WsUpgradeRefused, "{extra}");
        assert!(failure.reason.contains(says), "{extra}: {}", failure.reason);
    }
}

#[test]
fn deflate_agreed_compresses_out_and_inflates_in_refused_runs_plain() {
    let (mut s, ok) = answered_with(
        &[],
        true,
        "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=12\r\n",
    );
    ok.unwrap();
    assert_eq!(s.deflate(), Deflate::Agreed);
    let text = "compress me ".repeat(20);
    s.send_message(text.as_bytes(), Instant::now());
    // RSV1 set, and far shorter than the text.
    assert_eq!(s.outbox()[0], 0xc1);
    assert!(s.outbox().len() < text.len() / 4, "{}", s.outbox().len());
    let mut server = Decoder::new(Role::Server, 1 << 20);
    server.inflate_with(MessageInflater::new(false));
    let mut out = s.outbox().to_vec();
    assert_eq!(
        server.decode(&mut out).unwrap().event,
        Some(Event::Text(&text[..]))
    );
    s.written();
    // The RFC 7692 §7.2.3.1 "Hello", from the server.
    let mut events = Vec::new();
    s.received(
        &[0xc1, 0x07, 0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00],
        &mut events,
    )
    .unwrap();
    assert!(matches!(events[..], [WsEvent::Reply { .. }]), "{events:?}");

    let (mut plain, ok) = answered_with(&[], true, "");
    ok.unwrap();
    assert_eq!(plain.deflate(), Deflate::Refused);
    plain.send_message(b"hi", Instant::now());
    assert_eq!(plain.outbox()[0], 0x81, "no RSV1 when refused");
    let (_, off) = answered_with(&[], false, "");
    off.unwrap();
    let failure = answered_with(
        &[],
        true,
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=10\r\n",
    )
    .1
    .unwrap_err();
    assert_eq!(failure.kind, ErrorKind::WsUpgradeRefused);
    // RSV1 with no deflate agreed: a protocol error, the connection failed.
    let (mut unasked, ok) = answered_with(&[], false, "");
    ok.unwrap();
    let failure = unasked
        .received(&[0xc1, 0x01, 0x00], &mut Vec::new())
        .unwrap_err();
    assert_eq!(failure.kind, ErrorKind::WsProtocol);
    assert_eq!(server_reads(unasked.outbox()), ["close 1002"]);
}

/// A session upgraded with `--ws-match-id json($.id)`, its replies kept
/// (a workload judges them) and the 101's cookies collected.
fn open_matching_by_id() -> WsSession {
    let spec = WebSocketSpec {
        match_id: Some("json($.id)".into()),
        ..WebSocketSpec::default()
    };
    let config = WsConfig::new("/", "127.0.0.1:3000", &[], &spec);
    let mut s = WsSession::new(&config, fastrand::Rng::with_seed(5));
    s.keep_replies();
    s.collect_cookies();
    let mut answer = accepted(&key_of(s.outbox()));
    let blank = answer.len() - 2;
    answer.splice(
        blank..blank,
        b"Set-Cookie: sid=s1; Path=/\r\n".iter().copied(),
    );
    s.written();
    let mut events = Vec::new();
    s.received(&answer, &mut events).unwrap();
    assert_eq!(events, [WsEvent::Upgraded]);
    assert_eq!(s.take_set_cookies(), [b"sid=s1; Path=/".to_vec()]);
    s
}

#[test]
fn replies_are_paired_by_id_past_pushes_and_out_of_order() {
    let t0 = Instant::now();
    let t1 = t0 + std::time::Duration::from_millis(1);
    let mut wire = Vec::new();
    encode_message(&mut wire, MessageKind::Text, br#"{"note":"pushed"}"#, None);
    encode_message(&mut wire, MessageKind::Text, br#"{"id":"b","n":2}"#, None);
    encode_message(&mut wire, MessageKind::Text, br#"{"id":"zz"}"#, None);
    encode_message(&mut wire, MessageKind::Text, br#"{"id":"a","n":1}"#, None);
    for cut in 0..=wire.len() {
        let mut s = open_matching_by_id();
        assert!(s.send_message(br#"{"id":"a"}"#, t0));
        assert!(s.send_message(br#"{"id":"b"}"#, t1));
        // A message with no id is not framed: it could never be paired.
        assert!(!s.send_message(b"no id here", t1));
        let mut events = Vec::new();
        s.received(&wire[..cut], &mut events).unwrap();
        let first = events
            .iter()
            .filter(|e| matches!(e, WsEvent::Reply { .. }))
            .count();
        let early: Vec<Vec<u8>> = (0..first).map(|n| s.reply(n).to_vec()).collect();
        s.received(&wire[cut..], &mut events).unwrap();
        assert_eq!(
            events,
            [
                WsEvent::Unsolicited,
                WsEvent::Reply { intended: t1 },
                WsEvent::Unsolicited,
                WsEvent::Reply { intended: t0 },
            ],
            "cut at {cut}"
        );
        // Each reply's payload, in the order of its read's Reply events.
        let late = events
            .iter()
            .filter(|e| matches!(e, WsEvent::Reply { .. }))
            .count()
            - first;
        let mut payloads = early;
        payloads.extend((0..late).map(|n| s.reply(n).to_vec()));
        assert_eq!(
            payloads,
            [
                br#"{"id":"b","n":2}"#.to_vec(),
                br#"{"id":"a","n":1}"#.to_vec()
            ],
            "cut at {cut}"
        );
        assert_eq!(s.unanswered(), 0);
        assert_eq!(
            server_reads(s.outbox()),
            [r#"text {"id":"a"}"#, r#"text {"id":"b"}"#]
        );
    }
}

#[test]
fn a_reply_to_a_message_the_close_gave_up_is_no_event_when_paired_by_id() {
    let mut s = open_matching_by_id();
    s.send_message(br#"{"id":"a"}"#, Instant::now());
    s.close(1000);
    let mut wire = Vec::new();
    encode_message(&mut wire, MessageKind::Text, br#"{"id":"a"}"#, None);
    encode_message(&mut wire, MessageKind::Text, br#"{"id":"x"}"#, None);
    let mut events = Vec::new();
    s.received(&wire, &mut events).unwrap();
    assert_eq!(events, [WsEvent::Unsolicited]);
}
