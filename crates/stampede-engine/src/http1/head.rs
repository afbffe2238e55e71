//! The HTTP/1.x response head parser: the status line and the header lines,
//! reporting only what body framing needs (head length, status, minor version,
//! and the values of Content-Length, Transfer-Encoding and Connection).
//!
//! Why it exists: it replaced httparse on the request path. callgrind on a
//! keep-alive run against nginx (515-byte page, ~8 headers) put httparse at
//! ~1,600 of the ~4,500 user-space instructions per request, largely spent
//! building a name/value pair for every header when three are looked at.
//! This parser scans names and values 8 bytes at a time (SWAR over a u64),
//! looks up only the odd byte in a token table, and stores nothing. Against
//! nginx (8 headers) it brought `ResponseParser::advance` from ~2,735 to
//! ~1,510 instructions per response, and the client from ~3,900 to ~2,670
//! per request on its event-loop thread (callgrind, 20,000 requests).
//!
//! It accepts and rejects what httparse 1.x does with its default
//! `ParserConfig` (the differential tests below check that against httparse):
//!
//! - empty lines before the status line are skipped and count in the head;
//! - the version is exactly `HTTP/1.0` or `HTTP/1.1`, then one space and three
//!   digits; the reason phrase (HTAB, SP, VCHAR, obs-text) may be absent;
//! - header names are RFC 9110 tokens followed directly by `:`: whitespace
//!   before the colon or before a line's first name (which also rules out
//!   obs-fold continuation lines) is an error;
//! - values hold HTAB, SP, VCHAR and obs-text: any other control byte or DEL
//!   is an error; leading and trailing SP/HTAB are not part of the value;
//! - lines end in CRLF or a bare LF; a CR followed by anything else is an error;
//! - more than [`MAX_HEADERS`] headers is an error, seen (as httparse sees it)
//!   only once the extra header line is complete.
//!
//! A bad byte is an error as soon as it is seen, even in an incomplete head;
//! an incomplete head without one is "need more".

/// Header lines accepted per head; one more makes the head invalid.
pub(super) const MAX_HEADERS: usize = 100;

/// A header whose value the response framing depends on, or whose
/// presence decides whether a kept body needs decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    ContentLength,
    TransferEncoding,
    Connection,
    ContentEncoding,
}

/// A complete head: its length (including any leading empty lines) and its
/// status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Head {
    pub len: usize,
    pub status: u16,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
}

/// The bytes are not a valid HTTP/1.x response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Invalid;

/// Parses the head at the start of `input`: `Ok(None)` when it is not all
/// there yet. `on_field` gets the value of every Content-Length,
/// Transfer-Encoding and Connection header, in order, as they are parsed, so
/// also for heads that turn out incomplete or invalid.
// Out of line: inlined into `ResponseParser::advance`, its loops lost
// registers to the caller's state and ran ~10% more instructions (callgrind).
#[inline(never)]
pub(super) fn parse(
    input: &[u8],
    mut on_field: impl FnMut(Field, &[u8]),
) -> Result<Option<Head>, Invalid> {
    match head(input, &mut on_field) {
        Ok(head) => Ok(Some(head)),
        Err(Stop::Partial) => Ok(None),
        Err(Stop::Invalid) => Err(Invalid),
    }
}

/// Why parsing stopped short of a complete head.
enum Stop {
    Partial,
    Invalid,
}

type Step<T> = Result<T, Stop>;

// The parser works on the rest of the input as a slice, which it shortens
// as it goes: that keeps bounds checks to one per step.

