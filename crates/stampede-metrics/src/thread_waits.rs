//! Where a server's threads slept during a load (`stampede experiment`):
//! sampled beside the load from /proc/PID/task/*/stat and
//! wchan. A thread that sleeps in a blocking call (a lock, a sleep, a disk
//! read) most of the time, while the CPU is not busy, shows a server that
//! waits rather than computes; its CPU figures name nothing.

use serde::{Deserialize, Serialize};

/// The server's threads over one load (or the mean of several: every
/// count is a float for that).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadWaits {
    /// Samples of the threads' states taken during the load (one every
    /// 200 ms; not the ones before and after it).
    pub samples: f64,
    /// Threads that ran during the load (10 timeslices or more): the
    /// others took no part in it.
    pub working_threads: f64,
    /// Of those, threads asleep (`S` or `D`) in a blocking call in half of
    /// the samples or more. Waiting for the network in the event loop
    /// (`epoll_wait`, io_uring) is waiting for work, not counted.
    pub asleep_threads: f64,
    /// Where they slept: each kernel function (wchan) with the threads that
    /// slept in it most, most threads first.
    pub waits: Vec<ThreadWait>,
}

/// One kernel function threads slept in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadWait {
    /// The kernel function (`/proc/PID/task/TID/wchan`).
    pub wchan: String,
    /// Server threads that slept in it most (a mean over rounds).
    pub threads: f64,
}

impl ThreadWaits {
    /// The mean of several loads' figures; the waits are merged by name.
    pub fn mean(all: &[ThreadWaits]) -> Option<ThreadWaits> {
        if all.is_empty() {
            return None;
        }
        let n = all.len() as f64;
        let mean = |f: fn(&ThreadWaits) -> f64| all.iter().map(f).sum::<f64>() / n;
        let mut waits: Vec<ThreadWait> = Vec::new();
        for wait in all.iter().flat_map(|w| &w.waits) {
            match waits.iter_mut().find(|w| w.wchan == wait.wchan) {
                Some(known) => known.threads += wait.threads / n,
                None => waits.push(ThreadWait {
                    wchan: wait.wchan.clone(),
                    threads: wait.threads / n,
                }),
            }
        }
        waits.sort_by(|a, b| b.threads.total_cmp(&a.threads));
        Some(ThreadWaits {
            samples: mean(|w| w.samples),
            working_threads: mean(|w| w.working_threads),
            asleep_threads: mean(|w| w.asleep_threads),
            waits,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_merges_the_waits_by_name() {
        let one = |wchan: &str, threads: f64| ThreadWaits {
            samples: 5.0,
            working_threads: 2.0,
            asleep_threads: threads,
            waits: vec![ThreadWait {
                wchan: wchan.into(),
                threads,
            }],
        };
        let m =
            ThreadWaits::mean(&[one("futex_wait", 2.0), one("hrtimer_nanosleep", 1.0)]).unwrap();
        assert_eq!(m.asleep_threads, 1.5);
        assert_eq!(
            m.waits,
            vec![
                ThreadWait {
                    wchan: "futex_wait".into(),
                    threads: 1.0
                },
                ThreadWait {
                    wchan: "hrtimer_nanosleep".into(),
                    threads: 0.5
                }
            ]
        );
        assert_eq!(ThreadWaits::mean(&[]), None);
    }
}
