//! The text form of a latency histogram (HDR V2 + deflate, base64), made
//! cheaply enough to write several per interval. The bytes are those of
//! the `hdrhistogram` crate's `V2DeflateSerializer` over the histogram's
//! canonical form (the full one-hour range): only the header names that
//! range, and the counts, which end at the largest value, are the same
//! whatever range the histogram grew to. So the header is patched rather
//! than a full-range copy made, and the deflate state, the buffers and the
//! text of an empty histogram are kept between uses.
//!
//! Why: `--hlog` writes four or more of these per interval, and the result
//! keeps one per second. Made afresh, they took 4.87 M instructions for an
//! interval of four tags (callgrind), mostly allocating and clearing the
//! deflate state and a 190 KiB full-range copy. Even kept, a deflate state
//! is cleared for each histogram whatever its size (miniz_oxide's reset:
//! about 380 KB of memset; 2.98 M per interval): so the interval log stores its histograms in zlib's
//! stored blocks instead ([`HistogramEncoder::stored`]: no compression
//! state at all, 0.42 M per interval, the text about twice as long), while the result's
//! histograms, one per second, stay deflated. Every zlib reader (Java's
//! `Inflater`, Python's `zlib`, flate2) reads both; see
//! bench/results/2026-12-04-hlog-encoder.md.

use crate::LatencyHistogram;
use base64::Engine as _;
use flate2::{Compress, Compression, FlushCompress, Status};
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
use hdrhistogram::Histogram;
use std::cell::RefCell;

/// Highest latency recorded: one hour, in µs; longer values are clamped
/// (`record_latency`). The canonical form spans 1 µs to this.
pub(crate) const MAX_TRACKED_US: u64 = 3_600_000_000;

/// The cookie of a deflated V2 histogram (HdrHistogram's
/// `V2CompressedEncodingCookieBase | 0x10`).
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;

/// Where the V2 header keeps the highest trackable value (big-endian u64):
/// after the cookie, payload length, normalizing offset, digits and lowest.
const HIGHEST_AT: std::ops::Range<usize> = 24..32;

/// Encodes histograms, keeping its state between them.
pub struct HistogramEncoder {
    plain: V2Serializer,
    plain_bytes: Vec<u8>,
    /// `None`: zlib's stored blocks, no compression.
    deflate: Option<Compress>,
    packed: Vec<u8>,
    /// The text of an empty histogram, by its digits: most tags of most
    /// intervals of a keep-alive run (connect, tls) hold nothing.
    empty: Vec<(u8, String)>,
}

impl Default for HistogramEncoder {
    fn default() -> Self {
        HistogramEncoder::new()
    }
}

impl std::fmt::Debug for HistogramEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistogramEncoder").finish_non_exhaustive()
    }
}

impl HistogramEncoder {
    /// Deflated as HdrHistogram's serializer does (zlib's default level,
    /// 6): the same text as the crate's `V2DeflateSerializer`.
    pub fn new() -> HistogramEncoder {
        HistogramEncoder {
            plain: V2Serializer::new(),
            plain_bytes: Vec::new(),
            deflate: Some(Compress::new(Compression::default(), true)),
            packed: Vec::new(),
            empty: Vec::new(),
        }
    }

    /// In zlib's stored blocks: no compression, so nothing to clear per
    /// histogram; the same V2 bytes, read by every zlib reader.
    pub fn stored() -> HistogramEncoder {
        HistogramEncoder {
            deflate: None,
            ..HistogramEncoder::new()
        }
    }

