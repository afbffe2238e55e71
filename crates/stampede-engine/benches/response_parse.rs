//! Time per response of the HTTP/1.x response parser and body framer
//! ([`ResponseParser`]), the user-space work the engine does on every response
//! it reads.
//!
//! Why it matters: on loopback nearly all of a lean client's CPU per request
//! is kernel time (the TCP round trip), and to stay near that floor the whole
//! engine has about 0.3 µs of user time per request for everything
//! it does itself: parsing and framing the response, timing, recording the
//! outcome. These benchmarks keep the parsing piece measured, so a change that
//! makes it slower shows up as a number rather than as a vague loss of
//! requests per second in a load test.
//!
//! Cases, each one complete response per iteration (throughput is reported in
//! responses, so the "time" column is time per response):
//!
//! - `content_length_one_read`: an nginx-like `200 OK` with 6 headers and a
//!   515-byte body framed by Content-Length, all in one read (keep-alive to a
//!   small static page, the common case);
//! - `content_length_two_reads`: the same response with the head in the first
//!   read and the body in the second;
//! - `chunked_3_chunks`: a chunked response of three chunks and the last chunk;
//! - `content_length_64k_16k_reads`: a 64 KiB body arriving in 16 KiB reads
//!   (framing only: bodies are counted, never copied or stored).
//!
//! The parser is reused across iterations with [`ResponseParser::reset`], as a
//! connection reuses it across requests.
//!
//! Run with `cargo bench -p stampede-engine --bench response_parse`; add
//! `-- --warm-up-time 1 --measurement-time 3` for a quicker run, and pin it to
//! a quiet core (`taskset -c 1 ...`) for steadier figures.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use stampede_engine::http1::{Complete, ResponseParser, ResponseProgress};
use std::hint::black_box;

/// Body size of the nginx-like response (a small static page).
const SMALL_BODY: usize = 515;
/// Body size of the large response, and the size of each read of it.
const LARGE_BODY: usize = 64 * 1024;
const READ_SIZE: usize = 16 * 1024;

/// The head of a response like nginx's to a small static file: 6 headers,
/// framed by Content-Length.
fn nginx_like_head(body_len: usize) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\n\
         Server: nginx/1.22.1\r\n\
         Date: Mon, 30 Nov 2026 02:00:00 GMT\r\n\
         Content-Type: text/html\r\n\
         Content-Length: {body_len}\r\n\
         Connection: keep-alive\r\n\
         ETag: \"6434bbbe-203\"\r\n\
         \r\n"
    )
    .into_bytes()
}

/// A body of `len` bytes of HTML-ish text (its content is never looked at).
fn body(len: usize) -> Vec<u8> {
    b"<p>stampede</p>\n"
        .iter()
        .copied()
        .cycle()
        .take(len)
        .collect()
}

/// A chunked response whose body is three chunks (200, 200 and 115 bytes, 515
/// in all) followed by the last chunk and no trailers.
fn chunked_response() -> Vec<u8> {
    let mut response = b"HTTP/1.1 200 OK\r\n\
        Server: nginx/1.22.1\r\n\
        Date: Mon, 30 Nov 2026 02:00:00 GMT\r\n\
        Content-Type: text/html\r\n\
        Transfer-Encoding: chunked\r\n\
        Connection: keep-alive\r\n\
        \r\n"
        .to_vec();
    for size in [200usize, 200, 115] {
        response.extend_from_slice(format!("{size:x}\r\n").as_bytes());
        response.extend_from_slice(&body(size));
        response.extend_from_slice(b"\r\n");
    }
    response.extend_from_slice(b"0\r\n\r\n");
    response
}

/// Parses one response from `reads` the way a connection does (each read
/// consumed whole: the responses here have nothing after their end) and
/// returns what the parser reported.
#[inline]
fn parse(parser: &mut ResponseParser, reads: &[&[u8]]) -> Option<Complete> {
    parser.reset();
    for read in reads {
        let (used, progress) = parser.advance(black_box(read)).expect("valid response");
        debug_assert_eq!(used, read.len());
        if let ResponseProgress::Complete(done) = progress {
            return Some(done);
        }
    }
    None
}

/// Checks once, outside the timed loop, that the case parses to the expected
/// complete response, so a benchmark can never time an error path.
fn check(reads: &[&[u8]], body_bytes: u64) {
    let mut parser = ResponseParser::new(false);
    let done = parse(&mut parser, reads).expect("response complete after the last read");
    assert_eq!(
        done,
        Complete {
            status: 200,
            keep_alive: true,
            body_bytes
        }
    );
}

fn bench_case(c: &mut Criterion, name: &str, reads: &[&[u8]], body_bytes: u64) {
    check(reads, body_bytes);
    let mut group = c.benchmark_group("response_parse");
    group.throughput(Throughput::Elements(1));
    let mut parser = ResponseParser::new(false);
    group.bench_function(name, |b| b.iter(|| parse(&mut parser, black_box(reads))));
    group.finish();
}

fn response_parse(c: &mut Criterion) {
    // nginx-like 515-byte page in one read.
    let head = nginx_like_head(SMALL_BODY);
    let small_body = body(SMALL_BODY);
    let whole = [head.as_slice(), small_body.as_slice()].concat();
    bench_case(c, "content_length_one_read", &[&whole], SMALL_BODY as u64);

    // The same response, head in the first read and body in the second.
    bench_case(
        c,
        "content_length_two_reads",
        &[&head, &small_body],
        SMALL_BODY as u64,
    );

    // Chunked: three chunks and the last chunk, in one read.
    let chunked = chunked_response();
    bench_case(c, "chunked_3_chunks", &[&chunked], SMALL_BODY as u64);

    // 64 KiB body framed by Content-Length, read 16 KiB at a time (the first
    // read carries the head and the start of the body).
    let large = [nginx_like_head(LARGE_BODY), body(LARGE_BODY)].concat();
    let reads: Vec<&[u8]> = large.chunks(READ_SIZE).collect();
    bench_case(c, "content_length_64k_16k_reads", &reads, LARGE_BODY as u64);
}

criterion_group!(benches, response_parse);
criterion_main!(benches);
