//! Counters: a group's `counter = [...]`, a number that advances at each of
//! a virtual user's iterations (JMeter's Counter config element) or at each
//! `{{next NAME}}` rendered (JMeter's `${__counter}`), per user or shared by
//! all users of the group on this agent, written zero-padded. `{{NAME}}`
//! reads the value the user last got; it lives in the user's
//! [`VarStore`] like an extracted value, so reading costs
//! what reading any variable costs and a template without counters pays
//! nothing.

use crate::store::VarStore;
use std::sync::atomic::{AtomicI64, Ordering};

/// When a counter advances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Advance {
    /// At the start of each of the user's iterations (CounterConfig.iterationStart).
    #[default]
    Iteration,
    /// Each time a template renders `{{next NAME}}` (IterationCounter.execute).
    Use,
}

/// What a counter counts: its first value, its step, the value past which
/// it starts over, whether users share it, and how it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterSpec {
    /// The variable name templates read it by (`{{NAME}}`).
    pub name: String,
    /// The first value (`start`, default 0).
    pub start: i64,
    /// Added at each advance (`incr`, default 1; may be negative).
    pub incr: i64,
    /// Past this value the counter starts over at `start` (`i64::MAX`: never).
    pub end: i64,
    /// One sequence over all users' advances, not one per user.
    pub shared: bool,
    /// Written with at least this many digits, zero-padded (DecimalFormat `000`).
    pub width: usize,
    /// When it advances.
    pub advance: Advance,
}

impl CounterSpec {
    /// A per-user counter from `start` by 1, unbounded, advanced per iteration.
    pub fn new(name: &str, start: i64) -> CounterSpec {
        CounterSpec {
            name: name.to_string(),
            start,
            incr: 1,
            end: i64::MAX,
            shared: false,
            width: 0,
            advance: Advance::Iteration,
        }
    }
}

impl CounterSpec {
    /// `value` as DecimalFormat writes it with `width` zeros: the sign,
    /// then the digits padded to `width`.
    pub fn write<'b>(&self, value: i64, buffer: &'b mut [u8; 64]) -> &'b [u8] {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(value.unsigned_abs()).as_bytes();
        let mut len = 0;
        if value < 0 {
            buffer[0] = b'-';
            len = 1;
        }
        let pad = self.width.min(40).saturating_sub(digits.len());
        buffer[len..len + pad].fill(b'0');
        len += pad;
        buffer[len..len + digits.len()].copy_from_slice(digits);
        &buffer[..len + digits.len()]
    }

    /// `value` as [`write`](Self::write) writes it.
    pub fn text(&self, value: i64) -> String {
        let mut buffer = [0u8; 64];
        String::from_utf8_lossy(self.write(value, &mut buffer)).into_owned()
    }
}

/// A counter of one group, with the shared sequence's state; the
/// per-user state is in each user's [`VarStore`].
#[derive(Debug)]
pub struct Counter {
    /// What it counts.
    pub spec: CounterSpec,
    /// The user's [`VarStore`] slot holding the value it last got (`{{NAME}}`).
    slot: usize,
    /// The user's [`VarStore`] counter holding its next value (per user).
    state: usize,
    /// The shared sequence's next value; `i64::MIN` before the first, as
    /// CounterConfig's `globalCounter`.
    shared_next: AtomicI64,
}

/// A counter is itself: two are equal when they are the same one.
impl PartialEq for Counter {
    fn eq(&self, other: &Counter) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for Counter {}

impl Counter {
    pub(crate) fn new(spec: CounterSpec, slot: usize, state: usize) -> Counter {
        Counter {
            spec,
            slot,
            state,
            shared_next: AtomicI64::new(i64::MIN),
        }
    }

    /// The slot of the value the user last got (what `{{NAME}}` reads).
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// Advances the counter for the user owning `store`, keeps the value
    /// there for `{{NAME}}`, and appends it to `out` when given.
    pub fn advance(&self, store: &mut VarStore, out: Option<&mut Vec<u8>>) {
        let value = if self.spec.shared {
            self.next_shared()
        } else {
            self.next_per_user(store.counter(self.state, self.spec.start))
        };
        let mut text = [0u8; 64];
        let text = self.spec.write(value, &mut text);
        store.set(self.slot, text);
        if let Some(out) = out {
            out.extend_from_slice(text);
        }
    }

    /// CounterConfig.iterationStart, per user: the value is the current
    /// one; the next is `incr` on, back to `start` past `end` (Java's
    /// `long` wraps on overflow, so `wrapping_add`).
    fn next_per_user(&self, current: &mut i64) -> i64 {
        let value = *current;
        let next = value.wrapping_add(self.spec.incr);
        *current = if next > self.spec.end {
            self.spec.start
        } else {
            next
        };
        value
    }