fn head(input: &[u8], on_field: &mut impl FnMut(Field, &[u8])) -> Step<Head> {
    let rest = skip_empty_lines(input)?;
    let (minor_version, status, mut rest) = status_line(rest)?;
    let mut headers = 0;
    loop {
        let (name, after_colon) = match header_name(rest)? {
            Name::Header { name, after_colon } => (name, after_colon),
            Name::EndOfHead(line_end) => {
                let len = input.len() - after_line_end(line_end)?.len();
                return Ok(Head {
                    len,
                    status,
                    minor_version,
                });
            }
        };
        let value;
        (value, rest) = split_value_line(after_colon)?;
        if headers == MAX_HEADERS {
            return Err(Stop::Invalid);
        }
        headers += 1;
        if let Some(field) = field(name) {
            // Blanks around a value are value bytes to the scan; they are
            // trimmed only from the values that are reported.
            on_field(field, trim_blanks(value));
        }
    }
}

/// What follows the line ending (CRLF or bare LF) that `bytes` starts with.
fn after_line_end(bytes: &[u8]) -> Step<&[u8]> {
    match bytes {
        [b'\r', b'\n', rest @ ..] | [b'\n', rest @ ..] => Ok(rest),
        [] | [b'\r'] => Err(Stop::Partial),
        _ => Err(Stop::Invalid),
    }
}

/// Where the status line starts: httparse tolerates empty lines before it
/// (RFC 9112 §2.2 says a client may), so this does too.
fn skip_empty_lines(mut rest: &[u8]) -> Step<&[u8]> {
    loop {
        match rest {
            [] => return Err(Stop::Partial),
            [b'\r' | b'\n', ..] => rest = after_line_end(rest)?,
            _ => return Ok(rest),
        }
    }
}

/// Parses `HTTP/1.x NNN reason` and its line ending: (minor version,
/// status, what follows).
fn status_line(line: &[u8]) -> Step<(u8, u16, &[u8])> {
    let (minor_version, rest) = version(line)?;
    let (status, rest) = match rest {
        [b' ', hundreds @ b'0'..=b'9', tens @ b'0'..=b'9', ones @ b'0'..=b'9', rest @ ..] => {
            let digit = |d: &u8| u16::from(d - b'0');
            (digit(hundreds) * 100 + digit(tens) * 10 + digit(ones), rest)
        }
        _ => return Err(short_or_bad_code(rest)),
    };
    // The reason phrase may be absent (and the space before it too): the
    // line may end right after the code.
    let rest = match rest {
        [b' ', reason @ ..] => &reason[value_len(reason, 0)..],
        _ => rest,
    };
    Ok((minor_version, status, after_line_end(rest)?))
}

/// The minor version of the `HTTP/1.x` that `line` starts with, and what
/// follows it.
fn version(line: &[u8]) -> Step<(u8, &[u8])> {
    const HTTP_1_0: u64 = u64::from_le_bytes(*b"HTTP/1.0");
    const HTTP_1_1: u64 = u64::from_le_bytes(*b"HTTP/1.1");
    match line.split_first_chunk::<8>() {
        Some((word, rest)) => match u64::from_le_bytes(*word) {
            HTTP_1_0 => Ok((0, rest)),
            HTTP_1_1 => Ok((1, rest)),
            _ => Err(Stop::Invalid),
        },
        // Short input: wait only if it can still become a version.
        None if b"HTTP/1.".starts_with(line) => Err(Stop::Partial),
        None => Err(Stop::Invalid),
    }
}

/// Why `rest` does not start with ` NNN`: more is needed when the bytes
/// there fit the pattern, so far.
fn short_or_bad_code(rest: &[u8]) -> Stop {
    let fits = |(i, b): (usize, &u8)| {
        if i == 0 {
            *b == b' '
        } else {
            b.is_ascii_digit()
        }
    };
    if rest.len() < 4 && rest.iter().enumerate().all(fits) {
        Stop::Partial
    } else {
        Stop::Invalid
    }
}

/// How a line in the header section starts.
enum Name<'a> {
    /// A header name and its colon.
    Header {
        name: &'a [u8],
        after_colon: &'a [u8],
    },
    /// No name but a line ending: the empty line that ends the head.
    EndOfHead(&'a [u8]),
}

