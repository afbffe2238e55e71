//! The HPACK decoder (RFC 7541 §3, §6): a header block in, each field handed
//! to a callback as two byte slices, the dynamic table kept in step.
//!
//! Nothing is allocated per field once the decoder has warmed up: Huffman
//! strings are decoded into two scratch buffers it owns, and an entry evicted
//! from the dynamic table gives its buffers to the next entry inserted.

use std::collections::VecDeque;

use super::huffman;
use super::static_table::STATIC;

/// Why a header block was refused: each is a COMPRESSION_ERROR
/// (RFC 9113 §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HpackError {
    /// The block ends inside a field.
    Truncated,
    /// An integer longer than any valid one.
    IntegerOverflow,
    /// Index 0, or an index past the end of both tables.
    BadIndex,
    /// A Huffman string with bad padding or the end-of-string symbol.
    BadHuffman,
    /// A dynamic table size update after the first field, or above the size
    /// our SETTINGS allow.
    BadSizeUpdate,
}

/// An entry's size counts 32 octets of overhead (RFC 7541 §4.1).
const ENTRY_OVERHEAD: usize = 32;

#[derive(Default)]
struct Entry {
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Entry {
    fn size(&self) -> usize {
        self.name.len() + self.value.len() + ENTRY_OVERHEAD
    }
}

/// Where a decoded string lives until the callback sees it.
#[derive(Clone, Copy)]
enum Str {
    Static(&'static [u8]),
    /// Raw octets of the block: `start..end`.
    Block(usize, usize),
    /// The name (`true`) or value scratch buffer.
    Scratch(bool),
    /// The name of dynamic entry `i` (0 is the newest).
    DynamicName(usize),
    DynamicValue(usize),
}

/// The HPACK decoder of one connection.
pub struct Decoder {
    table: VecDeque<Entry>,
    /// Evicted entries, kept for their buffers.
    spare: Vec<Entry>,
    size: usize,
    /// The size the peer's encoder may use now (its last size update).
    max_size: usize,
    /// The ceiling our SETTINGS_HEADER_TABLE_SIZE allows.
    allowed: usize,
    name_scratch: Vec<u8>,
    value_scratch: Vec<u8>,
    /// Huffman strings decoded lately, by their coded octets.
    memo: HuffmanMemo,
}

/// Strings kept by [`HuffmanMemo`]: nginx sends its `server`, `date`,
/// `content-type`, `last-modified` and `etag` as Huffman literals with
/// incremental indexing on every response, the same octets each time
/// (the date changes once a second), and an entry's size counts its
/// decoded length, so each must be known decoded.
const MEMO_ENTRIES: usize = 16;

/// The last [`MEMO_ENTRIES`] Huffman strings decoded (coded octets, the
/// octets they decode to), replaced in turn: a string seen again is copied,
/// not decoded again (the same octets decode alike, and were valid).
#[derive(Default)]
struct HuffmanMemo {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    next: usize,
}

impl HuffmanMemo {
    /// Decodes `coded` into `out` (cleared first), from the memo when it
    /// holds it.
    fn decode(&mut self, coded: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
        out.clear();
        if let Some((_, decoded)) = self.entries.iter().find(|(c, _)| c.as_slice() == coded) {
            out.extend_from_slice(decoded);
            return Ok(());
        }
        huffman::decode(coded, out).map_err(|_| HpackError::BadHuffman)?;
        if self.entries.len() < MEMO_ENTRIES {
            self.entries.push((coded.to_vec(), out.clone()));
        } else {
            let (c, d) = &mut self.entries[self.next];
            c.clear();
            c.extend_from_slice(coded);
            d.clear();
            d.extend_from_slice(out);
            self.next = (self.next + 1) % MEMO_ENTRIES;
        }
        Ok(())
    }
}

impl Decoder {
    /// A decoder whose dynamic table may grow to `allowed` octets (the
    /// SETTINGS_HEADER_TABLE_SIZE we send; 4,096 by default).
    pub fn new(allowed: usize) -> Decoder {
        Decoder {
            table: VecDeque::new(),
            spare: Vec::new(),
            size: 0,
            max_size: allowed,
            allowed,
            name_scratch: Vec::new(),
            value_scratch: Vec::new(),
            memo: HuffmanMemo::default(),
        }
    }

