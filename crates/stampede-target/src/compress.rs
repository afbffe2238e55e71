//! Compressed responses, so that a client's `--compressed` and
//! `--decode` have a server to be tested against: the routes `/gzip`,
//! `/deflate`, `/br` and `/zstd` (optionally `/{n}` decoded bytes; always
//! encoded in that coding, as httpbin's `/gzip` is), and `serve
//! --compress`, which encodes every compressible response whose request's
//! `Accept-Encoding` asks for a coding this server speaks.
//!
//! `--compress` rewrites the whole response the routes just produced (its
//! head and body are in the connection's buffer): `Content-Encoding`,
//! `Vary: Accept-Encoding` and the new `Content-Length`. A request that
//! does not ask costs one scan of its head for `Accept-Encoding`, and
//! nothing at all without `--compress`. Left as they are: HEAD responses,
//! streamed bodies (over 64 KiB), chunked ones, statuses other than 2xx
//! (but 204 and 206), bodies under 20 bytes (nginx's `gzip_min_length`),
//! already encoded ones, and types that do not compress (nginx's habit:
//! text, JSON, JavaScript, XML, SVG). The codecs are the maintained crates
//! (flate2, brotli, zstd).

use std::io::Write;

use crate::reply::{Outcome, Reply};
use crate::response::{self, Exchange, Len};
use crate::route_label::Route;

/// A content coding this server can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Gzip,
    /// zlib-wrapped, as RFC 9110 says `deflate` is.
    Deflate,
    Brotli,
    Zstd,
}

/// The codings in the order this server prefers them when a client's
/// weights tie: the cheapest to decode first.
const PREFERENCE: [Coding; 4] = [Coding::Zstd, Coding::Brotli, Coding::Gzip, Coding::Deflate];

/// Decoded bytes of `/gzip` and its siblings without a size.
pub(crate) const DEFAULT_LEN: usize = 4096;
/// Most decoded bytes a `/gzip/{n}` may ask for.
pub(crate) const MAX_LEN: u64 = 1 << 20;
/// Bodies shorter than this are not worth encoding (nginx's default).
const MIN_LEN: usize = 20;

impl Coding {
    /// The route that always answers in this coding.
    pub(crate) fn of_route(route: Route) -> Option<Coding> {
        match route {
            Route::Gzip => Some(Coding::Gzip),
            Route::Deflate => Some(Coding::Deflate),
            Route::Br => Some(Coding::Brotli),
            Route::Zstd => Some(Coding::Zstd),
            _ => None,
        }
    }

    fn token(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }

    /// `data` encoded (levels of the usual server defaults: gzip 6,
    /// brotli 5, zstd 3; brotli's top levels cost far too much per request).
    pub(crate) fn encode(self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len() / 2 + 64);
        let written = match self {
            Coding::Gzip => {
                let mut e = flate2::write::GzEncoder::new(&mut out, flate2::Compression::new(6));
                e.write_all(data).and_then(|()| e.try_finish())
            }
            Coding::Deflate => {
                let mut e = flate2::write::ZlibEncoder::new(&mut out, flate2::Compression::new(6));
                e.write_all(data).and_then(|()| e.try_finish())
            }
            Coding::Brotli => {
                let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                let written = e.write_all(data);
                // Dropping the writer finishes the stream.
                drop(e);
                written
            }
            Coding::Zstd => zstd::stream::copy_encode(data, &mut out, 3),
        };
        // Writing into memory cannot fail; should a codec refuse, the
        // response goes out unencoded rather than broken.
        debug_assert!(written.is_ok());
        out
    }
}

/// The coding to answer a request with, by its `Accept-Encoding` (in its
/// head as received): the highest weight among the codings served, ties
/// by [`PREFERENCE`]; `None` when the request asks for none of them.
pub(crate) fn negotiate(raw_head: &[u8]) -> Option<Coding> {
    let mut weights = [None::<u16>; PREFERENCE.len()];
    let mut wildcard = None;
    for value in header_values(raw_head, b"accept-encoding") {
        for item in value.split(|&b| b == b',') {
            let mut parts = item.split(|&b| b == b';');
            let name = trim(parts.next().unwrap_or_default());
            let weight = parts
                .filter_map(|p| trim(p).strip_prefix(b"q=").map(parse_weight))
                .next()
                .unwrap_or(Some(1000));
            let Some(weight) = weight else { continue };
            if name == b"*" {
                wildcard = Some(weight);
            }
            for (slot, coding) in weights.iter_mut().zip(PREFERENCE) {
                let named = name.eq_ignore_ascii_case(coding.token().as_bytes())
                    || (coding == Coding::Gzip && name.eq_ignore_ascii_case(b"x-gzip"));
                if named {
                    *slot = Some(weight);
                }
            }
        }
    }
    let mut best: Option<(u16, Coding)> = None;
    for (weight, coding) in weights.iter().zip(PREFERENCE) {
        let weight = weight.or(wildcard).unwrap_or(0);
        if weight > 0 && best.is_none_or(|(top, _)| weight > top) {
            best = Some((weight, coding));
        }
    }
    best.map(|(_, coding)| coding)
}

