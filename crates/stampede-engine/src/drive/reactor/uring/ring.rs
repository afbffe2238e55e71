//! One io_uring instance per worker, set up the way measured to
//! be cheapest: SINGLE_ISSUER + DEFER_TASKRUN (completions are delivered
//! when the worker asks for them, never by interrupting it; with default
//! flags every completion interrupts the task and the server's cost per
//! request doubles). Receives use a provided buffer ring: the kernel picks
//! a buffer per completion, the worker hands it back once parsed.

use io_uring::{cqueue, squeue, types, IoUring};
use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

/// The buffer group of the worker's receive buffers.
pub(super) const BUFFER_GROUP: u16 = 0;
/// Bytes per receive buffer: a typical response in one completion, bulk
/// bodies in few.
const BUFFER_BYTES: usize = 16 * 1024;
/// Submission queue entries; a fuller queue is submitted on the spot.
const SUBMISSION_ENTRIES: u32 = 1024;

/// A completion copied out of the queue, so that handling it may queue more.
#[derive(Debug, Clone, Copy)]
pub(super) struct Completion {
    pub user_data: u64,
    pub result: i32,
    pub flags: u32,
}

impl Completion {
    /// The provided buffer that holds the received bytes, if any.
    pub(super) fn buffer(&self) -> Option<u16> {
        cqueue::buffer_select(self.flags)
    }

    /// More completions of this (multishot) request follow.
    pub(super) fn more(&self) -> bool {
        cqueue::more(self.flags)
    }
}

pub(super) struct Ring {
    uring: RefCell<IoUring>,
    buffers: BufferRing,
}

impl Ring {
    /// A ring for a worker with `slots` connections.
    pub(super) fn new(slots: usize) -> io::Result<Ring> {
        let completions = (slots as u32).saturating_mul(4).clamp(4096, 65536);
        let uring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(completions)
            .build(SUBMISSION_ENTRIES)?;
        // Buffers go back after every batch, so the ring needs as many as
        // one wake-up brings responses: measured, about one per wake even at
        // 1000 connections. A quarter of the slots (64 to 1024) costs no
        // extra syscall there and a quarter of the memory (each buffer in use
        // holds a page); when they run out the kernel ends a multishot
        // receive (ENOBUFS) and the slot arms it again.
        let entries = (slots.next_power_of_two() / 4).clamp(64, 1024) as u16;
        let buffers = BufferRing::new(entries)?;
        // SAFETY: the ring memory lives in `buffers`, which the Ring owns and
        // drops after the IoUring (field order), so it outlives the registration.
        unsafe {
            uring.submitter().register_buf_ring_with_flags(
                buffers.ring.as_ptr() as u64,
                entries,
                BUFFER_GROUP,
                0,
            )?;
        }
        Ok(Ring {
            uring: RefCell::new(uring),
            buffers,
        })
    }

    /// Queues `entry`, submitting what is queued first when the queue is full.
    ///
    /// # Safety
    /// Whatever `entry` points at (buffers, addresses) must stay valid until
    /// the request completes (or, for addresses, until it is submitted).
    pub(super) unsafe fn push(&self, entry: &squeue::Entry) -> io::Result<()> {
        let mut uring = self.uring.borrow_mut();
        loop {
            // SAFETY: passed on to the caller.
            if unsafe { uring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            // A full queue goes to the kernel now. This fails only when the
            // completion queue overflowed (EBUSY) and must be reaped first;
            // the request that wanted the room then fails with that error.
            uring.submit()?;
        }
    }

    /// Hands what is queued to the kernel now, without waiting.
    pub(super) fn submit(&self) -> io::Result<usize> {
        self.uring.borrow_mut().submit()
    }

    /// Queues `first` linked to `second` (the second starts only once the
    /// first succeeded), with room made for both in one submission.
    ///
    /// # Safety
    /// As for [`Ring::push`], for both entries.
    pub(super) unsafe fn push_linked(
        &self,
        first: squeue::Entry,
        second: &squeue::Entry,
    ) -> io::Result<()> {
        let mut uring = self.uring.borrow_mut();
        let room = |uring: &mut IoUring| {
            let queue = uring.submission();
            queue.capacity() - queue.len()
        };
        if room(&mut uring) < 2 {
            uring.submit()?;
        }
        if room(&mut uring) < 2 {
            // Never half a pair: a lone linked entry would chain whatever
            // comes next to it.
            return Err(io::Error::other("io_uring submission queue full"));
        }
        let first = first.flags(squeue::Flags::IO_LINK);
        // SAFETY: passed on to the caller; there is room for both.
        unsafe {
            let mut queue = uring.submission();
            queue
                .push(&first)
                .and_then(|()| queue.push(second))
                .map_err(|_| io::Error::other("io_uring submission queue full"))
        }
    }

    /// Submits what is queued and waits up to `timeout` (to the
    /// nanosecond) for at least one completion; then moves every completion
    /// into `into`.
    pub(super) fn wait(&self, timeout: Duration, into: &mut Vec<Completion>) -> io::Result<()> {
        let mut uring = self.uring.borrow_mut();
        let timespec = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&timespec);
        match uring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        into.clear();
        into.extend(uring.completion().map(|entry| Completion {
            user_data: entry.user_data(),
            result: entry.result(),
            flags: entry.flags(),
        }));
        Ok(())
    }

