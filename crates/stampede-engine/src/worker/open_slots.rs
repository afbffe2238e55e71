//! The open model's one dispatch rule, for every loop (the tokio pacer in
//! drive/open.rs, the reactors' drive/reactor/open_dispatch.rs, and so
//! HTTP/1.1, HTTP/2 and HTTP/3): a due request goes to the most recently
//! idle slot, else to a slot not used yet while under the cap, else into the
//! backlog (whose wait counts in latency, see pacer.rs). Most recently idle
//! first keeps the fewest connections warm. A slot is what carries one
//! request at a time: a connection over HTTP/1.1, a stream over HTTP/2 and
//! HTTP/3. I/O-free: the loops only carry out what it says.

/// Which slots are idle and how many were ever used.
#[derive(Debug, Default)]
pub(crate) struct OpenSlots {
    /// Idle slots (connection kept), most recently idle last.
    idle: Vec<usize>,
    /// Slots taken into use so far, from 0 (the rest never opened).
    used: usize,
}

/// Where a due request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination {
    /// An idle slot, already started.
    Idle(usize),
    /// A slot not used yet: the loop starts it with this request.
    New(usize),
    /// Every slot under the cap is busy: the request waits.
    Backlog,
}

impl OpenSlots {
    /// Where a due request goes, of `cap` slots at most; the slot it names
    /// is busy from now on.
    pub(crate) fn destination(&mut self, cap: usize) -> Destination {
        if let Some(index) = self.idle.pop() {
            return Destination::Idle(index);
        }
        if self.used < cap {
            self.used += 1;
            return Destination::New(self.used - 1);
        }
        Destination::Backlog
    }

    /// Slot `index` has nothing to do.
    pub(crate) fn went_idle(&mut self, index: usize) {
        self.idle.push(index);
    }

    /// The most recently idle slot, if any, now busy: for a job given
    /// back by a slot that cannot carry it.
    pub(crate) fn take_idle(&mut self) -> Option<usize> {
        self.idle.pop()
    }

    /// True when no slot could take a request now: none idle, all `cap`
    /// used. Then nothing can leave before an answer frees one, so a loop
    /// need not wake for the next instant.
    pub(crate) fn all_busy(&self, cap: usize) -> bool {
        self.idle.is_empty() && self.used >= cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_go_to_the_most_recently_idle_slot_then_new_ones_then_the_backlog() {
        let mut slots = OpenSlots::default();
        assert_eq!(slots.destination(2), Destination::New(0));
        assert_eq!(slots.destination(2), Destination::New(1));
        assert_eq!(slots.destination(2), Destination::Backlog);
        slots.went_idle(0);
        slots.went_idle(1);
        assert_eq!(slots.destination(2), Destination::Idle(1), "LIFO");
        assert_eq!(slots.destination(2), Destination::Idle(0));
        assert_eq!(slots.destination(2), Destination::Backlog);
    }

    #[test]
    fn all_busy_only_when_none_is_idle_and_the_cap_is_used() {
        let mut slots = OpenSlots::default();
        assert!(!slots.all_busy(1), "a slot not used yet");
        assert_eq!(slots.destination(1), Destination::New(0));
        assert!(slots.all_busy(1), "the only slot is busy");
        slots.went_idle(0);
        assert!(!slots.all_busy(1), "the slot is idle again");
    }
}
