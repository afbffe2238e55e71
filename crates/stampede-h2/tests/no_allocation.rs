//! The codec allocates nothing per request once warm: starting a stream,
//! draining the output, reading a response (split across two reads, with a
//! Huffman-coded field and a field indexed into the dynamic table, so that
//! entries are evicted and their buffers reused) and its body.

use stampede_h2::frame;
use stampede_h2::{Config, Connection, Event, RequestBlock};
use stampede_testkit::{thread_allocations, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The answer to `stream`: `:status 200`, content-length 13, `location`
/// Huffman-coded (RFC 7541 C.4.1's www.example.com), and a `date` with
/// incremental indexing whose value changes per request (the table fills,
/// then evicts), then 13 octets of body.
fn answer(out: &mut Vec<u8>, stream: u32, date: &str) {
    // The header block is written in place (its length patched after), so
    // the test itself allocates nothing per request.
    frame::write_head(out, 0, frame::HEADERS, frame::END_HEADERS, stream);
    let start = out.len();
    out.extend_from_slice(&[0x88, 0x0f, 28 - 15, 2, b'1', b'3']);
    out.extend_from_slice(&[
        0x0f,
        46 - 15,
        0x8c,
        0xf1,
        0xe3,
        0xc2,
        0xe5,
        0xf2,
        0x3a,
        0x6b,
        0xa0,
        0xab,
        0x90,
        0xf4,
        0xff,
    ]);
    out.extend_from_slice(&[0x40 | 33, date.len() as u8]);
    out.extend_from_slice(date.as_bytes());
    let len = (out.len() - start) as u32;
    out[start - 9..start - 6].copy_from_slice(&len.to_be_bytes()[1..]);
    frame::write_head(out, 13, frame::DATA, frame::END_STREAM, stream);
    out.extend_from_slice(b"hello, world\n");
}

#[test]
fn a_warm_connection_allocates_nothing_per_request() {
    let config = Config {
        capture: vec![b"location".to_vec()],
        ..Config::default()
    };
    let mut conn = Connection::new(config);
    let get = RequestBlock::new("GET", "http", "test", "/", &[("user-agent", "stampede")]).unwrap();
    let mut server = Vec::with_capacity(4096);
    frame::write_settings(&mut server, &[]);
    conn.receive(&server, &mut |_| {}).unwrap();
    let mut finished = 0u32;
    let mut body = 0usize;
    // Made before counting: the test's own strings are not the codec's.
    let dates: Vec<String> = (0..1_500)
        .map(|n| format!("Fri, 04 Dec 2026 19:{:02}:{:02} GMT", (n / 60) % 60, n % 60))
        .collect();
    let mut cycle = |conn: &mut Connection, server: &mut Vec<u8>, date: &str| {
        let stream = conn.start(&get, None).unwrap();
        let written = conn.output().len();
        conn.consume_output(written);
        server.clear();
        answer(server, stream, date);
        let half = server.len() / 2;
        for piece in [&server[..half], &server[half..]] {
            conn.receive(piece, &mut |e| match e {
                Event::Response { head, .. } => {
                    assert_eq!(head.field(0), Some(&b"www.example.com"[..]))
                }
                Event::Data { data, .. } => body += data.len(),
                Event::Ended { .. } => finished += 1,
                _ => {}
            })
            .unwrap();
        }
    };
    // Warm up: the table fills and starts evicting; buffers reach their size.
    for date in &dates[..500] {
        cycle(&mut conn, &mut server, date);
    }
    let before = thread_allocations();
    for date in &dates[500..] {
        cycle(&mut conn, &mut server, date);
    }
    let allocations = thread_allocations() - before;
    assert_eq!(finished, 1_500);
    assert_eq!(body, 1_500 * 13);
    assert_eq!(allocations, 0, "allocations in 1,000 warm requests");
}