    /// Appends the base64 text of `histogram` in its canonical form: the
    /// range 1 µs to an hour at `digits` significant digits. A histogram
    /// that does not fit that form (another lowest value, more than an
    /// hour) is encoded as it is, through the crate's serializer.
    pub fn encode_into(&mut self, histogram: &LatencyHistogram, digits: u8, out: &mut String) {
        let fits = histogram.low() == 1
            && histogram.sigfig() == digits
            && histogram.max() <= MAX_TRACKED_US;
        if !fits {
            out.push_str(&slow_encoding(histogram, digits));
            return;
        }
        if histogram.is_empty() {
            if let Some((_, text)) = self.empty.iter().find(|(d, _)| *d == digits) {
                out.push_str(text);
                return;
            }
        }
        let start = out.len();
        match self.pack(histogram) {
            Ok(()) => base64::engine::general_purpose::STANDARD.encode_string(&self.packed, out),
            // Cannot happen in memory; the crate's way still gives the text.
            Err(()) => out.push_str(&slow_encoding(histogram, digits)),
        }
        if histogram.is_empty() {
            self.empty.push((digits, out[start..].to_string()));
        }
    }

    /// The V2 bytes with the canonical range in the header, as a zlib
    /// stream with the cookie and length in front, into `self.packed`.
    fn pack(&mut self, histogram: &LatencyHistogram) -> Result<(), ()> {
        self.plain_bytes.clear();
        self.plain
            .serialize(histogram, &mut self.plain_bytes)
            .map_err(|_| ())?;
        self.plain_bytes
            .get_mut(HIGHEST_AT)
            .ok_or(())?
            .copy_from_slice(&MAX_TRACKED_US.to_be_bytes());
        self.packed.clear();
        self.packed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.packed.extend_from_slice(&[0; 4]);
        match &mut self.deflate {
            Some(deflate) => deflate_into(deflate, &self.plain_bytes, &mut self.packed)?,
            None => store_into(&self.plain_bytes, &mut self.packed),
        }
        let length = u32::try_from(self.packed.len() - 8).map_err(|_| ())?;
        self.packed[4..8].copy_from_slice(&length.to_be_bytes());
        Ok(())
    }
}

/// Appends `input` as one zlib stream, deflated.
fn deflate_into(deflate: &mut Compress, input: &[u8], out: &mut Vec<u8>) -> Result<(), ()> {
    deflate.reset();
    let mut consumed = 0;
    loop {
        out.reserve(input.len() / 2 + 64);
        let before = deflate.total_in();
        let status = deflate
            .compress_vec(&input[consumed..], out, FlushCompress::Finish)
            .map_err(|_| ())?;
        consumed += (deflate.total_in() - before) as usize;
        if status == Status::StreamEnd {
            return Ok(());
        }
    }
}

/// Appends `input` as one zlib stream of stored blocks (RFC 1950 and RFC
/// 1951 §3.2.4): the header for the default window and no dictionary,
/// blocks of at most 65,535 bytes, the Adler-32 of the input.
fn store_into(input: &[u8], out: &mut Vec<u8>) {
    // CMF 0x78 (deflate, 32 KiB window), FLG 0x01: (0x78 << 8 | 0x01) % 31 == 0.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = input.chunks(u16::MAX as usize).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = u8::from(chunks.peek().is_none());
        let length = chunk.len() as u16;
        out.push(last);
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(&(!length).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&adler32(input).to_be_bytes());
}