    /// CounterConfig.iterationStart, shared: under its lock JMeter starts
    /// over at `start` when the counter is unset or past `end`, hands out
    /// the value, then adds `incr`; here one compare-and-swap does the same.
    fn next_shared(&self) -> i64 {
        let spec = &self.spec;
        let current = |stored: i64| {
            if stored == i64::MIN || stored > spec.end {
                spec.start
            } else {
                stored
            }
        };
        let stored = self
            .shared_next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |stored| {
                Some(current(stored).wrapping_add(spec.incr))
            })
            .unwrap_or_else(|stored| stored);
        current(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(spec: CounterSpec, users: usize, rounds: usize) -> Vec<Vec<String>> {
        let counter = Counter::new(spec, 0, 0);
        let mut stores: Vec<VarStore> = (0..users).map(|_| VarStore::new(1)).collect();
        let mut seen = vec![Vec::new(); users];
        for _ in 0..rounds {
            for (user, store) in stores.iter_mut().enumerate() {
                let mut out = Vec::new();
                counter.advance(store, Some(&mut out));
                assert_eq!(
                    store.get(0),
                    Some(&out[..]),
                    "{{NAME}} reads the last value"
                );
                seen[user].push(String::from_utf8(out).unwrap());
            }
        }
        seen
    }

    /// CounterConfig.java, iterationStart: per user, start 1 by 2 up to 6
    /// gives 1, 3, 5, then 1 again; format "000" pads to three digits.
    #[test]
    fn per_user_counters_wrap_past_end_and_pad() {
        let spec = CounterSpec {
            incr: 2,
            end: 6,
            width: 3,
            ..CounterSpec::new("n", 1)
        };
        let seen = values(spec, 2, 5);
        assert_eq!(seen[0], ["001", "003", "005", "001", "003"]);
        assert_eq!(seen[1], seen[0], "each user counts on its own");
    }

    /// CounterConfig.java, iterationStart: shared, one sequence over all
    /// users' advances, starting over past `end`.
    /// CounterConfig.java: `if (start > end) start = getStart()`, so `end`
    /// itself is handed out before the counter starts over.
    #[test]
    fn end_itself_is_a_value() {
        let spec = CounterSpec {
            end: 3,
            ..CounterSpec::new("n", 1)
        };
        assert_eq!(values(spec, 1, 5), [["1", "2", "3", "1", "2"]]);
    }

    /// A constant counter's text (jmeter maps one that does not move to
    /// it) is what `write` puts in a request: sign, then zero padding.
    #[test]
    fn text_is_the_written_value() {
        let spec = CounterSpec {
            width: 3,
            ..CounterSpec::new("n", 1)
        };
        assert_eq!(
            [spec.text(7), spec.text(-5), spec.text(1234)],
            ["007", "-005", "1234"]
        );
    }

    /// The value goes to the counter's own slot, the one `{{NAME}}` reads;
    /// and a counter equals only itself, whatever its spec.
    #[test]
    fn a_counter_keeps_its_value_in_its_slot_and_is_only_itself() {
        let counter = Counter::new(CounterSpec::new("n", 5), 2, 0);
        assert_eq!(counter.slot(), 2);
        let mut store = VarStore::new(3);
        counter.advance(&mut store, None);
        assert_eq!((store.get(0), store.get(2)), (None, Some(&b"5"[..])));
        let twin = Counter::new(CounterSpec::new("n", 5), 2, 0);
        assert!(counter == counter);
        assert!(counter != twin);
    }

    #[test]
    fn shared_counters_hand_out_one_sequence() {
        let spec = CounterSpec {
            end: 4,
            shared: true,
            ..CounterSpec::new("n", 0)
        };
        let seen = values(spec, 2, 3);
        assert_eq!(seen, [["0", "2", "4"], ["1", "3", "0"]]);
    }

    #[test]
    fn negative_values_keep_their_sign_before_the_padding() {
        let spec = CounterSpec {
            incr: -3,
            width: 2,
            ..CounterSpec::new("n", 2)
        };
        assert_eq!(values(spec, 1, 3)[0], ["02", "-01", "-04"]);
        let spec = CounterSpec {
            incr: i64::MAX,
            ..CounterSpec::new("n", i64::MAX)
        };
        // Java's long arithmetic wraps; MAX + MAX is -2.
        assert_eq!(
            values(spec, 1, 2)[0],
            [i64::MAX.to_string(), "-2".to_string()]
        );
    }
}
