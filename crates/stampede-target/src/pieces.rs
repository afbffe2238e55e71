//! The pieces of a streamed body (`/sse`, `/stream`; event_stream.rs
//! makes them): when each is due and its bytes. A leaf, so that the
//! reply that carries them and the loops that send them need nothing else.

use std::time::{Duration, Instant};

/// What a stream has left to send; the connection drives it.
#[derive(Debug, Clone)]
pub(crate) struct Pieces {
    /// Server-sent events (else plain chunks).
    pub(crate) sse: bool,
    /// The next piece's number.
    pub(crate) next: u64,
    /// One past the last piece's number.
    pub(crate) end: u64,
    /// Pieces sent so far (the first has no gap).
    pub(crate) sent: u64,
    pub(crate) every: Duration,
    pub(crate) stall: Option<(u64, Duration)>,
    /// When the last piece was due: each is due its gap after the last,
    /// not after the last was written, so a late write does not push
    /// every later piece (the gaps' median stays the interval).
    pub(crate) last_due: Option<Instant>,
    /// Chunked coding around each piece (HTTP/1.1).
    pub(crate) chunked: bool,
}

impl Pieces {
    /// When the next piece is due and its bytes; `None` at the end.
    pub(crate) fn next_due(&mut self, now: Instant) -> Option<(Instant, Vec<u8>)> {
        let stalled = self.stall.is_some_and(|(at, _)| at == self.next);
        let (wait, piece) = self.next_piece()?;
        // The stall counts from the last write (`now`), so the gap is at
        // least the stall, whenever the last piece left.
        let due = match self.last_due {
            Some(_) if stalled => now + wait,
            Some(last) => last + wait,
            None => now,
        };
        self.last_due = Some(due);
        Some((due, piece))
    }

    /// The wait before the next piece and its bytes; `None` at the end.
    pub(crate) fn next_piece(&mut self) -> Option<(Duration, Vec<u8>)> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        let wait = match self.stall {
            Some((at, stall)) if at == i => stall,
            _ if self.sent == 0 => Duration::ZERO,
            _ => self.every,
        };
        self.next += 1;
        self.sent += 1;
        Some((wait, piece(self.sse, i)))
    }
}

/// The bytes of piece `i`.
fn piece(sse: bool, i: u64) -> Vec<u8> {
    if sse {
        format!("id: {i}\ndata: {i}\n\n").into_bytes()
    } else {
        format!("chunk {i}\n").into_bytes()
    }
}

/// Appends a piece, in a chunk when `chunked`.
pub(crate) fn push(out: &mut Vec<u8>, piece: &[u8], chunked: bool) {
    if chunked {
        crate::response::push_hex(out, piece.len() as u64);
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    } else {
        out.extend_from_slice(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_wait_then_stall_once() {
        let mut p = Pieces {
            sse: true,
            next: 0,
            end: 4,
            sent: 0,
            every: Duration::from_millis(10),
            stall: Some((2, Duration::from_millis(1000))),
            last_due: None,
            chunked: false,
        };
        let waits: Vec<u64> = std::iter::from_fn(|| p.next_piece())
            .map(|(w, _)| w.as_millis() as u64)
            .collect();
        assert_eq!(waits, [0, 10, 1000, 10]);
        p.next = 0;
        let t = Instant::now();
        let dues: Vec<Instant> = std::iter::from_fn(|| p.next_due(t))
            .map(|(d, _)| d)
            .collect();
        // Due from the last due time; the stall from the last write (`t`).
        let ms = |a: usize, b: usize| (dues[b] - dues[a]).as_millis();
        assert_eq!((ms(0, 1), ms(0, 2), ms(2, 3)), (10, 1000, 10));
        assert_eq!(piece(true, 7), b"id: 7\ndata: 7\n\n");
        assert_eq!(piece(false, 7), b"chunk 7\n");
    }
}