/// Reads the header name at the start of `line`: a run of token bytes and a
/// colon. Running out of input first means more is needed.
fn header_name(line: &[u8]) -> Step<Name<'_>> {
    let mut rest = line;
    loop {
        // Names are nearly all letters: 8 at a time, with the table for the
        // first other byte (`-`, or the colon).
        if let Some((word, tail)) = rest.split_first_chunk::<8>() {
            let others = not_letter(u64::from_le_bytes(*word));
            if others == 0 {
                rest = tail;
                continue;
            }
            rest = &rest[first_flagged(others)..];
        }
        let name_len = line.len() - rest.len();
        match rest {
            [b':', after_colon @ ..] if name_len > 0 => {
                let name = &line[..name_len];
                return Ok(Name::Header { name, after_colon });
            }
            [b, tail @ ..] if TOKEN[usize::from(*b)] => rest = tail,
            [b'\r' | b'\n', ..] if name_len == 0 => return Ok(Name::EndOfHead(rest)),
            [] => return Err(Stop::Partial),
            _ => return Err(Stop::Invalid),
        }
    }
}

/// Which of the [`Field`]s `name` is, if any.
fn field(name: &[u8]) -> Option<Field> {
    // Dispatch on the name's length first: most headers match none of the
    // three, and a length compare is cheaper than a case-folding one.
    match name.len() {
        10 if same_name(name, b"connection") => Some(Field::Connection),
        14 if same_name(name, b"content-length") => Some(Field::ContentLength),
        16 if same_name(name, b"content-encoding") => Some(Field::ContentEncoding),
        17 if same_name(name, b"transfer-encoding") => Some(Field::TransferEncoding),
        _ => None,
    }
}

/// Whether the header name `name` (all token bytes) equals `lower`
/// (lowercase letters and `-`, at least 8 bytes, as long as `name`) ignoring
/// case, compared 8 bytes at a time with an overlapping last word.
fn same_name(name: &[u8], lower: &[u8]) -> bool {
    // Setting bit 0x20 lowercases ASCII letters. It can also turn a byte
    // into `-` only from CR, which no name holds, and into a letter only
    // from that letter's uppercase form, so on token bytes it is exact.
    debug_assert!(lower.len() >= 8 && name.len() == lower.len());
    let word = |bytes: &[u8], at: usize| {
        let chunk = bytes[at..]
            .first_chunk::<8>()
            .expect("8 bytes at a checked offset");
        u64::from_le_bytes(*chunk)
    };
    let last = lower.len() - 8;
    let mut at = 0;
    while at < last {
        if word(name, at) | CASE_BITS != word(lower, at) {
            return false;
        }
        at += 8;
    }
    word(name, last) | CASE_BITS == word(lower, last)
}

/// RFC 9110 tchar: `!#$%&'*+-.^_`|~`, digits and letters.
static TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8,
            b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z'
            | b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+'
            | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~');
        b += 1;
    }
    table
};

fn trim_blanks(mut value: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = value {
        value = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = value {
        value = rest;
    }
    value
}

/// Splits what follows a header's colon into the value (untrimmed) and what
/// follows the line ending after it.
fn split_value_line(after_colon: &[u8]) -> Step<(&[u8], &[u8])> {
    let (value, line_end) = after_colon.split_at(ascii_value_len(after_colon));
    // CRLF, the usual ending, checked in one go.
    if let Some((b"\r\n", next)) = line_end.split_first_chunk::<2>() {
        return Ok((value, next));
    }
    split_value_line_slowly(after_colon, value.len())
}

/// [`split_value_line`] for lines that do not end in CRLF right after the
/// printable ASCII: bare LF, HTAB or obs-text in the value, errors.
// Out of line, so that its scan does not weigh on the common one.
#[cold]
#[inline(never)]
fn split_value_line_slowly(after_colon: &[u8], from: usize) -> Step<(&[u8], &[u8])> {
    let (value, line_end) = after_colon.split_at(value_len(after_colon, from));
    Ok((value, after_line_end(line_end)?))
}

/// Length of the run of printable ASCII that `bytes` starts with: all of a
/// header value, up to its CR, nearly always.
fn ascii_value_len(bytes: &[u8]) -> usize {
    let mut rest = bytes;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let flagged = control_del_or_high(u64::from_le_bytes(*word));
        if flagged != 0 {
            return bytes.len() - rest.len() + first_flagged(flagged);
        }
        rest = tail;
    }
    value_len_bytewise(bytes, bytes.len() - rest.len())
}