/// A `q=` weight in thousandths (`q=0.5` → 500); `None` when unreadable.
fn parse_weight(text: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(text).ok()?;
    let q: f64 = text.trim().parse().ok()?;
    (0.0..=1.0)
        .contains(&q)
        .then(|| (q * 1000.0).round() as u16)
}

/// `/gzip`, `/deflate`, `/br`, `/zstd` and `/{name}/{n}`: `n` bytes of
/// `pattern` (the target's text pattern, repeated), encoded in that coding
/// whatever the request asks.
pub(crate) fn route(
    coding: Coding,
    arg: Option<&str>,
    pattern: &[u8],
    x: &Exchange,
    out: &mut Vec<u8>,
) -> Outcome {
    let len = match arg {
        None => DEFAULT_LEN,
        Some(a) => match a.parse::<u64>().ok().filter(|&n| n <= MAX_LEN) {
            Some(n) => n as usize,
            None => {
                let why = b"the decoded size must be 0..=1048576 bytes\n";
                return Outcome::done(400, response::whole(out, x, 400, "text/plain", why));
            }
        },
    };
    let plain: Vec<u8> = pattern.iter().copied().cycle().take(len).collect();
    let body = coding.encode(&plain);
    let extra = encoding_headers(coding);
    response::head(
        out,
        x,
        200,
        Some("text/plain"),
        Len::Known(body.len()),
        extra.as_bytes(),
    );
    if x.head_only {
        return Outcome::done(200, 0);
    }
    out.extend_from_slice(&body);
    Outcome::done(200, body.len())
}

fn encoding_headers(coding: Coding) -> String {
    format!(
        "Content-Encoding: {}\r\nVary: Accept-Encoding\r\n",
        coding.token()
    )
}

/// `serve --compress`: encodes the whole response produced at
/// `out[mark..]` when the request (its head as received) asks for a
/// coding and the response is one worth encoding (see the module's doc).
pub(crate) fn compress_response(
    raw_head: &[u8],
    x: &Exchange,
    out: &mut Vec<u8>,
    mark: usize,
    outcome: &mut Outcome,
) {
    if x.head_only || !matches!(outcome.reply, Reply::Done | Reply::Delay(_)) {
        return;
    }
    if !(200..300).contains(&outcome.status) || matches!(outcome.status, 204 | 206) {
        return;
    }
    let Some(coding) = negotiate(raw_head) else {
        return;
    };
    let Some((head_len, body_len)) = compressible(&out[mark..]) else {
        return;
    };
    let body_start = mark + head_len;
    if out.len() != body_start + body_len || body_len < MIN_LEN {
        return;
    }
    let body = coding.encode(&out[body_start..]);
    let mut head = Vec::with_capacity(head_len + 64);
    for line in out[mark..body_start - 2].split_inclusive(|&b| b == b'\n') {
        if !starts_with_name(line, b"content-length:") {
            head.extend_from_slice(line);
        }
    }
    head.extend_from_slice(encoding_headers(coding).as_bytes());
    head.extend_from_slice(b"Content-Length: ");
    response::push_num(&mut head, body.len() as u64);
    head.extend_from_slice(b"\r\n\r\n");
    out.truncate(mark);
    out.extend_from_slice(&head);
    out.extend_from_slice(&body);
    outcome.body_bytes = body.len();
}

/// Of a whole response: the head's length and the body's Content-Length,
/// when its type compresses and it is not encoded or chunked already.
fn compressible(response: &[u8]) -> Option<(usize, usize)> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut parsed = httparse::Response::new(&mut headers);
    let head_len = match parsed.parse(response) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => return None,
    };
    let mut length = None;
    let mut type_compresses = false;
    for h in parsed.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-encoding")
            || name.eq_ignore_ascii_case(b"transfer-encoding")
        {
            return None;
        } else if name.eq_ignore_ascii_case(b"content-length") {
            length = std::str::from_utf8(h.value).ok()?.trim().parse().ok();
        } else if name.eq_ignore_ascii_case(b"content-type") {
            type_compresses = compressible_type(h.value);
        }
    }
    type_compresses.then_some((head_len, length?))
}

/// Types that compress (what nginx's `gzip_types` usually lists).
fn compressible_type(value: &[u8]) -> bool {
    let essence = trim(value.split(|&b| b == b';').next().unwrap_or_default());
    let essence = String::from_utf8_lossy(essence).to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/javascript"
                | "application/xml"
                | "application/x-ndjson"
                | "image/svg+xml"
        )
}

/// The values of every header named `name` (lower case) in a request head.
fn header_values<'a>(head: &'a [u8], name: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    head.split(|&b| b == b'\n').skip(1).filter_map(move |line| {
        let colon = line.iter().position(|&b| b == b':')?;
        line[..colon]
            .eq_ignore_ascii_case(name)
            .then(|| trim(&line[colon + 1..]))
    })
}

fn starts_with_name(line: &[u8], name: &[u8]) -> bool {
    line.len() >= name.len() && line[..name.len()].eq_ignore_ascii_case(name)
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
#[path = "compress_tests.rs"]
mod tests;
