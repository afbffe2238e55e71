//! A connection's reusable read buffer: bytes not yet consumed by the parser
//! stay between `start` and `end`. It is allocated on first use (idle slots
//! cost nothing), starts small so that many connections stay cheap, and grows
//! when reads keep filling it (large bodies) or a head does not fit.

use crate::http1::{ResponseError, ResponseParser, ResponseProgress, MAX_HEAD_BYTES};

/// First allocation: a typical response head plus a small page fits in one read.
const INITIAL_CAPACITY: usize = 4 * 1024;
/// Growth for bulk bodies stops here: larger reads save few syscalls.
const MAX_BULK_CAPACITY: usize = 64 * 1024;

#[derive(Debug, Default)]
pub(crate) struct ReadBuffer {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadBuffer {
    /// The bytes received and not yet consumed.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    /// Marks `n` pending bytes as consumed.
    pub(crate) fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Forgets everything pending (the connection is being replaced).
    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Free space to read into, making room first by moving pending bytes to
    /// the front or, for an oversized head, by growing (bounded by the head limit).
    pub(crate) fn spare(&mut self) -> &mut [u8] {
        if self.data.is_empty() {
            self.data.resize(INITIAL_CAPACITY, 0);
        }
        if self.end == self.data.len() {
            if self.start > 0 {
                self.data.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.data.len() <= MAX_HEAD_BYTES {
                self.data.resize(self.data.len() * 2, 0);
            }
        }
        &mut self.data[self.end..]
    }

    /// Parses what is pending, consuming what the parser used.
    pub(crate) fn parse_pending(
        &mut self,
        parser: &mut ResponseParser,
    ) -> Result<ResponseProgress, ResponseError> {
        let (used, progress) = parser.advance(self.pending())?;
        self.consume(used);
        Ok(progress)
    }

    /// Parses `fresh` bytes just read (into a worker's scratch buffer): on
    /// their own when nothing is pending, so that a whole response is never
    /// copied; after what is pending otherwise. Unconsumed bytes are kept.
    pub(crate) fn parse_read(
        &mut self,
        parser: &mut ResponseParser,
        fresh: &[u8],
    ) -> Result<ResponseProgress, ResponseError> {
        if self.pending().is_empty() {
            let (used, progress) = parser.advance(fresh)?;
            self.append(&fresh[used..]);
            return Ok(progress);
        }
        self.append(fresh);
        self.parse_pending(parser)
    }

    /// Keeps `bytes` after what is pending (bytes read into the worker's
    /// scratch buffer that the parser could not consume yet).
    pub(crate) fn append(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.data.len() - self.end < bytes.len() {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            let needed = self.end + bytes.len();
            if self.data.len() < needed {
                self.data.resize(needed.max(INITIAL_CAPACITY), 0);
            }
        }
        self.data[self.end..self.end + bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
    }

    /// Records that `n` bytes were read into [`ReadBuffer::spare`]. A read
    /// that filled the whole buffer means more is waiting: double it so that
    /// bulk bodies take fewer reads.
    pub(crate) fn filled(&mut self, n: usize) {
        if self.start == 0 && self.end == 0 && n == self.data.len() && n < MAX_BULK_CAPACITY {
            self.data.resize(n * 2, 0);
        }
        self.end += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_keeps_order_and_allocates_only_when_needed() {
        let mut buffer = ReadBuffer::default();
        buffer.append(b"");
        assert!(buffer.data.is_empty(), "nothing kept, nothing allocated");
        buffer.append(b"HTTP/1.1 2");
        buffer.consume(5);
        buffer.append(&[b'x'; 5000]);
        assert_eq!(&buffer.pending()[..5], b"1.1 2");
        assert_eq!(buffer.pending().len(), 5005);
    }

    #[test]
    fn compacts_then_grows() {
        let mut buffer = ReadBuffer::default();
        let capacity = buffer.spare().len();
        buffer.filled(capacity);
        assert_eq!(
            buffer.spare().len(),
            capacity,
            "a full read doubles the buffer"
        );
        buffer.filled(capacity);
        let capacity = 2 * capacity;
        buffer.consume(10);
        assert_eq!(
            buffer.spare().len(),
            10,
            "compaction frees the consumed prefix"
        );
        buffer.filled(10);
        assert_eq!(
            buffer.spare().len(),
            capacity,
            "a full buffer with nothing consumed grows"
        );
        buffer.consume(buffer.pending().len());
        assert_eq!(buffer.pending().len(), 0);
    }

    #[test]
    fn starts_at_four_kib_and_full_reads_double_it_up_to_sixty_four() {
        let mut buffer = ReadBuffer::default();
        let mut sizes = vec![buffer.spare().len()];
        // Full reads of an empty buffer, consumed at once (a bulk body).
        for _ in 0..6 {
            let n = buffer.spare().len();
            buffer.filled(n);
            buffer.consume(n);
            sizes.push(buffer.spare().len());
        }
        assert_eq!(sizes, [4096, 8192, 16384, 32768, 65536, 65536, 65536]);
    }

    #[test]
    fn append_past_the_end_compacts_or_grows_and_clear_forgets() {
        let mut buffer = ReadBuffer::default();
        let capacity = buffer.spare().len();
        buffer.filled(capacity - 10);
        buffer.consume(capacity - 20);
        // 10 bytes pending, 10 free at the end: 200 more must move or grow.
        buffer.append(&[b'y'; 200]);
        assert_eq!(buffer.pending().len(), 210);
        assert_eq!(&buffer.pending()[10..], &[b'y'; 200][..]);
        // Full to the last byte, then more than the whole buffer holds.
        let free = buffer.data.len() - buffer.end;
        buffer.append(&vec![b'z'; free]);
        buffer.append(&[b'w'; 5000]);
        assert_eq!(buffer.pending().len(), 210 + free + 5000);
        assert_eq!(buffer.pending().last(), Some(&b'w'));
        buffer.clear();
        assert!(buffer.pending().is_empty());
        assert_eq!(
            buffer.spare().len(),
            buffer.data.len(),
            "all of it free again"
        );
    }
}
