//! The JTL file in completion order, as JMeter writes it (each sample when
//! it ends, across all threads): the engine's workers hand their lines
//! over in per-worker batches (at least every snapshot interval, 250 ms),
//! so the writer holds each line until [`HOLD`] after its end has passed
//! and writes the held lines in order of their end (ties in arrival
//! order). Memory stays bounded: past [`MAX_HELD_BYTES`] the oldest held
//! lines are written at once (never dropped), which can only happen above
//! some 100,000 samples a second; a line that arrives after lines that
//! ended later were written (a worker stalled for longer than HOLD) is
//! written as it comes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long after its end a line waits for earlier ones still in a
/// worker's batch: several snapshot intervals, for a busy machine.
pub const HOLD: Duration = Duration::from_millis(1500);

/// Held lines beyond this many bytes are written oldest first.
const MAX_HELD_BYTES: usize = 16 << 20;

/// The file and the lines held back.
pub struct OrderedJtl {
    out: BufWriter<File>,
    /// (end in epoch ms, arrival number, the line).
    held: BinaryHeap<Reverse<(u64, u64, Vec<u8>)>>,
    held_bytes: usize,
    arrivals: u64,
    /// Emptied line buffers, reused.
    spare: Vec<Vec<u8>>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl OrderedJtl {
    pub fn new(out: BufWriter<File>) -> OrderedJtl {
        OrderedJtl {
            out,
            held: BinaryHeap::new(),
            held_bytes: 0,
            arrivals: 0,
            spare: Vec::new(),
        }
    }

    /// The header or other text written at once.
    pub fn write_now(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)
    }

    /// A line of a sample that ended at `end_ms`; writes the held lines
    /// whose time has come.
    pub fn push(&mut self, end_ms: u64, line: &[u8]) -> io::Result<()> {
        let mut owned = self.spare.pop().unwrap_or_default();
        owned.extend_from_slice(line);
        self.held_bytes += owned.len();
        self.arrivals += 1;
        self.held.push(Reverse((end_ms, self.arrivals, owned)));
        self.release_due()
    }

    /// Writes the lines that ended more than [`HOLD`] ago, and the oldest
    /// beyond the memory bound.
    pub fn release_due(&mut self) -> io::Result<()> {
        let due = now_ms().saturating_sub(HOLD.as_millis() as u64);
        self.release(due)
    }

    /// Writes every held line (the run is over) and flushes.
    pub fn drain(&mut self) -> io::Result<()> {
        self.release(u64::MAX)?;
        self.out.flush()
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn release(&mut self, due_ms: u64) -> io::Result<()> {
        while let Some(Reverse((end, _, _))) = self.held.peek() {
            if *end > due_ms && self.held_bytes <= MAX_HELD_BYTES {
                break;
            }
            let Some(Reverse((_, _, mut line))) = self.held.pop() else {
                break;
            };
            self.held_bytes -= line.len();
            self.out.write_all(&line)?;
            line.clear();
            if self.spare.len() < 1024 {
                self.spare.push(line);
            }
        }
        Ok(())
    }
}

impl Drop for OrderedJtl {
    /// A run that ended early (an error) still writes what it held.
    fn drop(&mut self) {
        let _ = self.drain();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_out_by_their_end_and_all_of_them() {
        let dir = stampede_testkit::temp_dir("jtl-order");
        let path = dir.join("o.jtl");
        let mut jtl = OrderedJtl::new(BufWriter::new(File::create(&path).unwrap()));
        jtl.write_now(b"header\n").unwrap();
        let now = now_ms();
        // Two workers' batches: each in order, interleaved in time.
        for (end, text) in [
            (now + 5, "a5"),
            (now + 9, "a9"),
            (now + 2, "b2"),
            (now + 7, "b7"),
        ] {
            jtl.push(end, format!("{text}\n").as_bytes()).unwrap();
        }
        // Long ended: written at once, before the recent ones.
        jtl.push(now - 10_000, b"old\n").unwrap();
        jtl.flush().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "header\nold\n");
        jtl.drain().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "header\nold\nb2\na5\nb7\na9\n"
        );
    }
}