/// Length of the run of bytes allowed in a header value or reason phrase
/// (HTAB, SP, VCHAR, obs-text) that `bytes` starts with, knowing that the
/// first `from` bytes are: up to the line's CR or LF when the line is valid.
fn value_len(bytes: &[u8], from: usize) -> usize {
    let mut rest = &bytes[from..];
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let stops = not_value(u64::from_le_bytes(*word));
        if stops != 0 {
            return bytes.len() - rest.len() + first_flagged(stops);
        }
        rest = tail;
    }
    value_len_bytewise(bytes, bytes.len() - rest.len())
}

/// [`value_len`] from `at` on, a byte at a time: for the last few bytes.
fn value_len_bytewise(bytes: &[u8], at: usize) -> usize {
    let mut rest = &bytes[at..];
    while let [b, tail @ ..] = rest {
        if !is_value_byte(*b) {
            break;
        }
        rest = tail;
    }
    bytes.len() - rest.len()
}

fn is_value_byte(b: u8) -> bool {
    b == b'\t' || (b' '..0x7f).contains(&b) || b >= 0x80
}

// Word-at-a-time byte classes: 8 bytes of input as a u64, first byte lowest.
// Each flags bytes by setting their bit 7, and only its lowest flag is to be
// trusted: a borrow or carry leaves a byte only from a flagged byte, so it
// can change flags above the first one but never the first itself. Callers
// look at the first flagged byte and decide from it.

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = ONES * 0x80;
/// Bit 0x20 of every byte: the one that tells ASCII letters' cases apart.
const CASE_BITS: u64 = ONES * 0x20;

/// Index of the first flagged byte of a nonzero class result.
fn first_flagged(flags: u64) -> usize {
    flags.trailing_zeros() as usize / 8
}

/// Flags control bytes (below 0x20: HTAB, CR and LF among them), DEL and
/// bytes 0x80 and above.
fn control_del_or_high(word: u64) -> u64 {
    // Below 0x20 wraps the subtraction to 0xe0 and above; DEL plus one is
    // 0x80; high bytes have bit 7 already. Printable ASCII sets none.
    (word.wrapping_sub(ONES * 0x20) | word.wrapping_add(ONES) | word) & HIGH
}

/// Flags the bytes a header value cannot hold: control bytes other than
/// HTAB, and DEL. Slower than [`control_del_or_high`], and exact for every
/// byte: it masks bit 7 off first, so no sum leaves its byte.
fn not_value(word: u64) -> u64 {
    let low = word & !HIGH;
    let high = word & HIGH;
    let below_space = !((low + ONES * 0x60) | high);
    let del = (low + ONES) & !high;
    let tab = !(((low ^ (ONES * u64::from(b'\t'))) + ONES * 0x7f) | high);
    ((below_space & !tab) | del) & HIGH
}