    /// The dynamic table's size in octets (RFC 7541 §4.1).
    pub fn table_size(&self) -> usize {
        self.size
    }

    /// The dynamic table's entries, newest first (tests and diagnostics).
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.table.iter().map(|e| (&e.name[..], &e.value[..]))
    }

    /// Decodes one complete header block, calling `field(name, value)` for
    /// each field in order.
    pub fn decode(
        &mut self,
        block: &[u8],
        field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        self.decode_wanted(block, |_| true, field)
    }

    /// As [`Decoder::decode`], but a field the table does not keep (a
    /// literal without indexing or never indexed) whose name is not
    /// `wanted` is skipped: its value is neither decoded nor checked, nor
    /// handed to `field`. A client needs few fields of a response, and
    /// decoding Huffman-coded values it never reads (nginx's date,
    /// last-modified, etag) was most of its instructions per request.
    pub fn decode_wanted(
        &mut self,
        block: &[u8],
        wanted: impl Fn(&[u8]) -> bool,
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut at = 0;
        let mut fields_seen = false;
        while at < block.len() {
            let first = block[at];
            if first & 0x80 != 0 {
                // Indexed field (§6.1).
                let (index, used) = integer(&block[at..], 7)?;
                at += used;
                let (name, value) = self.indexed(index)?;
                self.emit(block, name, value, &mut field);
                fields_seen = true;
            } else if first & 0xc0 == 0x40 {
                // Literal with incremental indexing (§6.2.1).
                let (name, value, used) = self.literal(block, at, 6)?;
                at += used;
                self.emit(block, name, value, &mut field);
                self.insert(block, name, value);
                fields_seen = true;
            } else if first & 0xe0 == 0x20 {
                // Dynamic table size update (§6.3): only before the first field.
                let (size, used) = integer(&block[at..], 5)?;
                at += used;
                if fields_seen || size > self.allowed {
                    return Err(HpackError::BadSizeUpdate);
                }
                self.max_size = size;
                self.evict_to(size);
            } else {
                // Literal without indexing (0000) or never indexed (0001) (§6.2.2, §6.2.3).
                let (name, used) = self.literal_name(block, at, 4)?;
                at += used;
                if wanted(self.resolve(block, name)) {
                    let (value, n) = self.string(block, at, false)?;
                    at += n;
                    self.emit(block, name, value, &mut field);
                } else {
                    at += skip_string(block, at)?;
                }
                fields_seen = true;
            }
        }
        Ok(())
    }

    fn indexed(&self, index: usize) -> Result<(Str, Str), HpackError> {
        if index == 0 {
            return Err(HpackError::BadIndex);
        }
        if index <= STATIC.len() {
            let (n, v) = STATIC[index - 1];
            return Ok((Str::Static(n), Str::Static(v)));
        }
        let i = index - STATIC.len() - 1;
        if i >= self.table.len() {
            return Err(HpackError::BadIndex);
        }
        Ok((Str::DynamicName(i), Str::DynamicValue(i)))
    }

    /// A literal field at `block[at..]` whose name index has a `prefix`-bit
    /// prefix: its name, value and length.
    fn literal(
        &mut self,
        block: &[u8],
        at: usize,
        prefix: u8,
    ) -> Result<(Str, Str, usize), HpackError> {
        let (name, mut used) = self.literal_name(block, at, prefix)?;
        let (value, n) = self.string(block, at + used, false)?;
        used += n;
        Ok((name, value, used))
    }

    /// The name of a literal field at `block[at..]` (see
    /// [`Decoder::literal`]) and the octets up to its value.
    fn literal_name(
        &mut self,
        block: &[u8],
        at: usize,
        prefix: u8,
    ) -> Result<(Str, usize), HpackError> {
        let (index, mut used) = integer(&block[at..], prefix)?;
        let name = if index == 0 {
            let (s, n) = self.string(block, at + used, true)?;
            used += n;
            s
        } else {
            self.indexed(index)?.0
        };
        Ok((name, used))
    }

