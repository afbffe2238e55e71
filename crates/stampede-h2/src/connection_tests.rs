//! The connection against hand-built server byte streams: every split of a
//! valid stream, flow control both ways (with WINDOW_UPDATEs counted),
//! GOAWAY, SETTINGS_MAX_CONCURRENT_STREAMS, trailers, padding, CONTINUATION,
//! one case per protocol error, and 20,000 seeded mutations of valid bytes.

use bytes::Bytes;

use crate::frame::{self, setting, Head};
use crate::{Config, Connection, End, ErrorCode, Event, RequestBlock, StartError};

/// Server frames written by hand.
#[derive(Default)]
struct Server {
    out: Vec<u8>,
}

impl Server {
    fn frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> &mut Self {
        frame::write_head(&mut self.out, payload.len(), kind, flags, stream);
        self.out.extend_from_slice(payload);
        self
    }
    fn settings(&mut self, params: &[(u16, u32)]) -> &mut Self {
        frame::write_settings(&mut self.out, params);
        self
    }
    fn headers(&mut self, stream: u32, block: &[u8], end_stream: bool) -> &mut Self {
        let flags = frame::END_HEADERS | if end_stream { frame::END_STREAM } else { 0 };
        self.frame(frame::HEADERS, flags, stream, block)
    }
    fn data(&mut self, stream: u32, data: &[u8], end_stream: bool) -> &mut Self {
        self.frame(
            frame::DATA,
            if end_stream { frame::END_STREAM } else { 0 },
            stream,
            data,
        )
    }
    fn window_update(&mut self, stream: u32, increment: u32) -> &mut Self {
        frame::write_window_update(&mut self.out, stream, increment);
        self
    }
    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}

