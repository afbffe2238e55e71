//! A connection's reusable read buffer: bytes not yet consumed by the parser
//! stay between `start` and `end`; it grows only for heads larger than it.

use crate::http1::MAX_HEAD_BYTES;

/// Initial capacity: a typical response head plus some body fits in one read.
const INITIAL_CAPACITY: usize = 16 * 1024;

#[derive(Debug)]
pub struct ReadBuffer {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl Default for ReadBuffer {
    fn default() -> Self {
        ReadBuffer {
            data: vec![0; INITIAL_CAPACITY],
            start: 0,
            end: 0,
        }
    }
}

impl ReadBuffer {
    /// The bytes received and not yet consumed.
    pub fn pending(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    /// Marks `n` pending bytes as consumed.
    pub fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Forgets everything pending (the connection is being replaced).
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Free space to read into, making room first by moving pending bytes to
    /// the front or, for an oversized head, by growing (bounded by the head limit).
    pub fn spare(&mut self) -> &mut [u8] {
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

    /// Records that `n` bytes were read into [`ReadBuffer::spare`].
    pub fn filled(&mut self, n: usize) {
        self.end += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacts_then_grows() {
        let mut buffer = ReadBuffer::default();
        let capacity = buffer.spare().len();
        buffer.filled(capacity);
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
}
