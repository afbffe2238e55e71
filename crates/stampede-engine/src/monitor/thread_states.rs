//! What each of a process's threads is doing at one instant: its state
//! (/proc/PID/task/TID/stat: `R` running or runnable, `S` asleep, `D` asleep
//! uninterruptibly, usually on I/O), the kernel function it sleeps in
//! (/proc/PID/task/TID/wchan: `futex_wait`, `hrtimer_nanosleep`,
//! `do_epoll_wait`…), and how often it has run so far (schedstat's time on
//! a CPU and timeslices): a thread that did not run during a load took no
//! part in it.

use super::kernel::schedstat;
use super::procfs::stat_fields;
use std::fs;

/// One thread at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadState {
    pub tid: u32,
    /// `R`, `S`, `D`, …
    pub state: char,
    /// Where it sleeps; empty or `0` when running.
    pub wchan: String,
    /// Timeslices it has run so far (schedstat's third field).
    pub slices: u64,
}

impl ThreadState {
    /// Asleep in a call (`S` or `D`).
    pub fn asleep(&self) -> bool {
        matches!(self.state, 'S' | 'D')
    }
}

/// Every thread of `pid`; empty once it has gone.
pub fn read_thread_states(pid: u32) -> Vec<ThreadState> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let path = task.path();
            let stat = fs::read_to_string(path.join("stat")).ok()?;
            let state = stat_fields(&stat)?.first()?.chars().next()?;
            let wchan = fs::read_to_string(path.join("wchan")).unwrap_or_default();
            let slices = fs::read_to_string(path.join("schedstat"))
                .ok()
                .and_then(|text| slices(&text))
                .unwrap_or(0);
            Some(ThreadState {
                tid,
                state,
                wchan: wchan.trim().to_string(),
                slices,
            })
        })
        .collect()
}

/// schedstat's third field: timeslices run.
fn slices(text: &str) -> Option<u64> {
    schedstat(text)?;
    text.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn sees_a_sleeping_thread_and_where_it_sleeps() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let sleeper = std::thread::spawn(move || {
            // Blocked on a channel: a futex wait.
            let _ = rx.recv();
        });
        std::thread::sleep(Duration::from_millis(100));
        let states = read_thread_states(std::process::id());
        assert!(
            states.iter().any(|t| t.state == 'R'),
            "this thread runs: {states:?}"
        );
        let asleep: Vec<_> = states
            .iter()
            .filter(|t| t.asleep() && t.wchan.contains("futex"))
            .collect();
        assert!(!asleep.is_empty(), "{states:?}");
        tx.send(()).unwrap();
        sleeper.join().unwrap();
        assert!(read_thread_states(u32::MAX).is_empty());
        assert_eq!(slices("225306 2987139 12\n"), Some(12));
    }
}
