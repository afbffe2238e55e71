//! Writing slot values into a send buffer without allocating.

use super::Slot;
use crate::store::VarStore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// What one render may read: the counters of this request, the iteration's
/// feeder rows (one per feeder, in scope order), the virtual user's
/// extracted values and the worker's random generator.
pub struct RenderContext<'a> {
    /// The run-wide sequence number ([`Sequence::next`]).
    pub seq: u64,
    /// The connection (virtual user) number.
    pub conn: u64,
    /// This virtual user's iteration number.
    pub iter: u64,
    /// The worker (thread) number.
    pub worker: u32,
    /// The agent number, from 0 (`--agent I/N`).
    pub agent: u32,
    /// The row each feeder handed out for this iteration.
    pub rows: &'a [&'a [Box<[u8]>]],
    /// The user's extracted values and counters (`{{next NAME}}` advances one).
    pub vars: &'a mut VarStore,
    /// The worker's random generator (`{{uuid}}`, `{{rand_int ...}}`, `{{rand_str N}}`).
    pub rng: &'a mut fastrand::Rng,
}

impl RenderContext<'_> {
    pub(crate) fn write_slot(&mut self, slot: &Slot, out: &mut Vec<u8>) {
        let mut number = itoa::Buffer::new();
        match slot {
            Slot::Seq => out.extend_from_slice(number.format(self.seq).as_bytes()),
            Slot::Conn => out.extend_from_slice(number.format(self.conn).as_bytes()),
            // The user counted from 1, as JMeter's `${__threadNum}`.
            Slot::ThreadNum => out.extend_from_slice(number.format(self.conn + 1).as_bytes()),
            Slot::Iter => out.extend_from_slice(number.format(self.iter).as_bytes()),
            Slot::Worker => out.extend_from_slice(number.format(self.worker).as_bytes()),
            Slot::Agent => out.extend_from_slice(number.format(self.agent).as_bytes()),
            Slot::Uuid => {
                let bytes = self.rng.u128(..).to_le_bytes();
                let uuid = uuid::Builder::from_random_bytes(bytes).into_uuid();
                let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
                out.extend_from_slice(uuid.hyphenated().encode_lower(&mut text).as_bytes());
            }
            Slot::RandInt { low, high } => {
                let value = self.rng.i64(*low..=*high);
                out.extend_from_slice(number.format(value).as_bytes());
            }
            Slot::RandStr { len } => {
                out.extend((0..*len).map(|_| self.rng.alphanumeric() as u8));
            }
            Slot::NowMs => {
                let ms = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                out.extend_from_slice(number.format(ms).as_bytes());
            }
            Slot::NowIso => write_now_iso(out),
            Slot::Feed { feeder, column } => {
                if let Some(value) = self.rows.get(*feeder).and_then(|row| row.get(*column)) {
                    out.extend_from_slice(value);
                }
            }
            Slot::Extract { slot } => {
                if let Some(value) = self.vars.get(*slot) {
                    out.extend_from_slice(value);
                }
            }
            Slot::Next(counter) => counter.advance(self.vars, Some(out)),
        }
    }
}

/// `2026-12-01T10:45:22.123Z` (RFC 3339, UTC, milliseconds).
fn write_now_iso(out: &mut Vec<u8>) {
    let now = time::OffsetDateTime::from(SystemTime::now());
    let mut pad = |value: u32, width: usize, after: u8| {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(value).as_bytes();
        out.extend(std::iter::repeat_n(
            b'0',
            width.saturating_sub(digits.len()),
        ));
        out.extend_from_slice(digits);
        if after != 0 {
            out.push(after);
        }
    };
    pad(now.year().max(0) as u32, 4, b'-');
    pad(u8::from(now.month()) as u32, 2, b'-');
    pad(now.day() as u32, 2, b'T');
    pad(now.hour() as u32, 2, b':');
    pad(now.minute() as u32, 2, b':');
    pad(now.second() as u32, 2, b'.');
    pad(now.millisecond() as u32, 3, b'Z');
}

/// The run-wide `{{seq}}`: shared by the workers of one agent; agent I of N
/// hands out I, I+N, I+2N… so values stay unique across agents.
#[derive(Debug)]
pub struct Sequence {
    next: AtomicU64,
    agent: u64,
    agents: u64,
}

impl Sequence {
    /// `agent` counts from 0; `agents` is at least 1.
    pub fn new(agent: u32, agents: u32) -> Sequence {
        Sequence {
            next: AtomicU64::new(0),
            agent: u64::from(agent),
            agents: u64::from(agents.max(1)),
        }
    }

    /// The next number: I, I+N, I+2N… for agent I of N.
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) * self.agents + self.agent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_is_strided_per_agent() {
        let seq = Sequence::new(1, 3);
        assert_eq!([seq.next(), seq.next(), seq.next()], [1, 4, 7]);
        let alone = Sequence::new(0, 0);
        assert_eq!([alone.next(), alone.next()], [0, 1]);
    }
}