fn int(out: &mut Vec<u8>, high: u8, prefix: u8, mut v: usize) {
    let max = (1usize << prefix) - 1;
    if v < max {
        out.push(high | v as u8);
        return;
    }
    out.push(high | max as u8);
    v -= max;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A literal field with a static name index; `indexing` adds it to the table.
fn lit(block: &mut Vec<u8>, name_index: usize, value: &str, indexing: bool) {
    if indexing {
        int(block, 0x40, 6, name_index);
    } else {
        int(block, 0x00, 4, name_index);
    }
    int(block, 0, 7, value.len());
    block.extend_from_slice(value.as_bytes());
}

/// `:status 200` with a content-length (static name 28).
fn ok_with_length(n: usize) -> Vec<u8> {
    let mut b = vec![0x88];
    lit(&mut b, 28, &n.to_string(), false);
    b
}

fn get() -> RequestBlock {
    RequestBlock::new("GET", "http", "test", "/", &[]).unwrap()
}

fn post() -> RequestBlock {
    RequestBlock::new("POST", "http", "test", "/upload", &[]).unwrap()
}

fn config() -> Config {
    Config {
        capture: vec![b"server".to_vec(), b"grpc-status".to_vec()],
        ..Config::default()
    }
}

/// Events written out, for comparing runs.
fn describe(e: &Event<'_>) -> String {
    match e {
        Event::SettingsAcked => "acked".into(),
        Event::Response { stream, head } => format!(
            "response {stream} {} {:?} server={:?}",
            head.status,
            head.content_length,
            head.field(0)
                .map(|v| String::from_utf8_lossy(v).into_owned())
        ),
        Event::Data { stream, data } => format!("data {stream} {}", String::from_utf8_lossy(data)),
        Event::Trailers { stream, fields } => {
            format!(
                "trailers {stream} {:?}",
                fields
                    .get(1)
                    .map(|v| String::from_utf8_lossy(v).into_owned())
            )
        }
        Event::Ended { stream, end } => format!("ended {stream} {end:?}"),
        Event::GoAway {
            last_stream_id,
            code,
        } => format!("goaway {last_stream_id} {code:?}"),
    }
}

/// The frames of client output (the preface skipped).
fn client_frames(mut out: &[u8]) -> Vec<(Head, Vec<u8>)> {
    if out.starts_with(frame::PREFACE) {
        out = &out[frame::PREFACE.len()..];
    }
    let mut frames = Vec::new();
    while out.len() >= frame::HEADER_LEN {
        let head = Head::parse(out);
        frames.push((
            head,
            out[frame::HEADER_LEN..frame::HEADER_LEN + head.len].to_vec(),
        ));
        out = &out[frame::HEADER_LEN + head.len..];
    }
    assert!(out.is_empty(), "client output ends inside a frame");
    frames
}

fn drain(conn: &mut Connection) -> Vec<(Head, Vec<u8>)> {
    let frames = client_frames(conn.output());
    let n = conn.output().len();
    conn.consume_output(n);
    frames
}

/// A server's answer to three GETs (streams 1, 3, 5) using most frame
/// kinds: SETTINGS, ACK, PING, PRIORITY, an unknown type, padded HEADERS and
/// DATA, a header block in CONTINUATIONs, an HPACK entry reused, trailers.
fn three_answers() -> Vec<u8> {
    let mut s = Server::default();
    s.settings(&[
        (setting::MAX_CONCURRENT_STREAMS, 100),
        (setting::MAX_FRAME_SIZE, 16_384),
    ])
    .frame(frame::SETTINGS, frame::ACK, 0, &[])
    .frame(frame::PING, 0, 0, b"pingpong")
    .frame(frame::PRIORITY, 0, 1, &[0, 0, 0, 3, 16])
    .frame(0x42, 0x7, 1, b"unknown frame type");
    // Stream 1: `server: stampede` added to the table, body "hello".
    let mut b = ok_with_length(5);
    lit(&mut b, 54, "stampede", true);
    s.headers(1, &b, false).data(1, b"hello", true);
    // Stream 3: padded and prioritised HEADERS reusing that entry (index 62),
    // padded DATA, trailers with grpc-status.
    let mut padded = vec![3, 0, 0, 0, 0, 7];
    padded.extend_from_slice(&[0x88, 0xbe]);
    padded.extend_from_slice(&[0, 0, 0]);
    s.frame(
        frame::HEADERS,
        frame::END_HEADERS | frame::PADDED | frame::PRIORITY_FLAG,
        3,
        &padded,
    );
    s.frame(frame::DATA, frame::PADDED, 3, &[4, b'a', b'b', 0, 0, 0, 0]);
    let mut trailers = Vec::new();
    trailers.push(0x00);
    int(&mut trailers, 0, 7, 11);
    trailers.extend_from_slice(b"grpc-status");
    int(&mut trailers, 0, 7, 1);
    trailers.push(b'0');
    s.headers(3, &trailers, true);
    // Stream 5: a 404 whose block comes in HEADERS + two CONTINUATIONs.
    let mut b = vec![0x8d, 0xbe];
    lit(&mut b, 28, "0", false);
    s.frame(frame::HEADERS, frame::END_STREAM, 5, &b[..1]);
    s.frame(frame::CONTINUATION, 0, 5, &b[1..2]);
    s.frame(frame::CONTINUATION, frame::END_HEADERS, 5, &b[2..]);
    s.take()
}

fn run(conn: &mut Connection, chunks: &[&[u8]]) -> Vec<String> {
    let mut log = Vec::new();
    for chunk in chunks {
        conn.receive(chunk, &mut |e| log.push(describe(&e)))
            .unwrap();
    }
    log
}

fn three_gets() -> Connection {
    let mut conn = Connection::new(config());
    for want in [1, 3, 5] {
        assert_eq!(conn.start(&get(), None), Ok(want));
    }
    conn
}

#[test]
fn answers_read_the_same_split_at_every_offset() {
    let bytes = three_answers();
    let mut whole = three_gets();
    let expected = run(&mut whole, &[&bytes]);
    assert_eq!(
        expected,
        [
            "acked",
            "response 1 200 Some(5) server=Some(\"stampede\")",
            "data 1 hello",
            "ended 1 Finished",
            "response 3 200 None server=Some(\"stampede\")",
            "data 3 ab",
            "trailers 3 Some(\"0\")",
            "ended 3 Finished",
            "response 5 404 Some(0) server=Some(\"stampede\")",
            "ended 5 Finished",
        ]
    );
    let whole_out = whole.output().to_vec();
    for cut in 0..=bytes.len() {
        let mut conn = three_gets();
        assert_eq!(
            run(&mut conn, &[&bytes[..cut], &bytes[cut..]]),
            expected,
            "split at {cut}"
        );
        assert_eq!(
            conn.output(),
            &whole_out[..],
            "output after a split at {cut}"
        );
    }
    let mut conn = three_gets();
    let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(run(&mut conn, &bytewise), expected);
}

#[test]
fn settings_and_pings_are_acknowledged() {
    let mut conn = three_gets();
    run(&mut conn, &[&three_answers()]);
    let frames = drain(&mut conn);
    let settings = frames
        .iter()
        .find(|(h, _)| h.kind == frame::SETTINGS && h.flags & frame::ACK == 0)
        .unwrap();
    // ENABLE_PUSH 0, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE.
    assert_eq!(settings.1.len(), 18);
    assert!(frames
        .iter()
        .any(|(h, p)| h.kind == frame::SETTINGS && h.flags == frame::ACK && p.is_empty()));
    assert!(frames
        .iter()
        .any(|(h, p)| h.kind == frame::PING && h.flags == frame::ACK && p == b"pingpong"));
    let headers: Vec<u32> = frames
        .iter()
        .filter(|(h, _)| h.kind == frame::HEADERS)
        .map(|(h, _)| h.stream)
        .collect();
    assert_eq!(headers, [1, 3, 5]);
    // No RST_STREAM: every stream ended cleanly.
    assert!(!frames.iter().any(|(h, _)| h.kind == frame::RST_STREAM));
}

/// Client and server exchange bytes until neither has more to say; the
/// server honours the client's windows and sends `body` on stream 1 in
/// `frame_len` frames. Returns the client's frames seen by the server.
fn download(
    conn: &mut Connection,
    body_len: usize,
    frame_len: usize,
) -> (Vec<(Head, Vec<u8>)>, usize, usize) {
    let mut seen = drain(conn);
    let mut stream_window: i64 = 65_535;
    let mut conn_window: i64 = 65_535;
    for (h, p) in &seen {
        if h.kind == frame::SETTINGS {
            for param in p.chunks(6) {
                if u16::from_be_bytes([param[0], param[1]]) == setting::INITIAL_WINDOW_SIZE {
                    stream_window =
                        i64::from(u32::from_be_bytes([param[2], param[3], param[4], param[5]]));
                }
            }
        }
    }
    let mut s = Server::default();
    s.settings(&[]).headers(1, &ok_with_length(body_len), false);
    let mut sent = 0;
    let mut received = 0;
    let mut data_frames = 0;
    let mut rounds = 0;
    while sent < body_len {
        rounds += 1;
        assert!(rounds < 100_000, "the download does not progress");
        while sent < body_len && stream_window > 0 && conn_window > 0 {
            let n = frame_len
                .min(body_len - sent)
                .min(stream_window as usize)
                .min(conn_window as usize);
            s.data(1, &vec![b'x'; n], sent + n == body_len);
            data_frames += 1;
            sent += n;
            stream_window -= n as i64;
            conn_window -= n as i64;
        }
        let bytes = s.take();
        conn.receive(&bytes, &mut |e| {
            if let Event::Data { data, .. } = e {
                received += data.len();
            }
        })
        .unwrap();
        let frames = drain(conn);
        for (h, p) in &frames {
            if h.kind == frame::WINDOW_UPDATE {
                let inc = i64::from(u32::from_be_bytes([p[0], p[1], p[2], p[3]]));
                if h.stream == 0 {
                    conn_window += inc;
                } else {
                    stream_window += inc;
                }
            }
        }
        seen.extend(frames);
    }
    (seen, received, data_frames)
}

#[test]
fn a_1_mib_response_over_64_kib_windows_completes_with_batched_window_updates() {
    let mut conn = Connection::new(Config {
        stream_window: 65_535,
        connection_window: 65_535,
        ..config()
    });
    conn.start(&get(), None).unwrap();
    let (frames, received, data_frames) = download(&mut conn, 1 << 20, 8_192);
    assert_eq!(received, 1 << 20);
    let updates = |stream: u32| {
        frames
            .iter()
            .filter(|(h, _)| h.kind == frame::WINDOW_UPDATE && h.stream == stream)
            .count()
    };
    // At least 128 DATA frames of up to 8 KiB; one update per half window
    // (32 KiB, about 4 frames) per window: 1 MiB / 32 KiB = 32 at most each.
    assert!(data_frames >= 128, "{data_frames} DATA frames");
    for stream in [0, 1] {
        assert!(
            (30..=32).contains(&updates(stream)),
            "{} updates of window {stream}",
            updates(stream)
        );
        assert!(updates(stream) * 4 <= data_frames);
    }
    assert_eq!(conn.open_streams(), 0);
}

#[test]
fn a_1_mib_request_body_waits_for_the_servers_windows() {
    let mut conn = Connection::new(config());
    let body = Bytes::from(vec![b'b'; 1 << 20]);
    let id = conn.start(&post(), Some(body)).unwrap();
    let mut s = Server::default();
    let mut got = 0usize;
    let mut data_frames = 0;
    let mut ended = false;
    let mut input = s.settings(&[]).take();
    for _round in 0..1_000 {
        let mut log = Vec::new();
        conn.receive(&input, &mut |e| log.push(describe(&e)))
            .unwrap();
        ended |= log.iter().any(|l| l == "ended 1 Finished");
        let mut batch = 0;
        for (h, p) in drain(&mut conn) {
            if h.kind == frame::DATA {
                assert!(
                    p.len() <= 16_384,
                    "a DATA frame above the default frame size"
                );
                got += p.len();
                batch += p.len();
                data_frames += 1;
                if h.flags & frame::END_STREAM != 0 {
                    assert_eq!(got, 1 << 20);
                    s.headers(id, &ok_with_length(0), true);
                }
            }
        }
        // Never more than the default windows allowed before this round's update.
        assert!(batch <= 65_535, "sent {batch} octets within one window");
        if batch > 0 {
            s.window_update(0, batch as u32)
                .window_update(id, batch as u32);
        }
        input = s.take();
        if ended {
            break;
        }
    }
    assert!(ended, "the upload did not finish");
    assert_eq!(got, 1 << 20);
    assert!(data_frames >= 64);
}

#[test]
fn a_larger_initial_window_applies_to_open_streams() {
    let mut conn = Connection::new(config());
    conn.start(&post(), Some(Bytes::from(vec![0u8; 100_000])))
        .unwrap();
    let sent = |frames: &[(Head, Vec<u8>)]| {
        frames
            .iter()
            .filter(|(h, _)| h.kind == frame::DATA)
            .map(|(_, p)| p.len())
            .sum::<usize>()
    };
    assert_eq!(sent(&drain(&mut conn)), 65_535);
    let mut s = Server::default();
    // The stream window grows by 34,465; the connection gets room to spare.
    let bytes = s
        .settings(&[(setting::INITIAL_WINDOW_SIZE, 100_000)])
        .window_update(0, 1 << 20)
        .take();
    conn.receive(&bytes, &mut |_| {}).unwrap();
    assert_eq!(sent(&drain(&mut conn)), 100_000 - 65_535);
    // A smaller one makes the window negative: nothing more is sent.
    let mut conn = Connection::new(config());
    conn.start(&post(), Some(Bytes::from(vec![0u8; 100_000])))
        .unwrap();
    drain(&mut conn);
    let bytes = s
        .settings(&[(setting::INITIAL_WINDOW_SIZE, 1_000)])
        .window_update(1, 60_000)
        .window_update(0, 1 << 20)
        .take();
    conn.receive(&bytes, &mut |_| {}).unwrap();
    assert_eq!(
        sent(&drain(&mut conn)),
        0,
        "65,535 - 64,535 + 60,000 is still below zero"
    );
}

#[test]
fn goaway_reports_streams_above_its_last_id_unprocessed() {
    let mut conn = Connection::new(config());
    for _ in 0..5 {
        conn.start(&get(), None).unwrap();
    }
    let mut s = Server::default();
    s.settings(&[]).headers(1, &ok_with_length(0), true);
    let mut goaway = 5u32.to_be_bytes().to_vec();
    goaway.extend_from_slice(&0u32.to_be_bytes());
    goaway.extend_from_slice(b"debug data");
    s.frame(frame::GOAWAY, 0, 0, &goaway)
        .headers(3, &ok_with_length(0), true)
        .headers(5, &ok_with_length(0), true);
    let log = run(&mut conn, &[&s.take()]);
    assert_eq!(
        log,
        [
            "response 1 200 Some(0) server=None",
            "ended 1 Finished",
            "ended 7 Unprocessed",
            "ended 9 Unprocessed",
            "goaway 5 NoError",
            "response 3 200 Some(0) server=None",
            "ended 3 Finished",
            "response 5 200 Some(0) server=None",
            "ended 5 Finished",
        ]
    );
    assert_eq!(conn.goaway(), Some(5));
    assert!(!conn.can_start());
    assert_eq!(conn.start(&get(), None), Err(StartError::GoingAway));
    // REFUSED_STREAM before a response is unprocessed too.
    let mut conn = Connection::new(config());
    conn.start(&get(), None).unwrap();
    let bytes = Server::default()
        .settings(&[])
        .frame(frame::RST_STREAM, 0, 1, &7u32.to_be_bytes())
        .take();
    assert_eq!(run(&mut conn, &[&bytes]), ["ended 1 Unprocessed"]);
}

#[test]
fn max_concurrent_streams_from_settings_is_honoured() {
    let mut conn = Connection::new(Config {
        streams_before_settings: 1,
        ..config()
    });
    assert_eq!(conn.start(&get(), None), Ok(1));
    assert_eq!(
        conn.start(&get(), None),
        Err(StartError::Busy),
        "one stream until the server's SETTINGS"
    );
    let bytes = Server::default()
        .settings(&[])
        .headers(1, &ok_with_length(0), true)
        .take();
    run(&mut conn, &[&bytes]);
    assert!(conn.can_start());
    let mut conn = Connection::new(config());
    let bytes = Server::default()
        .settings(&[(setting::MAX_CONCURRENT_STREAMS, 2)])
        .take();
    run(&mut conn, &[&bytes]);
    assert_eq!(conn.max_concurrent_streams(), 2);
    assert_eq!(conn.start(&get(), None), Ok(1));
    assert_eq!(conn.start(&get(), None), Ok(3));
    assert!(!conn.can_start());
    assert_eq!(conn.start(&get(), None), Err(StartError::Busy));
    let bytes = Server::default()
        .headers(1, &ok_with_length(0), true)
        .take();
    run(&mut conn, &[&bytes]);
    assert!(conn.can_start());
    assert_eq!(conn.start(&get(), None), Ok(5));
    assert_eq!(conn.start(&get(), None), Err(StartError::Busy));
    // Only two HEADERS were on the wire at once: streams 1, 3, then 5.
    let headers = drain(&mut conn)
        .iter()
        .filter(|(h, _)| h.kind == frame::HEADERS)
        .count();
    assert_eq!(headers, 3);
}

#[test]
fn a_request_block_larger_than_a_frame_goes_out_in_continuations() {
    let big = "v".repeat(40_000);
    let block = RequestBlock::new("GET", "http", "test", "/", &[("x-big", &big)]).unwrap();
    let mut conn = Connection::new(config());
    conn.start(&block, None).unwrap();
    let frames = drain(&mut conn);
    let kinds: Vec<(u8, u8)> = frames
        .iter()
        .filter(|(h, _)| h.stream == 1)
        .map(|(h, _)| (h.kind, h.flags))
        .collect();
    assert_eq!(
        kinds,
        [
            (frame::HEADERS, frame::END_STREAM),
            (frame::CONTINUATION, 0),
            (frame::CONTINUATION, frame::END_HEADERS)
        ]
    );
    let joined: Vec<u8> = frames
        .iter()
        .filter(|(h, _)| h.stream == 1)
        .flat_map(|(_, p)| p.clone())
        .collect();
    assert_eq!(joined, block.as_bytes());
}

#[test]
fn a_smaller_header_table_is_signalled_at_the_next_block() {
    let mut conn = Connection::new(config());
    run(
        &mut conn,
        &[&Server::default()
            .settings(&[(setting::HEADER_TABLE_SIZE, 0)])
            .take()],
    );
    drain(&mut conn);
    conn.start(&get(), None).unwrap();
    conn.start(&get(), None).unwrap();
    let blocks: Vec<Vec<u8>> = drain(&mut conn)
        .into_iter()
        .filter(|(h, _)| h.kind == frame::HEADERS)
        .map(|(_, p)| p)
        .collect();
    assert_eq!(blocks[0][0], 0x20, "a size update to 0 first");
    assert_eq!(&blocks[0][1..], get().as_bytes());
    assert_eq!(blocks[1], get().as_bytes(), "once");
}

/// One protocol violation per case, and the code the connection ends with.
#[test]
fn every_protocol_violation_ends_the_connection_with_its_code() {
    let with = |f: &dyn Fn(&mut Server)| {
        let mut s = Server::default();
        s.settings(&[]);
        f(&mut s);
        s.take()
    };
    use ErrorCode::*;
    let cases: Vec<(&str, Vec<u8>, ErrorCode)> = vec![
        (
            "preface is not SETTINGS",
            Server::default().frame(frame::PING, 0, 0, &[0; 8]).take(),
            ProtocolError,
        ),
        (
            "SETTINGS on a stream",
            Server::default().frame(frame::SETTINGS, 0, 1, &[]).take(),
            ProtocolError,
        ),
        (
            "SETTINGS of 5 octets",
            Server::default()
                .frame(frame::SETTINGS, 0, 0, &[0; 5])
                .take(),
            FrameSizeError,
        ),
        (
            "SETTINGS ACK with payload",
            with(&|s| {
                s.frame(frame::SETTINGS, frame::ACK, 0, &[0; 6]);
            }),
            FrameSizeError,
        ),
        (
            "ENABLE_PUSH 1",
            Server::default()
                .settings(&[(setting::ENABLE_PUSH, 1)])
                .take(),
            ProtocolError,
        ),
        (
            "INITIAL_WINDOW_SIZE 2^31",
            Server::default()
                .settings(&[(setting::INITIAL_WINDOW_SIZE, 1 << 31)])
                .take(),
            FlowControlError,
        ),
        (
            "MAX_FRAME_SIZE too small",
            Server::default()
                .settings(&[(setting::MAX_FRAME_SIZE, 100)])
                .take(),
            ProtocolError,
        ),
        (
            "frame above our max size",
            with(&|s| {
                s.data(1, &vec![0; (1 << 17) + 1], false);
            }),
            FrameSizeError,
        ),
        (
            "HEADERS on stream 0",
            with(&|s| {
                s.headers(0, &[0x88], true);
            }),
            ProtocolError,
        ),
        (
            "HEADERS on an idle stream",
            with(&|s| {
                s.headers(7, &[0x88], true);
            }),
            ProtocolError,
        ),
        (
            "HEADERS on an even stream",
            with(&|s| {
                s.headers(2, &[0x88], true);
            }),
            ProtocolError,
        ),
        (
            "HPACK index 0",
            with(&|s| {
                s.headers(1, &[0x80], true);
            }),
            CompressionError,
        ),
        (
            "HPACK index past the table",
            with(&|s| {
                s.headers(1, &[0xff, 0x10], true);
            }),
            CompressionError,
        ),
        (
            "padding longer than the frame",
            with(&|s| {
                s.frame(
                    frame::HEADERS,
                    frame::END_HEADERS | frame::PADDED,
                    1,
                    &[9, 0x88],
                );
            }),
            ProtocolError,
        ),
        (
            "CONTINUATION without HEADERS",
            with(&|s| {
                s.frame(frame::CONTINUATION, frame::END_HEADERS, 1, &[0x88]);
            }),
            ProtocolError,
        ),
        (
            "another frame inside a header block",
            with(&|s| {
                s.frame(frame::HEADERS, 0, 1, &[0x88])
                    .frame(frame::PING, 0, 0, &[0; 8]);
            }),
            ProtocolError,
        ),
        (
            "CONTINUATION on another stream",
            with(&|s| {
                s.frame(frame::HEADERS, 0, 1, &[0x88]).frame(
                    frame::CONTINUATION,
                    frame::END_HEADERS,
                    3,
                    &[],
                );
            }),
            ProtocolError,
        ),
        (
            "PUSH_PROMISE",
            with(&|s| {
                s.frame(
                    frame::PUSH_PROMISE,
                    frame::END_HEADERS,
                    1,
                    &[0, 0, 0, 2, 0x82],
                );
            }),
            ProtocolError,
        ),
        (
            "PING of 7 octets",
            with(&|s| {
                s.frame(frame::PING, 0, 0, &[0; 7]);
            }),
            FrameSizeError,
        ),
        (
            "PING on a stream",
            with(&|s| {
                s.frame(frame::PING, 0, 1, &[0; 8]);
            }),
            ProtocolError,
        ),
        (
            "RST_STREAM of 3 octets",
            with(&|s| {
                s.frame(frame::RST_STREAM, 0, 1, &[0; 3]);
            }),
            FrameSizeError,
        ),
        (
            "RST_STREAM on an idle stream",
            with(&|s| {
                s.frame(frame::RST_STREAM, 0, 9, &[0; 4]);
            }),
            ProtocolError,
        ),
        (
            "GOAWAY of 7 octets",
            with(&|s| {
                s.frame(frame::GOAWAY, 0, 0, &[0; 7]);
            }),
            FrameSizeError,
        ),
        (
            "GOAWAY on a stream",
            with(&|s| {
                s.frame(frame::GOAWAY, 0, 1, &[0; 8]);
            }),
            ProtocolError,
        ),
        (
            "WINDOW_UPDATE of 0 on the connection",
            with(&|s| {
                s.window_update(0, 0);
            }),
            ProtocolError,
        ),
        (
            "WINDOW_UPDATE of 3 octets",
            with(&|s| {
                s.frame(frame::WINDOW_UPDATE, 0, 0, &[0; 3]);
            }),
            FrameSizeError,
        ),
        (
            "connection window above 2^31-1",
            with(&|s| {
                s.window_update(0, 0x7fff_ffff);
            }),
            FlowControlError,
        ),
        (
            "PRIORITY on stream 0",
            with(&|s| {
                s.frame(frame::PRIORITY, 0, 0, &[0; 5]);
            }),
            ProtocolError,
        ),
        (
            "DATA beyond the connection window",
            with(&|s| {
                s.headers(1, &[0x88], false)
                    .data(1, &vec![0; 70_000], false);
            }),
            FlowControlError,
        ),
    ];
    for (name, bytes, code) in cases {
        // A small connection window and large frames, so one frame can overrun it.
        let config = Config {
            stream_window: 1 << 20,
            connection_window: 65_535,
            max_frame_size: 1 << 17,
            ..config()
        };
        let mut conn = Connection::new(config);
        conn.start(&get(), None).unwrap();
        drain(&mut conn);
        let mut log = Vec::new();
        let err = conn
            .receive(&bytes, &mut |e| log.push(describe(&e)))
            .expect_err(name);
        assert_eq!(err.code, code, "{name}: {err}");
        assert_eq!(
            log.last().map(String::as_str),
            Some(&*format!("ended 1 Failed({code:?})")),
            "{name}"
        );
        let goaway = drain(&mut conn)
            .into_iter()
            .find(|(h, _)| h.kind == frame::GOAWAY)
            .expect(name);
        assert_eq!(
            u32::from_be_bytes(goaway.1[4..8].try_into().unwrap()),
            code.to_u32(),
            "{name}"
        );
        assert_eq!(
            conn.receive(&[], &mut |_| {}),
            Err(err),
            "{name}: the error stays"
        );
        assert_eq!(conn.start(&get(), None), Err(StartError::Closed));
    }
}

/// Stream errors reset one stream and keep the connection.
#[test]
fn malformed_responses_reset_their_stream_only() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("no :status", vec![0x0f, 0x0d, 1, b'0']),
        ("a request pseudo-field", vec![0x88, 0x82]),
        (
            "101",
            vec![
                0x00, 0x07, b':', b's', b't', b'a', b't', b'u', b's', 3, b'1', b'0', b'1',
            ],
        ),
    ];
    for (name, block) in cases {
        let mut conn = Connection::new(config());
        conn.start(&get(), None).unwrap();
        conn.start(&get(), None).unwrap();
        let bytes = Server::default()
            .settings(&[])
            .headers(1, &block, true)
            .headers(3, &[0x88], true)
            .take();
        let log = run(&mut conn, &[&bytes]);
        assert_eq!(
            log,
            [
                "ended 1 Failed(ProtocolError)",
                "response 3 200 None server=None",
                "ended 3 Finished"
            ],
            "{name}"
        );
        let resets: Vec<u32> = drain(&mut conn)
            .iter()
            .filter(|(h, _)| h.kind == frame::RST_STREAM)
            .map(|(h, _)| h.stream)
            .collect();
        assert_eq!(resets, [1], "{name}");
    }
    // A stream WINDOW_UPDATE of 0, or one that overflows the stream window.
    for (increment, code) in [(0, "ProtocolError"), (0x7fff_ffff, "FlowControlError")] {
        let mut conn = Connection::new(config());
        conn.start(&get(), None).unwrap();
        let bytes = Server::default()
            .settings(&[])
            .window_update(1, increment)
            .take();
        assert_eq!(
            run(&mut conn, &[&bytes]),
            [format!("ended 1 Failed({code})")]
        );
        assert!(conn.can_start(), "the connection stays");
    }
    // A body longer than its content-length.
    let mut conn = Connection::new(config());
    conn.start(&get(), None).unwrap();
    let bytes = Server::default()
        .settings(&[])
        .headers(1, &ok_with_length(2), false)
        .data(1, b"abc", true)
        .take();
    assert_eq!(
        run(&mut conn, &[&bytes]),
        [
            "response 1 200 Some(2) server=None",
            "ended 1 Failed(ProtocolError)"
        ]
    );
    // A reset stream's late frames are ignored.
    let bytes = Server::default()
        .data(1, b"late", true)
        .headers(1, &[0x88], true)
        .take();
    assert_eq!(run(&mut conn, &[&bytes]), Vec::<String>::new());
}

