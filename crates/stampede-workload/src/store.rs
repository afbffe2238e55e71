//! A virtual user's extracted values, by slot index (see [`Scope::add_extract`](crate::Scope::add_extract)),
//! and the next value of each of its per-user counters (counter.rs).

/// Values live as long as the virtual user; each slot's buffer is reused, so
/// refreshing a token of the same size does not allocate.
#[derive(Debug, Clone, Default)]
pub struct VarStore {
    values: Vec<Vec<u8>>,
    present: Vec<bool>,
    /// Per-user counters' next values, by counter; grown at a counter's
    /// first advance (None: not advanced yet).
    counters: Vec<Option<i64>>,
}

impl VarStore {
    /// A store with `slots` empty slots ([`Scope::extract_slots`](crate::Scope::extract_slots)).
    pub fn new(slots: usize) -> VarStore {
        VarStore {
            values: vec![Vec::new(); slots],
            present: vec![false; slots],
            counters: Vec::new(),
        }
    }

    /// Per-user counter `index`'s next value, `start` before its first advance.
    pub(crate) fn counter(&mut self, index: usize, start: i64) -> &mut i64 {
        if self.counters.len() <= index {
            self.counters.resize(index + 1, None);
        }
        self.counters[index].get_or_insert(start)
    }

    /// Stores `value` in `slot` (an extracted value); an unknown slot is ignored.
    pub fn set(&mut self, slot: usize, value: &[u8]) {
        if let (Some(buffer), Some(present)) =
            (self.values.get_mut(slot), self.present.get_mut(slot))
        {
            buffer.clear();
            buffer.extend_from_slice(value);
            *present = true;
        }
    }

    /// The value, or None before the extracting step has succeeded.
    pub fn get(&self, slot: usize) -> Option<&[u8]> {
        match self.present.get(slot) {
            Some(true) => self.values.get(slot).map(Vec::as_slice),
            _ => None,
        }
    }

    /// Forgets every value and counter (a new session), keeping the buffers.
    pub fn clear(&mut self) {
        self.present.iter_mut().for_each(|p| *p = false);
        self.counters.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_clear() {
        let mut store = VarStore::new(2);
        assert_eq!(store.get(0), None);
        store.set(1, b"abc");
        assert_eq!(store.get(1), Some(&b"abc"[..]));
        store.set(1, b"x");
        assert_eq!(store.get(1), Some(&b"x"[..]));
        store.set(9, b"ignored");
        store.clear();
        assert_eq!(store.get(1), None);
    }
}