/// Adler-32 (RFC 1950 §8.2), summed in runs short enough not to overflow.
fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for run in bytes.chunks(5_552) {
        for &byte in run {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// The crate's way: a full-range copy (when the histogram fits one),
/// serialized afresh.
fn slow_encoding(histogram: &LatencyHistogram, digits: u8) -> String {
    let canonical = Histogram::new_with_bounds(1, MAX_TRACKED_US, digits)
        .ok()
        .and_then(|mut full| full.add(histogram).ok().map(|()| full));
    let source = canonical.as_ref().unwrap_or(histogram);
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(source, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
        Err(_) => String::new(),
    }
}

thread_local! {
    /// Each thread's encoder: the aggregator's, for the per-second
    /// histograms and the interval log.
    static ENCODER: RefCell<HistogramEncoder> = RefCell::new(HistogramEncoder::new());
}

/// [`HistogramEncoder::encode_into`] with this thread's encoder.
pub(crate) fn encode_with_thread_encoder(
    histogram: &LatencyHistogram,
    digits: u8,
    out: &mut String,
) {
    ENCODER.with(|encoder| match encoder.try_borrow_mut() {
        Ok(mut encoder) => encoder.encode_into(histogram, digits, out),
        Err(_) => HistogramEncoder::new().encode_into(histogram, digits, out),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the crate's serializer writes of the full-range copy: the
    /// encoding before this encoder.
    fn reference(histogram: &LatencyHistogram, digits: u8) -> String {
        slow_encoding(histogram, digits)
    }

    fn spread(seed: u64, n: usize, top: u64) -> LatencyHistogram {
        let mut h = crate::new_latency_histogram();
        let mut x = seed;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Log-uniform from 1 µs to `top`.
            let exp = (x % 10_000) as f64 / 10_000.0 * (top as f64).ln();
            h.record(exp.exp() as u64).unwrap();
        }
        h
    }

    #[test]
    fn writes_the_same_text_as_the_crates_serializer_of_the_full_range() {
        let mut encoder = HistogramEncoder::new();
        let mut cases = vec![
            crate::new_latency_histogram(),
            spread(1, 1, 100),
            spread(2, 5_000, 30_000),
            spread(3, 100_000, MAX_TRACKED_US),
            spread(4, 20, 2_000_000),
        ];
        let mut one_hour = crate::new_latency_histogram();
        one_hour.record(MAX_TRACKED_US).unwrap();
        cases.push(one_hour);
        // Twice, so that kept state (deflate, buffers, the empty text)
        // gives what a fresh one does.
        for round in 0..2 {
            for (i, h) in cases.iter().enumerate() {
                let mut text = String::from("prefix:");
                encoder.encode_into(h, 3, &mut text);
                assert_eq!(
                    text,
                    format!("prefix:{}", reference(h, 3)),
                    "case {i}, round {round}"
                );
            }
        }
    }

    #[test]
    fn stored_blocks_decode_to_the_same_histogram() {
        let mut stored = HistogramEncoder::stored();
        let mut deflated = HistogramEncoder::new();
        let big = spread(5, 200_000, MAX_TRACKED_US);
        for h in [crate::new_latency_histogram(), spread(6, 300, 20_000), big] {
            let (mut a, mut b) = (String::new(), String::new());
            stored.encode_into(&h, 3, &mut a);
            deflated.encode_into(&h, 3, &mut b);
            let (a, b) = (
                crate::decode_histogram(&a).unwrap(),
                crate::decode_histogram(&b).unwrap(),
            );
            assert_eq!(a, b);
            assert_eq!(a.len(), h.len());
        }
        // The checksum of zlib's own test vector ("Wikipedia").
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        // More than one block: 70,000 bytes are two.
        let mut two = Vec::new();
        store_into(&vec![7; 70_000], &mut two);
        let mut back = Vec::new();
        let mut inflate = flate2::Decompress::new(true);
        back.reserve(80_000);
        inflate
            .decompress_vec(&two, &mut back, flate2::FlushDecompress::Finish)
            .unwrap();
        assert_eq!(back, vec![7; 70_000]);
    }

    #[test]
    fn a_histogram_outside_the_canonical_form_keeps_the_old_way() {
        let mut beyond = Histogram::<u64>::new(3).unwrap();
        beyond.record(2 * MAX_TRACKED_US).unwrap();
        let mut two_digits = Histogram::<u64>::new(2).unwrap();
        two_digits.record(1_234).unwrap();
        let mut encoder = HistogramEncoder::new();
        for (h, digits) in [(&beyond, 3), (&two_digits, 3), (&two_digits, 2)] {
            let mut text = String::new();
            encoder.encode_into(h, digits, &mut text);
            assert_eq!(text, reference(h, digits));
            let back = crate::decode_histogram(&text).unwrap();
            assert_eq!(back.len(), 1);
        }
    }
}
