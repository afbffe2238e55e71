//! Content codings of response bodies: which codings a
//! `Content-Encoding` names, and a streaming decoder fed the body as it
//! arrives, on every path (the HTTP/1.1 parser's capture, HTTP/2, HTTP/3).
//! Decoding costs client CPU, so it runs only where something asked for
//! it: `--decode`, or a check that reads the body of an encoded response.
//!
//! The codecs are the maintained crates (flate2 for gzip and deflate,
//! brotli, zstd), each used through its push (`Write`) interface so a body
//! never has to be held whole. Each also tells a body that ends too early
//! (a truncated stream) from a complete one, at [`BodyDecoder::finish`].

use std::fmt;
use std::io::{self, Write};

/// A content coding stampede decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Gzip,
    /// `deflate`: zlib-wrapped as RFC 9110 says, or raw deflate as some
    /// servers send it (told apart by the first two bytes).
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    /// The coding a token names; `Ok(None)` for `identity`.
    fn parse(token: &[u8]) -> Result<Option<Coding>, ()> {
        let token = trim(token);
        let is = |name: &str| token.eq_ignore_ascii_case(name.as_bytes());
        if is("gzip") || is("x-gzip") {
            Ok(Some(Coding::Gzip))
        } else if is("deflate") {
            Ok(Some(Coding::Deflate))
        } else if is("br") {
            Ok(Some(Coding::Brotli))
        } else if is("zstd") {
            Ok(Some(Coding::Zstd))
        } else if is("identity") || token.is_empty() {
            Ok(None)
        } else {
            Err(())
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }
}

/// Why a body did not decode: the coding and the codec's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError(String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Most codings one response may stack (`Content-Encoding: gzip, br`).
const MAX_STACKED: usize = 3;

/// The decoder for a response whose `Content-Encoding` values are
/// `values` (every such header, in order): `Ok(None)` when the body is
/// not encoded (no header, or only `identity`), an error naming a coding
/// stampede does not decode.
pub(crate) fn decoder_for<'a>(
    values: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Option<BodyDecoder>, DecodeError> {
    let mut applied = Vec::new();
    for value in values {
        for token in value.split(|&b| b == b',') {
            match Coding::parse(token) {
                Ok(Some(coding)) => applied.push(coding),
                Ok(None) => {}
                Err(()) => {
                    return Err(DecodeError(format!(
                        "Content-Encoding '{}' is not a coding stampede decodes (gzip, deflate, br, zstd)",
                        String::from_utf8_lossy(trim(token))
                    )))
                }
            }
        }
    }
    if applied.is_empty() {
        return Ok(None);
    }
    if applied.len() > MAX_STACKED {
        return Err(DecodeError(format!(
            "Content-Encoding stacks {} codings; stampede decodes at most {MAX_STACKED}",
            applied.len()
        )));
    }
    // The last coding applied is the first undone.
    let stages = applied.iter().rev().map(|&c| Stage::new(c)).collect();
    Ok(Some(BodyDecoder { stages }))
}

/// The decoder for a response of the `http` crate's kind (HTTP/2, HTTP/3).
pub(crate) fn content_decoder(
    headers: &http::HeaderMap,
) -> Result<Option<BodyDecoder>, DecodeError> {
    decoder_for(
        headers
            .get_all(http::header::CONTENT_ENCODING)
            .iter()
            .map(http::HeaderValue::as_bytes),
    )
}

/// The `Content-Encoding` values of a response head (status line, header
/// lines, blank line), in order.
pub(crate) fn content_encodings(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|&b| b == b'\n')
        .skip(1)
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .take_while(|line| !line.is_empty())
        .filter_map(|line| {
            let colon = line.iter().position(|&b| b == b':')?;
            line[..colon]
                .eq_ignore_ascii_case(b"content-encoding")
                .then(|| trim(&line[colon + 1..]))
        })
}

/// A body being decoded: one stage per coding, the output of each fed to
/// the next, the last one's handed to the caller's sink.
pub(crate) struct BodyDecoder {
    stages: Vec<Stage>,
}

impl fmt::Debug for BodyDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let codings: Vec<&str> = self.stages.iter().map(|s| s.coding().as_str()).collect();
        f.debug_struct("BodyDecoder")
            .field("codings", &codings)
            .finish()
    }
}

impl BodyDecoder {
    /// Decodes the next piece of the body; `sink` gets what it decoded to.
    pub(crate) fn feed(
        &mut self,
        data: &[u8],
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), DecodeError> {
        let first = &mut self.stages[0];
        first.write(data).map_err(|e| first.error(e))?;
        self.pump(0, sink)
    }

    /// The body is over: each stage is finished in turn (a stream that
    /// stopped early is an error), and the last bytes go to `sink`.
    pub(crate) fn finish(&mut self, sink: &mut dyn FnMut(&[u8])) -> Result<(), DecodeError> {
        for at in 0..self.stages.len() {
            let stage = &mut self.stages[at];
            stage.finish().map_err(|e| stage.error(e))?;
            self.pump(at, sink)?;
        }
        Ok(())
    }