    /// The bytes the kernel put in buffer `id`.
    ///
    /// # Safety
    /// `id` must come from a completion not yet given back with [`Ring::give_back`].
    pub(super) unsafe fn received(&self, id: u16, len: usize) -> &[u8] {
        // SAFETY: the caller holds the buffer; the kernel writes a buffer only
        // while it sits in the ring.
        unsafe { self.buffers.bytes(id, len) }
    }

    /// Hands buffer `id` back to the kernel (visible after [`Ring::publish`]).
    pub(super) fn give_back(&self, id: u16) {
        self.buffers.give_back(id);
    }

    /// Makes the buffers given back visible to the kernel.
    pub(super) fn publish(&self) {
        self.buffers.publish();
    }
}

/// The provided buffer ring: a page-aligned ring of buffer descriptors the
/// kernel consumes from, and the buffers themselves.
struct BufferRing {
    ring: NonNull<io_uring::types::BufRingEntry>,
    entries: u16,
    /// The buffers, written by the kernel: a raw mapping rather than a Rust
    /// allocation, since no Rust reference may cover memory the kernel writes.
    memory: NonNull<u8>,
    /// The next descriptor to fill (published as the ring's tail).
    tail: std::cell::Cell<u16>,
}

impl BufferRing {
    fn new(entries: u16) -> io::Result<BufferRing> {
        let ring = map(ring_bytes(entries))?;
        let memory = match map(memory_bytes(entries)) {
            Ok(memory) => memory,
            Err(error) => {
                // SAFETY: the mapping just made, unmapped once.
                unsafe { libc::munmap(ring.as_ptr().cast(), ring_bytes(entries)) };
                return Err(error);
            }
        };
        let buffers = BufferRing {
            ring: ring.cast(),
            entries,
            memory,
            tail: std::cell::Cell::new(0),
        };
        for id in 0..entries {
            buffers.give_back(id);
        }
        buffers.publish();
        Ok(buffers)
    }

    /// # Safety
    /// Buffer `id` must be out of the kernel's hands until given back.
    unsafe fn bytes(&self, id: u16, len: usize) -> &[u8] {
        let id = usize::from(id % self.entries);
        // SAFETY: inside the mapping (id < entries, len clamped to a buffer).
        unsafe {
            std::slice::from_raw_parts(
                self.memory.as_ptr().add(id * BUFFER_BYTES),
                len.min(BUFFER_BYTES),
            )
        }
    }

    fn give_back(&self, id: u16) {
        let tail = self.tail.get();
        let index = usize::from(tail & (self.entries - 1));
        let address = self.memory.as_ptr() as u64 + (usize::from(id) * BUFFER_BYTES) as u64;
        // SAFETY: index < entries, inside the mapping; the kernel reads a
        // descriptor only once the tail is published past it.
        unsafe {
            let entry = &mut *self.ring.as_ptr().add(index);
            entry.set_addr(address);
            entry.set_len(BUFFER_BYTES as u32);
            entry.set_bid(id);
        }
        self.tail.set(tail.wrapping_add(1));
    }

    fn publish(&self) {
        // SAFETY: the tail field overlays the first descriptor's reserved
        // field, inside the mapping; the kernel reads it atomically.
        unsafe {
            let tail = io_uring::types::BufRingEntry::tail(self.ring.as_ptr()) as *const AtomicU16;
            (*tail).store(self.tail.get(), Ordering::Release);
        }
    }
}

impl Drop for BufferRing {
    fn drop(&mut self) {
        // SAFETY: the mappings made in `new`, unmapped once.
        unsafe {
            libc::munmap(self.ring.as_ptr().cast(), ring_bytes(self.entries));
            libc::munmap(self.memory.as_ptr().cast(), memory_bytes(self.entries));
        }
    }
}

fn ring_bytes(entries: u16) -> usize {
    usize::from(entries) * std::mem::size_of::<types::BufRingEntry>()
}

fn memory_bytes(entries: u16) -> usize {
    usize::from(entries) * BUFFER_BYTES
}

/// An anonymous private mapping: page-aligned (as the buffer ring must be),
/// and its pages count in RSS only once touched.
fn map(bytes: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: no address hint, no file; the result is checked.
    let address = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
            -1,
            0,
        )
    };
    if address == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(address.cast()).ok_or_else(|| io::Error::other("mmap returned null"))
}
