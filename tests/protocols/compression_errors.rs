//! Bad compressed input: a server whose body does not decode
//! (corrupt, cut short, or in a coding stampede does not decode) is the
//! `undecodable_body` error class with the reason sampled, whenever the
//! body is decoded (`--decode`, or a check that reads the body); without
//! either, nothing is decoded and the response counts as it came. A
//! chunked encoded body decodes. Bad values of `--compressed` are one line
//! and exit 2.

use flate2::write::GzEncoder;
use stampede_testkit::{
    answer_each_request, event_loop_or_skip, run_on_one_loop, stampede, text, RawServer, Run,
    EVENT_LOOPS,
};
use std::io::Write;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A server answering every request with `coding` and `body` (Content-Length).
fn serving(coding: &str, body: &[u8]) -> RawServer {
    let mut response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: {coding}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(body);
    RawServer::start(move |stream| answer_each_request(stream, &response))
}

fn first_sample(run: &Run) -> String {
    run.result()["error_samples"]["undecodable_body"][0]
        .as_str()
        .unwrap_or_else(|| panic!("an undecodable_body sample in {}", run.result()))
        .to_string()
}

#[test]
fn a_corrupt_gzip_body_is_an_undecodable_body_error_with_its_reason() {
    let server = serving("gzip", b"this is not gzip at all");
    let url = server.url("/");
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = run_on_one_loop(io, &[&url, "--decode", "-n", "6", "-c", "2"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.count("/requests/sent"), 6, "{at}");
        assert_eq!(run.count("/errors/undecodable_body"), 6, "{at}");
        assert_eq!(run.count("/requests/success"), 0, "{at}");
        let sample = first_sample(&run);
        assert!(
            sample.starts_with("gzip body did not decode: "),
            "{at}: {sample}"
        );
        // Not asked to decode, nothing reads the body: it counts as it came.
        let Some(plain) = run_on_one_loop(io, &[&url, "--compressed", "-n", "6", "-c", "2"]) else {
            continue;
        };
        assert_eq!(plain.count("/requests/success"), 6, "{at}");
        // A check that reads the body decodes it, --decode or not.
        let Some(checked) =
            run_on_one_loop(io, &[&url, "-n", "4", "--check", "body contains \"x\""])
        else {
            continue;
        };
        assert_eq!(checked.count("/errors/undecodable_body"), 4, "{at}");
        assert_eq!(checked.count("/requests/check_failed"), 0, "{at}");
    }
}

#[test]
fn a_truncated_body_and_an_unknown_coding_say_so() {
    let text: Vec<u8> = (0..5000u32)
        .flat_map(|i| format!("{i},").into_bytes())
        .collect();
    let whole = gzip(&text);
    let truncated = serving("gzip", &whole[..whole.len() / 2]);
    let unknown = serving("compress", b"abcdefgh");
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = run_on_one_loop(io, &[&truncated.url("/"), "--decode", "-n", "3"]) else {
            continue;
        };
        assert_eq!(run.count("/errors/undecodable_body"), 3, "--io {io}");
        assert_eq!(
            first_sample(&run),
            "gzip body did not decode: the body ended inside the stream (truncated)",
            "--io {io}"
        );
        let run =
            run_on_one_loop(io, &[&unknown.url("/"), "--decode", "-n", "3"]).expect("ran above");
        assert_eq!(run.count("/errors/undecodable_body"), 3, "--io {io}");
        assert!(
            first_sample(&run).contains("Content-Encoding 'compress' is not a coding"),
            "--io {io}: {}",
            first_sample(&run)
        );
    }
}

#[test]
fn a_chunked_gzip_body_decodes_and_a_head_response_is_not_decoded() {
    let body = gzip(b"chunked and gzipped, decoded in one place\n");
    let (first, rest) = body.split_at(10);
    let mut chunked =
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in [first, rest] {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let server = RawServer::start(move |stream| answer_each_request(stream, &chunked));
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = run_on_one_loop(
            io,
            &[
                &server.url("/"),
                "--decode",
                "-n",
                "5",
                "--check",
                "body contains \"decoded in one\"",
            ],
        ) else {
            continue;
        };
        assert_eq!(
            run.count("/requests/success"),
            5,
            "--io {io}: {}",
            run.result()
        );
        assert_eq!(run.count("/compression/decoded_bytes"), 5 * 42, "--io {io}");
    }
    // HEAD: Content-Encoding and a length, no body: nothing to decode.
    let head = RawServer::start(|stream| {
        answer_each_request(
            stream,
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 999\r\n\r\n",
        )
    });
    let run = run_on_one_loop("auto", &[&head.url("/"), "--head", "--decode", "-n", "3"]).unwrap();
    assert_eq!(run.count("/requests/success"), 3, "{}", run.result());
    assert_eq!(run.count("/compression/encoded_responses"), 0);
}

#[test]
fn bad_compressed_values_are_one_line_and_exit_2() {
    for args in [
        vec!["http://127.0.0.1:1/", "--compressed=lzma"],
        vec!["http://127.0.0.1:1/", "--compressed=gzip,,br"],
    ] {
        let output = stampede(&args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(first.contains("unknown coding '"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
