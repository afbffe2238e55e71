//! Huffman decoding of HPACK string literals (RFC 7541 §5.2, Appendix B).
//!
//! The code is canonical: within one length, codes rise with the octet. So a
//! code of length `L` is recognised by comparing the next `L` bits with the
//! first code of that length and the number of codes of that length, and the
//! octet is found by rank. Codes of up to 9 bits (every octet common in
//! headers: digits, letters, most punctuation) are first looked up by the
//! next 9 bits in a 512-entry table (1 KiB); only longer ones take the
//! search over lengths. Without the table the search was 60% of the whole
//! client's instructions against nginx, whose values are Huffman-coded.

use super::huffman_codes::{CODES, LENGTHS};

const MAX_LEN: usize = 30;

/// Per code length: the first code, the number of codes and where their
/// octets start in `octets`.
struct Canonical {
    first: [u32; MAX_LEN + 1],
    count: [u32; MAX_LEN + 1],
    offset: [u32; MAX_LEN + 1],
    octets: [u8; 256],
}

const fn canonical() -> Canonical {
    let mut t = Canonical {
        first: [0; MAX_LEN + 1],
        count: [0; MAX_LEN + 1],
        offset: [0; MAX_LEN + 1],
        octets: [0; 256],
    };
    let mut next = 0usize;
    let mut len = 1usize;
    while len <= MAX_LEN {
        t.offset[len] = next as u32;
        let mut octet = 0usize;
        let mut seen = false;
        while octet < 256 {
            if LENGTHS[octet] as usize == len {
                if !seen {
                    t.first[len] = CODES[octet];
                    seen = true;
                }
                t.octets[next] = octet as u8;
                next += 1;
                t.count[len] += 1;
            }
            octet += 1;
        }
        len += 1;
    }
    t
}

static TABLE: Canonical = canonical();

/// Codes of this many bits or fewer are found in [`FAST`].
const FAST_BITS: usize = 9;

/// Per value of the next [`FAST_BITS`] bits: the octet whose code begins
/// them and that code's length in the high byte, or 0 (a longer code).
static FAST: [u16; 1 << FAST_BITS] = fast_table();

const fn fast_table() -> [u16; 1 << FAST_BITS] {
    let mut t = [0u16; 1 << FAST_BITS];
    let mut octet = 0usize;
    while octet < 256 {
        let len = LENGTHS[octet] as usize;
        if len <= FAST_BITS {
            let start = (CODES[octet] as usize) << (FAST_BITS - len);
            let mut i = 0usize;
            while i < 1 << (FAST_BITS - len) {
                t[start + i] = (octet as u16) | ((len as u16) << 8);
                i += 1;
            }
        }
        octet += 1;
    }
    t
}

/// Why a Huffman string was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HuffmanError {
    /// The string holds the end-of-string symbol, or padding of 8 bits or
    /// more, or padding that is not all ones (RFC 7541 §5.2).
    BadPadding,
}

/// Appends the octets `input` encodes to `out`.
pub fn decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    let t = &TABLE;
    // `acc` holds `bits` unread bits, right-aligned.
    let mut acc: u64 = 0;
    let mut bits: u32 = 0;
    let mut next = 0usize;
    loop {
        while bits <= 56 && next < input.len() {
            acc = (acc << 8) | u64::from(input[next]);
            bits += 8;
            next += 1;
        }
        if bits == 0 {
            return Ok(());
        }
        // The next 30 bits, left-aligned in a u32's low 30 bits; past the end
        // of the input they read as ones (what valid padding is).
        let window: u32 = if bits >= MAX_LEN as u32 {
            ((acc >> (bits - MAX_LEN as u32)) & 0x3fff_ffff) as u32
        } else {
            let shift = MAX_LEN as u32 - bits;
            (((acc << shift) | ((1u64 << shift) - 1)) & 0x3fff_ffff) as u32
        };
        let fast = FAST[(window >> (MAX_LEN - FAST_BITS)) as usize];
        if fast != 0 {
            let len = u32::from(fast >> 8);
            if len > bits {
                return end_of_input(acc, bits, next == input.len());
            }
            out.push(fast as u8);
            bits -= len;
            acc &= (1u64 << bits) - 1;
            continue;
        }
        let mut matched = false;
        for len in FAST_BITS + 1..=MAX_LEN {
            let code = window >> (MAX_LEN - len);
            let rank = code.wrapping_sub(t.first[len]);
            if rank < t.count[len] {
                if len as u32 > bits {
                    // Only padding (ones) is left, and it reads as part of a
                    // longer code: valid when shorter than 8 bits.
                    return end_of_input(acc, bits, next == input.len());
                }
                out.push(t.octets[(t.offset[len] + rank) as usize]);
                bits -= len as u32;
                acc &= (1u64 << bits) - 1;
                matched = true;
                break;
            }
        }
        if !matched {
            // Thirty ones: the end-of-string symbol, or padding of 8+ bits.
            return end_of_input(acc, bits, next == input.len());
        }
    }
}

