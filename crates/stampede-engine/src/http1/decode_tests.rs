//! The decoders of decode.rs against the crates' own encoders: every
//! coding in any pieces, stacked codings, and the bodies that must fail.

use super::*;

fn sample() -> Vec<u8> {
    (0..20_000u32)
        .flat_map(|i| format!("line {i} of a compressible body\n").into_bytes())
        .collect()
}

fn encode(coding: Coding, data: &[u8]) -> Vec<u8> {
    match coding {
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Coding::Deflate => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Coding::Brotli => {
            let mut out = Vec::new();
            {
                let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                e.write_all(data).unwrap();
            }
            out
        }
        Coding::Zstd => zstd::encode_all(data, 3).unwrap(),
    }
}

/// Decodes `body` fed in pieces of `piece` bytes.
fn decode(encoding: &str, body: &[u8], piece: usize) -> Result<Vec<u8>, DecodeError> {
    let mut decoder = decoder_for([encoding.as_bytes()])?.expect("an encoded body");
    let mut out = Vec::new();
    for chunk in body.chunks(piece) {
        decoder.feed(chunk, &mut |d| out.extend_from_slice(d))?;
    }
    decoder.finish(&mut |d| out.extend_from_slice(d))?;
    Ok(out)
}

#[test]
fn every_coding_decodes_in_any_pieces() {
    let data = sample();
    for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
        let body = encode(coding, &data);
        assert!(body.len() < data.len() / 4, "{coding:?} compresses");
        for piece in [1, 7, 4096, body.len()] {
            assert_eq!(
                decode(coding.as_str(), &body, piece).unwrap(),
                data,
                "{coding:?} in pieces of {piece}"
            );
        }
    }
}

#[test]
fn raw_deflate_and_stacked_codings_decode() {
    let data = sample();
    let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    raw.write_all(&data).unwrap();
    let raw = raw.finish().unwrap();
    assert_eq!(decode("deflate", &raw, 100).unwrap(), data);
    // gzip applied first, then br: br is undone first.
    let stacked = encode(Coding::Brotli, &encode(Coding::Gzip, &data));
    assert_eq!(decode("gzip, br", &stacked, 333).unwrap(), data);
}

#[test]
fn corrupt_truncated_and_trailing_bodies_are_errors() {
    let data = sample();
    for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
        let body = encode(coding, &data);
        let truncated = decode(coding.as_str(), &body[..body.len() / 2], 512).unwrap_err();
        assert!(
            truncated.to_string().starts_with(coding.as_str()),
            "{truncated}"
        );
        let mut corrupt = body.clone();
        for b in &mut corrupt[..24] {
            *b ^= 0x5a;
        }
        assert!(
            decode(coding.as_str(), &corrupt, 512).is_err(),
            "{coding:?}"
        );
    }
    let mut trailing = encode(Coding::Gzip, b"hello");
    trailing.extend_from_slice(b"garbage");
    let error = decode("gzip", &trailing, 64).unwrap_err();
    assert_eq!(
        error.to_string(),
        "gzip body did not decode: data after the end of the stream"
    );
}

#[test]
fn identity_unknown_and_header_scanning() {
    assert!(decoder_for([&b"identity"[..]]).unwrap().is_none());
    assert!(decoder_for(std::iter::empty()).unwrap().is_none());
    let unknown = decoder_for([&b"compress"[..]]).unwrap_err();
    assert!(unknown.to_string().contains("'compress'"), "{unknown}");
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-encoding:  gzip \r\nContent-Encoding: br\r\n\r\n";
    let values: Vec<&[u8]> = content_encodings(head).collect();
    assert_eq!(values, vec![&b"gzip"[..], &b"br"[..]]);
    assert_eq!(content_encodings(b"HTTP/1.1 200 OK\r\n\r\n").count(), 0);
}
