//! The fuzz target's body (fuzz/fuzz_targets/h2_client.rs), here so that
//! the crate's tests replay the committed corpus on stable Rust.

use bytes::Bytes;

use crate::{Config, Connection, End, Event, RequestBlock};

/// Feeds `data` as a server's bytes to a connection with three requests
/// open (two GETs and a POST with a body larger than a frame), in chunks
/// whose sizes the first octet chooses. Panics if the codec panics, or if a
/// stream does not end exactly once (after the transport closes).
pub fn check_client(data: &[u8]) {
    let (chunk, data) = match data.split_first() {
        Some((&c, rest)) => (usize::from(c) + 1, rest),
        None => (1, data),
    };
    let capture = vec![b"server".to_vec(), b"grpc-status".to_vec()];
    let mut conn = Connection::new(Config {
        stream_window: 65_535,
        connection_window: 65_535,
        capture,
        ..Config::default()
    });
    let get = RequestBlock::new("GET", "http", "fuzz.test", "/", &[]).expect("a valid request");
    let post = RequestBlock::new("POST", "http", "fuzz.test", "/up", &[]).expect("a valid request");
    let mut started = Vec::new();
    for (block, body) in [
        (&get, None),
        (&post, Some(Bytes::from(vec![0u8; 20_000]))),
        (&get, None),
    ] {
        started.push(
            conn.start(block, body)
                .expect("a fresh connection takes three streams"),
        );
    }
    let mut ends: Vec<(u32, End)> = Vec::new();
    let mut on = |e: Event<'_>| {
        if let Event::Ended { stream, end } = e {
            ends.push((stream, end));
        }
    };
    for piece in data.chunks(chunk) {
        let n = conn.output().len();
        conn.consume_output(n);
        if conn.receive(piece, &mut on).is_err() {
            break;
        }
    }
    conn.closed(&mut on);
    let mut ended: Vec<u32> = ends.iter().map(|&(s, _)| s).collect();
    ended.sort_unstable();
    assert_eq!(ended, started, "every stream ends exactly once: {ends:?}");
}

#[cfg(test)]
mod tests {
    /// The committed corpus (fuzz/corpus/h2_client), replayed.
    #[test]
    fn the_fuzz_corpus_replays_without_a_panic() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/h2_client");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("the corpus folder") {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            super::check_client(&bytes);
            seen += 1;
        }
        assert!(seen > 0, "no seed in {}", dir.display());
    }
}