    /// A string literal (§5.2) at `block[at..]`: raw octets stay in the
    /// block, Huffman ones are decoded into a scratch buffer.
    fn string(
        &mut self,
        block: &[u8],
        at: usize,
        is_name: bool,
    ) -> Result<(Str, usize), HpackError> {
        let rest = block.get(at..).ok_or(HpackError::Truncated)?;
        let first = *rest.first().ok_or(HpackError::Truncated)?;
        let (len, used) = integer(rest, 7)?;
        let end = used.checked_add(len).ok_or(HpackError::Truncated)?;
        if end > rest.len() {
            return Err(HpackError::Truncated);
        }
        if first & 0x80 == 0 {
            return Ok((Str::Block(at + used, at + end), end));
        }
        let scratch = if is_name {
            &mut self.name_scratch
        } else {
            &mut self.value_scratch
        };
        self.memo.decode(&rest[used..end], scratch)?;
        Ok((Str::Scratch(is_name), end))
    }

    fn resolve<'a>(&'a self, block: &'a [u8], s: Str) -> &'a [u8] {
        match s {
            Str::Static(b) => b,
            Str::Block(start, end) => &block[start..end],
            Str::Scratch(true) => &self.name_scratch,
            Str::Scratch(false) => &self.value_scratch,
            Str::DynamicName(i) => &self.table[i].name,
            Str::DynamicValue(i) => &self.table[i].value,
        }
    }

    fn emit(&self, block: &[u8], name: Str, value: Str, field: &mut impl FnMut(&[u8], &[u8])) {
        field(self.resolve(block, name), self.resolve(block, value));
    }

    /// Adds `name: value` as the newest entry (§4.4): older entries are
    /// evicted to make room; an entry larger than the table empties it.
    fn insert(&mut self, block: &[u8], name: Str, value: Str) {
        let mut entry = self.spare.pop().unwrap_or_default();
        entry.name.clear();
        entry.value.clear();
        // Copy before evicting: the name may be an entry about to go.
        entry.name.extend_from_slice(self.resolve(block, name));
        entry.value.extend_from_slice(self.resolve(block, value));
        let size = entry.size();
        if size > self.max_size {
            self.evict_to(0);
            self.spare.push(entry);
            return;
        }
        self.evict_to(self.max_size - size);
        self.size += size;
        self.table.push_front(entry);
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size > limit {
            let Some(old) = self.table.pop_back() else {
                break;
            };
            self.size -= old.size();
            self.spare.push(old);
        }
    }
}

/// The octets of the string literal (§5.2) at `block[at..]`, read past
/// without decoding it.
fn skip_string(block: &[u8], at: usize) -> Result<usize, HpackError> {
    let rest = block.get(at..).ok_or(HpackError::Truncated)?;
    let (len, used) = integer(rest, 7)?;
    let end = used.checked_add(len).ok_or(HpackError::Truncated)?;
    if end > rest.len() {
        return Err(HpackError::Truncated);
    }
    Ok(end)
}

/// An integer with an `prefix`-bit prefix (§5.1): its value and length.
fn integer(input: &[u8], prefix: u8) -> Result<(usize, usize), HpackError> {
    let mask = (1usize << prefix) - 1;
    let first = *input.first().ok_or(HpackError::Truncated)?;
    let mut value = usize::from(first) & mask;
    if value < mask {
        return Ok((value, 1));
    }
    let mut shift = 0u32;
    for (i, &b) in input.iter().enumerate().skip(1) {
        // Five continuation octets hold 35 bits: beyond any size or index
        // a peer may honestly send.
        if shift > 28 {
            return Err(HpackError::IntegerOverflow);
        }
        value += usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(HpackError::Truncated)
}

#[cfg(test)]
#[path = "decoder_tests.rs"]
mod tests;