/// Whether the `bits` left (up to 64) are valid padding: the input is all
/// read, fewer than 8 bits remain, all ones.
fn end_of_input(acc: u64, bits: u32, input_done: bool) -> Result<(), HuffmanError> {
    // Checked before the mask: `1 << 64` would overflow.
    if !input_done || bits >= 8 {
        return Err(HuffmanError::BadPadding);
    }
    let ones = (1u64 << bits) - 1;
    if acc & ones == ones {
        Ok(())
    } else {
        Err(HuffmanError::BadPadding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes with the same tables (tests only): the decoder's inverse.
    fn encode(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut acc: u64 = 0;
        let mut bits = 0u32;
        for &b in input {
            acc = (acc << LENGTHS[b as usize]) | u64::from(CODES[b as usize]);
            bits += u32::from(LENGTHS[b as usize]);
            while bits >= 8 {
                out.push((acc >> (bits - 8)) as u8);
                bits -= 8;
                acc &= (1u64 << bits) - 1;
            }
        }
        if bits > 0 {
            out.push(((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) as u8);
        }
        out
    }

    #[test]
    fn the_code_is_canonical() {
        // Within a length, each code is the previous one plus one, and each
        // length's first code follows the last of the shorter ones.
        let t = &TABLE;
        let mut code = 0u32;
        for len in 1..=MAX_LEN {
            code <<= 1;
            if t.count[len] > 0 {
                assert_eq!(t.first[len], code, "first code of length {len}");
            }
            for rank in 0..t.count[len] {
                let octet = t.octets[(t.offset[len] + rank) as usize];
                assert_eq!(CODES[octet as usize], code + rank);
            }
            code += t.count[len];
        }
    }

    #[test]
    fn every_octet_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        decode(&encode(&all), &mut out).unwrap();
        assert_eq!(out, all);
        for s in [
            &b"www.example.com"[..],
            b"no-cache",
            b"custom-key",
            b"",
            b"0",
            b"\xff\xfe",
        ] {
            let mut out = Vec::new();
            decode(&encode(s), &mut out).unwrap();
            assert_eq!(out, s);
        }
    }

    #[test]
    fn rfc7541_c4_1_www_example_com() {
        let mut out = Vec::new();
        decode(
            &[
                0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
            ],
            &mut out,
        )
        .unwrap();
        assert_eq!(out, b"www.example.com");
    }

    #[test]
    fn padding_of_a_byte_or_more_and_the_eos_symbol_are_refused() {
        // 'a' is 00011 (5 bits); padding of three ones is fine.
        let mut out = Vec::new();
        assert_eq!(decode(&[0b0001_1111], &mut out), Ok(()));
        assert_eq!(out, b"a");
        // 'a' then a whole byte of ones: padding of 11 bits.
        assert_eq!(
            decode(&[0b0001_1111, 0xff], &mut Vec::new()),
            Err(HuffmanError::BadPadding)
        );
        // Padding that is not all ones.
        assert_eq!(
            decode(&[0b0001_1110], &mut Vec::new()),
            Err(HuffmanError::BadPadding)
        );
        // Eight octets of ones or more: 64 bits held at once (found by the fuzzer).
        for n in 8..=12 {
            assert_eq!(
                decode(&vec![0xff; n], &mut Vec::new()),
                Err(HuffmanError::BadPadding),
                "{n} octets"
            );
        }
        // The end-of-string symbol itself (30 ones) followed by more.
        assert_eq!(
            decode(&[0xff, 0xff, 0xff, 0xfc, 0x00], &mut Vec::new()),
            Err(HuffmanError::BadPadding)
        );
    }
}
