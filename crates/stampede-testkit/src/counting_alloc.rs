//! A global allocator that counts the calling thread's allocations, for
//! the tests that prove a steady-state path allocates nothing (the
//! template renderer, a script's calls). Per thread: the test
//! harness's own threads may allocate meanwhile. A test binary installs it
//! with `#[global_allocator] static GLOBAL: CountingAllocator = CountingAllocator;`
//! and reads [`thread_allocations`] before and after the path under test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to the system allocator, counting allocations and reallocations.
pub struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Counts one allocation of the calling thread (none during its teardown).
fn count() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

/// Allocations (and reallocations) the calling thread has made so far.
pub fn thread_allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter is only a side effect.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's layout contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as for alloc and dealloc.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