/// A small seeded generator (xorshift64*): the same mutations every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn mutated_server_bytes_never_panic_and_every_stream_is_accounted_for() {
    let valid = three_answers();
    let mut rng = Rng(0x5eed_0000_0000_0035);
    for round in 0..20_000 {
        let mut bytes = valid.clone();
        for _ in 0..=rng.below(4) {
            let at = rng.below(bytes.len());
            match rng.below(5) {
                0 => bytes[at] ^= 1 << rng.below(8),
                1 => bytes[at] = rng.next() as u8,
                2 => {
                    bytes.remove(at);
                }
                3 => bytes.insert(at, rng.next() as u8),
                _ => bytes.truncate(at),
            }
            if bytes.is_empty() {
                break;
            }
        }
        let mut conn = three_gets();
        let mut ends = Vec::new();
        let mut on = |e: Event<'_>| {
            if let Event::Ended { stream, end } = e {
                ends.push((stream, end));
            }
        };
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let n = 1 + rng.below(rest.len().min(64));
            if conn.receive(&rest[..n], &mut on).is_err() {
                break;
            }
            rest = &rest[n..];
        }
        conn.closed(&mut on);
        ends.sort_by_key(|&(s, _)| s);
        let streams: Vec<u32> = ends.iter().map(|&(s, _)| s).collect();
        assert_eq!(streams, [1, 3, 5], "round {round}: {ends:?}");
        assert!(ends.iter().all(|(_, e)| matches!(
            e,
            End::Finished | End::Reset(_) | End::Unprocessed | End::Failed(_)
        )));
    }
}