    /// Moves what stage `from` produced through the stages after it.
    fn pump(&mut self, from: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), DecodeError> {
        for at in from + 1..self.stages.len() {
            let (done, next) = self.stages.split_at_mut(at);
            let Some(produced) = done[at - 1].output().filter(|o| !o.is_empty()) else {
                continue;
            };
            let stage = &mut next[0];
            stage.write(&produced[..]).map_err(|e| stage.error(e))?;
            produced.clear();
        }
        if let Some(out) = self.stages.last_mut().and_then(Stage::output) {
            if !out.is_empty() {
                sink(out);
                out.clear();
            }
        }
        Ok(())
    }
}

/// One coding's decoder, writing into its own output buffer.
enum Stage {
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    /// The first bytes of a deflate body, until they tell zlib from raw.
    DeflateStart(Vec<u8>),
    Zlib(flate2::write::ZlibDecoder<Vec<u8>>),
    RawDeflate(flate2::write::DeflateDecoder<Vec<u8>>),
    Brotli(Box<brotli::DecompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Decoder<'static, Vec<u8>>),
    /// A stage that could not be set up (zstd's context allocation).
    Broken,
}

/// The brotli decoder's internal output buffer.
const BROTLI_BUFFER: usize = 4096;

impl Stage {
    fn new(coding: Coding) -> Stage {
        match coding {
            Coding::Gzip => Stage::Gzip(flate2::write::GzDecoder::new(Vec::new())),
            Coding::Deflate => Stage::DeflateStart(Vec::new()),
            Coding::Brotli => Stage::Brotli(Box::new(brotli::DecompressorWriter::new(
                Vec::new(),
                BROTLI_BUFFER,
            ))),
            Coding::Zstd => match zstd::stream::write::Decoder::new(Vec::new()) {
                Ok(decoder) => Stage::Zstd(decoder),
                Err(_) => Stage::Broken,
            },
        }
    }

    fn coding(&self) -> Coding {
        match self {
            Stage::Gzip(_) => Coding::Gzip,
            Stage::DeflateStart(_) | Stage::Zlib(_) | Stage::RawDeflate(_) => Coding::Deflate,
            Stage::Brotli(_) => Coding::Brotli,
            Stage::Zstd(_) => Coding::Zstd,
            Stage::Broken => Coding::Zstd,
        }
    }

    fn write(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Stage::Gzip(d) => d.write_all(data),
            Stage::DeflateStart(start) => {
                start.extend_from_slice(data);
                if start.len() < 2 {
                    return Ok(());
                }
                let start = std::mem::take(start);
                *self = if is_zlib_header(start[0], start[1]) {
                    Stage::Zlib(flate2::write::ZlibDecoder::new(Vec::new()))
                } else {
                    Stage::RawDeflate(flate2::write::DeflateDecoder::new(Vec::new()))
                };
                self.write(&start)
            }
            Stage::Zlib(d) => d.write_all(data),
            Stage::RawDeflate(d) => d.write_all(data),
            Stage::Brotli(d) => d.write_all(data),
            Stage::Zstd(d) => d.write_all(data),
            Stage::Broken => Err(io::Error::other("the decoder could not be set up")),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        match self {
            Stage::Gzip(d) => d.try_finish(),
            Stage::DeflateStart(_) => Err(io::ErrorKind::UnexpectedEof.into()),
            Stage::Zlib(d) => d.try_finish(),
            Stage::RawDeflate(d) => d.try_finish(),
            Stage::Brotli(d) => d.close(),
            Stage::Zstd(d) => d.do_finish(),
            Stage::Broken => Err(io::Error::other("the decoder could not be set up")),
        }
    }

    /// The bytes decoded so far and not yet passed on (`None` before a
    /// deflate body's first bytes have chosen its decoder).
    fn output(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            Stage::Gzip(d) => Some(d.get_mut()),
            Stage::DeflateStart(_) | Stage::Broken => None,
            Stage::Zlib(d) => Some(d.get_mut()),
            Stage::RawDeflate(d) => Some(d.get_mut()),
            Stage::Brotli(d) => Some(d.get_mut()),
            Stage::Zstd(d) => Some(d.get_mut()),
        }
    }

    /// The codec's error, said for a person: which coding, and why.
    fn error(&self, error: io::Error) -> DecodeError {
        let coding = self.coding().as_str();
        let why = match error.kind() {
            io::ErrorKind::UnexpectedEof => "the body ended inside the stream (truncated)".into(),
            io::ErrorKind::WriteZero => "data after the end of the stream".into(),
            _ => error.to_string(),
        };
        DecodeError(format!("{coding} body did not decode: {why}"))
    }
}

/// True when two bytes start a zlib stream (RFC 1950: CM 8, a window of at
/// most 32 KiB, and the check bits).
fn is_zlib_header(cmf: u8, flg: u8) -> bool {
    cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end.max(start)]
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