/// Flags bytes that are not ASCII letters.
fn not_letter(word: u64) -> u64 {
    // Setting bit 0x20 maps both cases of a letter to the lowercase one,
    // 0x61..=0x7a: below that wraps the subtraction, above it the addition
    // reaches 0x80, and high bytes have bit 7 already.
    let lower = word | CASE_BITS;
    (lower.wrapping_sub(ONES * 0x61) | lower.wrapping_add(ONES * 0x05) | word) & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a parser made of some bytes, in terms both parsers can give.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Verdict {
        Partial,
        Invalid,
        Complete {
            len: usize,
            status: u16,
            minor_version: u8,
            fields: Vec<(Field, Vec<u8>)>,
        },
    }

    fn ours(input: &[u8]) -> Verdict {
        let mut fields = Vec::new();
        match parse(input, |field, value| fields.push((field, value.to_vec()))) {
            Ok(Some(head)) => Verdict::Complete {
                len: head.len,
                status: head.status,
                minor_version: head.minor_version,
                fields,
            },
            Ok(None) => Verdict::Partial,
            Err(Invalid) => Verdict::Invalid,
        }
    }

    /// The reference: httparse with its default config and as many header
    /// slots as we allow headers, as the client used before this parser.
    fn httparse(input: &[u8]) -> Verdict {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let len = match httparse::ParserConfig::default().parse_response(&mut response, input) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Verdict::Partial,
            Err(_) => return Verdict::Invalid,
        };
        let names = [
            ("content-length", Field::ContentLength),
            ("transfer-encoding", Field::TransferEncoding),
            ("connection", Field::Connection),
            ("content-encoding", Field::ContentEncoding),
        ];
        let fields = response
            .headers
            .iter()
            .filter_map(|header| {
                let (_, field) = names
                    .iter()
                    .find(|(name, _)| header.name.eq_ignore_ascii_case(name))?;
                Some((*field, header.value.to_vec()))
            })
            .collect();
        Verdict::Complete {
            len,
            status: response.code.expect("complete"),
            minor_version: response.version.expect("complete"),
            fields,
        }
    }

    fn assert_agree(input: &[u8]) {
        assert_eq!(
            ours(input),
            httparse(input),
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }

    /// Both parsers agree on `input` and on every prefix of it.
    fn assert_agree_on_prefixes(input: &[u8]) {
        for end in 0..=input.len() {
            assert_agree(&input[..end]);
        }
    }

    const SAMPLE: &[u8] = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Length: 515\r\n\
        Transfer-Encoding: chunked\r\nConnection: keep-alive\r\nContent-Encoding: gzip\r\n\
        X-A:\tb c \r\n\r\nbody";

    #[test]
    fn a_typical_head() {
        assert_eq!(
            ours(SAMPLE),
            Verdict::Complete {
                len: SAMPLE.len() - 4,
                status: 200,
                minor_version: 1,
                fields: vec![
                    (Field::ContentLength, b"515".to_vec()),
                    (Field::TransferEncoding, b"chunked".to_vec()),
                    (Field::Connection, b"keep-alive".to_vec()),
                    (Field::ContentEncoding, b"gzip".to_vec()),
                ],
            }
        );
        assert_agree_on_prefixes(SAMPLE);
    }

    /// Every byte value in every position of a head, replacing the byte
    /// there or inserted before it: covers each byte class at each step.
    #[test]
    fn every_byte_everywhere() {
        let head = &SAMPLE[..SAMPLE.len() - 4];
        for at in 0..head.len() {
            for b in 0..=255u8 {
                let mut replaced = head.to_vec();
                replaced[at] = b;
                assert_agree(&replaced);
                let mut inserted = head.to_vec();
                inserted.insert(at, b);
                assert_agree(&inserted);
            }
        }
    }

    /// Cases httparse's documentation and options single out.
    #[test]
    fn documented_edge_cases() {
        for input in [
            &b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n Space-Before-Header: hello there\r\n\r\n",
            b"HTTP/1.1 200\r\n\r\n",
            b"HTTP/1.1 200 \r\n\r\n",
            b"HTTP/1.1  200 OK\r\n\r\n",
            b"HTTP/1.1 200  OK\r\n\r\n",
            b"\r\n\nHTTP/1.1 200 OK\r\n\r\n",
            b"\r\rHTTP/1.1 200 OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX:\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: \t \r\n\r\n",
            b"HTTP/1.1 200 OK\r\n:x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: caf\xc3\xa9\x7f\r\n\r\n",
            b"HTTP/1.1 200 \xff\xfe\r\n\r\n",
            b"HTTP/1.2 200 OK\r\n\r\n",
            b"HTTP/1.",
            b"HTTP/1.1 20",
        ] {
            assert_agree_on_prefixes(input);
        }
    }

    fn with_headers(count: usize, last_line_complete: bool) -> Vec<u8> {
        let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..count {
            head.extend_from_slice(format!("X-{i}: {i}\r\n").as_bytes());
        }
        if last_line_complete {
            head.extend_from_slice(b"\r\n");
        } else {
            head.truncate(head.len() - 2);
        }
        head
    }

    #[test]
    fn header_count_limit() {
        assert!(matches!(
            ours(&with_headers(MAX_HEADERS, true)),
            Verdict::Complete { .. }
        ));
        assert_eq!(ours(&with_headers(MAX_HEADERS + 1, true)), Verdict::Invalid);
        // Like httparse, the extra header is an error only once its line is in.
        assert_eq!(
            ours(&with_headers(MAX_HEADERS + 1, false)),
            Verdict::Partial
        );
        for count in [MAX_HEADERS - 1, MAX_HEADERS, MAX_HEADERS + 1] {
            assert_agree(&with_headers(count, true));
            assert_agree(&with_headers(count, false));
        }
    }

    /// A word-at-a-time byte class, and what it flags byte by byte.
    type Class = (fn(u64) -> u64, fn(u8) -> bool);

    const CLASSES: [Class; 3] = [
        (control_del_or_high, |b| !(b' '..0x7f).contains(&b)),
        (not_value, |b| !is_value_byte(b)),
        (not_letter, |b| !b.is_ascii_alphabetic()),
    ];

    /// Where a class puts its first flag in `bytes` must be the first byte
    /// in the class (the only flag callers trust).
    fn assert_first_flag_right(bytes: [u8; 8]) {
        for (class, flagged) in CLASSES {
            let flags = class(u64::from_le_bytes(bytes));
            let first = (flags != 0).then(|| first_flagged(flags));
            assert_eq!(first, bytes.iter().position(|b| flagged(*b)), "{bytes:?}");
        }
    }

    #[test]
    fn word_classes_flag_the_first_byte_in_them() {
        // Every byte in every position, among every other byte value.
        for b in 0..=255u8 {
            for filler in 0..=255u8 {
                for at in 0..8 {
                    let mut bytes = [filler; 8];
                    bytes[at] = b;
                    assert_first_flag_right(bytes);
                }
            }
        }
    }

    #[test]
    fn same_name_ignores_case_of_letters_only() {
        assert!(same_name(b"Content-Length", b"content-length"));
        assert!(same_name(b"CONTENT-LENGTH", b"content-length"));
        assert!(!same_name(b"Content_Length", b"content-length"));
        assert!(!same_name(b"Content^Length", b"content-length"));
        assert!(same_name(b"TrAnSfEr-EnCoDiNg", b"transfer-encoding"));
        assert!(!same_name(b"Transfer-Encodinh", b"transfer-encoding"));
        assert!(!same_name(b"Bonnection", b"connection"));
    }

    // Generators of heads. Each piece comes from a valid strategy or,
    // `sloppy` times in 10, from one that is often invalid in ways httparse
    // is strict about. Half of the heads have no sloppy pieces, so that many
    // heads are complete before `edits` break some of them.

    /// `sloppy` in 10 from `invalid`, the rest from `valid`.
    fn mostly<T: std::fmt::Debug + 'static>(
        sloppy: u32,
        valid: impl Strategy<Value = T> + 'static,
        invalid: impl Strategy<Value = T> + 'static,
    ) -> BoxedStrategy<T> {
        if sloppy == 0 {
            return valid.boxed();
        }
        prop_oneof![10 - sloppy => valid, sloppy => invalid].boxed()
    }

    fn version(sloppy: u32) -> BoxedStrategy<&'static [u8]> {
        mostly(
            sloppy,
            prop::sample::select(vec![&b"HTTP/1.1"[..], b"HTTP/1.0"]),
            prop::sample::select(vec![
                &b"HTTP/1.2"[..],
                b"HTTP/2.0",
                b"http/1.1",
                b"HTTP/1.1 ",
            ]),
        )
    }

    fn line_ending(sloppy: u32) -> BoxedStrategy<&'static [u8]> {
        mostly(
            sloppy,
            prop::sample::select(vec![&b"\r\n"[..], b"\r\n", b"\r\n", b"\n"]),
            prop::sample::select(vec![&b"\r"[..], b"\r\r\n", b"\n\r"]),
        )
    }

    fn status_line(sloppy: u32) -> impl Strategy<Value = Vec<u8>> {
        let code = mostly(sloppy, "[0-9]{3}", "[0-9]{0,4}|[0-9a-z ]{3}");
        let reason = mostly(
            sloppy,
            prop_oneof![Just(" OK".to_string()), "( [ -~\t\u{80}-\u{ff}]{0,20})?"],
            "[ \\t]{0,2}[\\x00-\\xff]{0,6}",
        );
        let space = mostly(
            sloppy,
            Just(" "),
            prop::sample::select(vec!["  ", "", "\t"]),
        );
        (version(sloppy), space, code, reason, line_ending(sloppy)).prop_map(
            |(version, space, code, reason, eol)| {
                [
                    version,
                    space.as_bytes(),
                    code.as_bytes(),
                    &latin1(&reason),
                    eol,
                ]
                .concat()
            },
        )
    }

    /// A string's chars as bytes, so `\u{80}`–`\u{ff}` in a regex give
    /// single obs-text bytes rather than two UTF-8 ones.
    fn latin1(s: &str) -> Vec<u8> {
        s.chars().map(|c| c as u32 as u8).collect()
    }

    fn name(sloppy: u32) -> BoxedStrategy<String> {
        let framing = prop::sample::select(vec![
            "Content-Length",
            "content-LENGTH",
            "Transfer-Encoding",
            "TRANSFER-encoding",
            "Connection",
            "cONNECTION",
        ])
        .prop_map(str::to_string);
        let near_misses = prop::sample::select(vec![
            "Content-Lengthy",
            "Content_Length",
            "Content^Length",
            "Connectio",
            "Connection2",
            "Transfer-Encodinh",
        ])
        .prop_map(str::to_string);
        mostly(
            sloppy,
            prop_oneof![
                3 => framing,
                1 => near_misses,
                3 => "[A-Za-z][A-Za-z0-9-]{0,15}",
                2 => "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}",
            ],
            "[\\x00-\\xff]{0,4}",
        )
    }

    fn value(sloppy: u32) -> BoxedStrategy<String> {
        mostly(
            sloppy,
            prop_oneof![
                3 => "[0-9]{1,4}",
                1 => " *[0-9]{1,3} *(, *[0-9]{1,3})?",
                2 => "(chunked|gzip, chunked|close|keep-alive|Keep-Alive|upgrade, close)",
                4 => "[ \t]{0,3}[ -~\t\u{80}-\u{ff}]{0,40}[ \t]{0,3}",
            ],
            "[\\x00-\\xff]{0,8}",
        )
    }

    fn header(sloppy: u32) -> impl Strategy<Value = Vec<u8>> {
        let colon = mostly(
            sloppy,
            Just(":"),
            prop::sample::select(vec![" :", "", "::", "\t:"]),
        );
        (name(sloppy), colon, value(sloppy), line_ending(sloppy)).prop_map(
            |(name, colon, value, eol)| {
                [&latin1(&name)[..], colon.as_bytes(), &latin1(&value), eol].concat()
            },
        )
    }

    /// Headers for a head: a few, or around the 100-header limit (valid
    /// ones there, so that the count is what decides).
    fn headers(sloppy: u32) -> impl Strategy<Value = Vec<Vec<u8>>> {
        prop_oneof![
            10 => proptest::collection::vec(header(sloppy), 0..10),
            1 => proptest::collection::vec(header(sloppy), 95..106),
            1 => (95usize..106).prop_map(|count| vec![b"X: y\r\n".to_vec(); count]),
        ]
    }

    fn head(sloppy: u32) -> impl Strategy<Value = Vec<u8>> {
        let empty_lines = proptest::collection::vec(line_ending(sloppy), 0..3);
        let body = proptest::collection::vec(any::<u8>(), 0..20);
        (
            prop::bool::weighted(0.1),
            empty_lines,
            status_line(sloppy),
            headers(sloppy),
            line_ending(sloppy),
            body,
        )
            .prop_map(|(lead, empty_lines, status, headers, end, body)| {
                let mut out = Vec::new();
                if lead {
                    out.extend(empty_lines.concat());
                }
                out.extend(status);
                out.extend(headers.concat());
                out.extend_from_slice(end);
                out.extend(body);
                out
            })
    }

    /// A change to a head: a byte replaced, inserted or removed. Positions
    /// are taken modulo the head's length when applied.
    #[derive(Debug, Clone)]
    enum Edit {
        Replace(usize, u8),
        Insert(usize, u8),
        Remove(usize),
    }

    fn interesting_byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            3 => prop::sample::select(vec![
                b'\r', b'\n', b' ', b'\t', b':', 0, 0x7f, 0x80, 0xff, b'"', b'(', b'/', 0x0b, 0x0c,
            ]),
            1 => any::<u8>(),
        ]
    }

    fn edits() -> impl Strategy<Value = Vec<Edit>> {
        let edit = prop_oneof![
            (any::<usize>(), interesting_byte()).prop_map(|(at, b)| Edit::Replace(at, b)),
            (any::<usize>(), interesting_byte()).prop_map(|(at, b)| Edit::Insert(at, b)),
            any::<usize>().prop_map(Edit::Remove),
        ];
        prop_oneof![
            3 => Just(Vec::new()),
            2 => proptest::collection::vec(edit, 1..4),
        ]
    }

    fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
        for edit in edits {
            let len = bytes.len().max(1);
            match *edit {
                Edit::Replace(at, b) if !bytes.is_empty() => bytes[at % len] = b,
                Edit::Insert(at, b) => bytes.insert(at % (bytes.len() + 1), b),
                Edit::Remove(at) if !bytes.is_empty() => {
                    bytes.remove(at % len);
                }
                _ => {}
            }
        }
        bytes
    }

    proptest! {
        #[test]
        fn word_classes_flag_the_first_byte_in_random_words(
            bytes in prop::array::uniform8(prop_oneof![
                any::<u8>(),
                prop::sample::select(vec![0u8, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff, b'a', b'z', b'A', b'Z']),
            ])
        ) {
            assert_first_flag_right(bytes);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The new parser and httparse agree on heads with random pieces and
        /// random edits, whole, cut at a random point, and (when small) cut
        /// at every point.
        #[test]
        fn agrees_with_httparse(
            head in prop_oneof![2 => head(0), 1 => head(1), 1 => head(3)],
            edits in edits(),
            cut in any::<usize>(),
        ) {
            let input = apply(head, &edits);
            prop_assert_eq!(ours(&input), httparse(&input));
            let cut = &input[..cut % (input.len() + 1)];
            prop_assert_eq!(ours(cut), httparse(cut));
            if input.len() <= 400 {
                for end in 0..input.len() {
                    prop_assert_eq!(ours(&input[..end]), httparse(&input[..end]));
                }
            }
        }
    }
}
