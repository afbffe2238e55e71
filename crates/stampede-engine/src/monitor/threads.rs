//! The load generator's own threads. The engine enrols each worker and the
//! thread that aggregates their snapshots; the monitor sums the CPU of those
//! threads (from `/proc/self/task/<tid>/stat`) instead of the whole process's,
//! so that a target served from the same process (`stampede demo`, tests),
//! the live view or the monitor itself is never counted as the client's, and
//! the "load generator was the bottleneck" check sees only the load generator.
//!
//! Not on the request path: a thread enrols once, when it starts, and reads
//! its final counters once, when it ends (after that its /proc entry is gone
//! and its id may be reused, so nobody reads it again).

use super::procfs::{read_thread, ThreadCounters};
use std::sync::{Arc, Mutex, MutexGuard};

/// The threads that generate load, shared by the engine (which enrols them)
/// and the monitor (which samples them). Cloning shares the same set.
#[derive(Debug, Clone, Default)]
pub struct ClientThreads(Arc<Mutex<Vec<Enrolled>>>);

#[derive(Debug, Clone, Copy)]
struct Enrolled {
    tid: u32,
    /// Counters when the thread enrolled: what it did before is not the run's.
    at_start: ThreadCounters,
    /// The latest counters read (final once `ended`).
    last: ThreadCounters,
    ended: bool,
}

/// CPU and context switches of every enrolled thread since it enrolled.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ThreadsSample {
    /// Summed over the threads.
    pub total: ThreadCounters,
    /// CPU ticks (user + system) of each thread since it enrolled, by id.
    pub per_thread: Vec<(u32, u64)>,
}

/// A thread's membership; its drop records the thread's final counters.
#[must_use = "the thread is counted until this is dropped"]
#[derive(Debug)]
pub(crate) struct Enrolment {
    threads: ClientThreads,
    tid: u32,
}

/// The calling thread's id.
fn current_tid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    u32::try_from(tid).expect("thread ids are positive 32-bit numbers")
}

impl ClientThreads {
    fn lock(&self) -> MutexGuard<'_, Vec<Enrolled>> {
        // A panic while holding the lock leaves plain numbers: still usable.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts the calling thread as the client's from now until the returned
    /// [`Enrolment`] is dropped (which must happen on this same thread).
    pub(crate) fn enrol(&self) -> Enrolment {
        let tid = current_tid();
        let now = read_thread(tid).unwrap_or_default();
        self.lock().push(Enrolled {
            tid,
            at_start: now,
            last: now,
            ended: false,
        });
        Enrolment {
            threads: self.clone(),
            tid,
        }
    }

    /// Reads the live threads and returns everything since enrolment. The
    /// lock is held while reading: an enrolled thread cannot end (its drop
    /// waits for the lock), so the id read is still that thread's.
    pub(crate) fn sample(&self) -> ThreadsSample {
        let mut enrolled = self.lock();
        let mut sample = ThreadsSample::default();
        for thread in enrolled.iter_mut() {
            if !thread.ended {
                if let Some(now) = read_thread(thread.tid) {
                    thread.last = thread.last.latest(now);
                }
            }
            let since = thread.last.since(thread.at_start);
            sample.total = sample.total.plus(since);
            sample
                .per_thread
                .push((thread.tid, since.utime + since.stime));
        }
        sample
    }
}

impl Drop for Enrolment {
    fn drop(&mut self) {
        let last = read_thread(self.tid);
        let mut enrolled = self.threads.lock();
        // Ids are unique among live threads; the entry still open is ours.
        if let Some(thread) = enrolled.iter_mut().find(|t| t.tid == self.tid && !t.ended) {
            if let Some(last) = last {
                thread.last = thread.last.latest(last);
            }
            thread.ended = true;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    /// CPU time of the calling thread.
    fn thread_cpu() -> Duration {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the timespec we own.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }

    /// Burns `cpu` of this thread's CPU time, however long a busy machine
    /// makes that take.
    pub(crate) fn spin(cpu: Duration) -> u64 {
        let until = thread_cpu() + cpu;
        let mut spins = 0u64;
        while thread_cpu() < until {
            spins = std::hint::black_box(spins.wrapping_add(1));
        }
        spins
    }

    #[test]
    fn counts_enrolled_threads_only_and_keeps_them_after_they_end() {
        let threads = ClientThreads::default();
        let enrolled = threads.clone();
        // A busy thread that is not the client's (a target in the same process).
        let stranger = std::thread::spawn(|| spin(Duration::from_millis(300)));
        let worker = std::thread::spawn(move || {
            let _enrolment = enrolled.enrol();
            spin(Duration::from_millis(200));
            std::thread::sleep(Duration::from_millis(200));
        });
        std::thread::sleep(Duration::from_millis(100));
        let during = threads.sample();
        worker.join().unwrap();
        stranger.join().unwrap();
        let after = threads.sample();
        assert_eq!(after.per_thread.len(), 1, "{after:?}");
        let ticks = after.total.utime + after.total.stime;
        let per_s = crate::monitor::procfs::ticks_per_second();
        // The worker's 0.2 s, none of the stranger's 0.3 s (clock ticks are
        // coarse: generous bounds).
        let seconds = ticks as f64 / per_s;
        assert!(seconds >= 0.15, "the worker's CPU is counted: {after:?}");
        assert!(seconds < 0.35, "the stranger's CPU is not: {seconds} s");
        assert!(after.total.utime >= during.total.utime, "monotonic");
    }
}
