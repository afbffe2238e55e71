//! The process monitor: a background thread that samples the server(s) under
//! test and stampede itself from /proc once a second while the load runs, so
//! that nobody has to read CPU off a `top` screenshot again. It never touches
//! the request path. Stampede's own CPU is its load-generating threads'
//! ([`ClientThreads`]), not the whole process's. A [`LoadWatch`] samples,
//! beside one load, the client's own TCP sockets to the target and where
//! the server's threads sleep.

mod cost;
mod kernel;
mod load_watch;
mod netstat;
mod procfs;
mod sock_diag;
mod thread_states;
mod threads;

use procfs::{
    load_average, machine_ticks, process_name, read_process, thread_ticks, ProcessCounters,
};
use stampede_metrics::{MachineSample, MonitorReport, ProcessSample, ProcessSummary};
use std::collections::HashMap;
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use cost::read_cost;
pub use kernel::{read_machine_counters, read_run_queue, MachineCounters};
pub use load_watch::{LoadWatch, LoadWatchReport, LOAD_WATCH_INTERVAL};
pub use netstat::{read_listen_queue, ListenQueue};
pub use threads::ClientThreads;

/// A process to watch and the role it plays.
#[derive(Debug, Clone)]
pub struct Watched {
    /// Its process id.
    pub pid: u32,
    /// `"server"` or `"client"`.
    pub role: &'static str,
    /// When set (stampede itself), CPU time and context switches are these
    /// threads' only: a target in the same process is not the client.
    /// Memory, threads and fds stay the process's.
    pub threads: Option<ClientThreads>,
}

impl Watched {
    /// A server under test, by process id.
    pub fn server(pid: u32) -> Watched {
        Watched {
            pid,
            role: "server",
            threads: None,
        }
    }

    /// Stampede itself, measured by its load-generating `threads`.
    pub fn client(threads: ClientThreads) -> Watched {
        Watched {
            pid: std::process::id(),
            role: "client",
            threads: Some(threads),
        }
    }
}

/// A process's latest sample, for live display.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveProcess {
    /// Its process id.
    pub pid: u32,
    /// Its command name (/proc/PID/comm).
    pub name: String,
    /// `"server"` or `"client"`.
    pub role: &'static str,
    /// User + system CPU in the last interval, percent of one core.
    pub cpu_pct: f64,
    /// Resident memory now.
    pub rss_bytes: u64,
}

/// The latest sample of every watched process, shared with a live view.
pub type LiveFeed = Arc<Mutex<Vec<LiveProcess>>>;

/// A running monitor; [`Monitor::stop`] ends it and returns the report.
pub struct Monitor {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<MonitorReport>,
    feed: LiveFeed,
}

impl Monitor {
    /// Starts sampling `watched` every `interval`.
    pub fn start(watched: Vec<Watched>, interval: Duration) -> std::io::Result<Monitor> {
        let (stop, stopped) = mpsc::channel();
        let feed = LiveFeed::default();
        let writer = feed.clone();
        let thread = std::thread::Builder::new()
            .name("stampede-monitor".into())
            .spawn(move || sample_until_stopped(watched, interval, stopped, &writer))?;
        Ok(Monitor { stop, thread, feed })
    }

    /// The latest samples, updated once per interval (for the live view).
    pub fn feed(&self) -> LiveFeed {
        self.feed.clone()
    }

    /// Takes a last sample and returns everything recorded.
    pub fn stop(self) -> MonitorReport {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

/// One watched process between samples.
struct Tracker {
    summary: ProcessSummary,
    /// The client's threads, when only they count (see [`Watched::threads`]).
    only: Option<ClientThreads>,
    first: ProcessCounters,
    last: ProcessCounters,
    threads: HashMap<u32, u64>,
}

impl Tracker {
    /// The process's counters now and the CPU ticks of each thread that
    /// counts; `None` once the process is gone.
    fn read(&self) -> Option<(ProcessCounters, HashMap<u32, u64>)> {
        let mut counters = read_process(self.summary.pid)?;
        let Some(only) = &self.only else {
            return Some((
                counters,
                thread_ticks(self.summary.pid).into_iter().collect(),
            ));
        };
        let sample = only.sample();
        counters.utime = sample.total.utime;
        counters.stime = sample.total.stime;
        counters.ctx_voluntary = sample.total.ctx_voluntary;
        counters.ctx_involuntary = sample.total.ctx_involuntary;
        Some((counters, sample.per_thread.into_iter().collect()))
    }
}

fn sample_until_stopped(
    watched: Vec<Watched>,
    interval: Duration,
    stopped: mpsc::Receiver<()>,
    feed: &LiveFeed,
) -> MonitorReport {
    let ticks = procfs::ticks_per_second();
    let start = Instant::now();
    let mut trackers: Vec<Tracker> = watched
        .iter()
        .filter_map(|w| {
            let mut tracker = Tracker {
                summary: ProcessSummary {
                    pid: w.pid,
                    name: process_name(w.pid),
                    role: w.role.to_string(),
                    ..ProcessSummary::default()
                },
                only: w.threads.clone(),
                first: ProcessCounters::default(),
                last: ProcessCounters::default(),
                threads: HashMap::new(),
            };
            let (counters, threads) = tracker.read()?;
            tracker.first = counters;
            tracker.last = counters;
            tracker.threads = threads;
            Some(tracker)
        })
        .collect();
    let mut machine = Vec::new();
    let mut last_machine = machine_ticks();
    let mut last_at = start;
    loop {
        let finished = !matches!(
            stopped.recv_timeout(interval),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let now = Instant::now();
        let seconds = now.duration_since(last_at).as_secs_f64().max(1e-3);
        let t_s = now.duration_since(start).as_secs_f64();
        last_at = now;
        // The run ended just after a sample: a window of a few clock ticks
        // reads one 10 ms tick as a large share (a thread "at 300% of a
        // core"). Its counters still count in the totals; its sample does
        // not, when an earlier one shows the run (a run shorter than that
        // has this sample alone, and keeps it).
        let too_short = finished && seconds * ticks < MIN_SAMPLE_TICKS;
        for tracker in trackers.iter_mut().filter(|t| !t.summary.exited) {
            sample_process(tracker, t_s, seconds, ticks);
            let samples = &mut tracker.summary.samples;
            if too_short && samples.len() > 1 && samples.last().is_some_and(|s| s.t_s == t_s) {
                samples.pop();
            }
        }
        publish(&trackers, &watched, feed);
        let current = machine_ticks();
        if let (Some((busy0, total0)), Some((busy1, total1))) = (last_machine, current) {
            let total = (total1 - total0).max(1) as f64;
            machine.push(MachineSample {
                t_s,
                load_1m: load_average(),
                cpu_pct: 100.0 * (busy1 - busy0) as f64 / total,
            });
        }
        last_machine = current;
        if finished {
            break;
        }
    }
    let elapsed = start.elapsed().as_secs_f64().max(1e-3);
    let processes = trackers
        .into_iter()
        .map(|t| summarize(t, elapsed, ticks))
        .collect();
    MonitorReport {
        interval_s: interval.as_secs_f64(),
        // The machine's CPUs, not this process's affinity: the busy share
        // in `machine` covers all of them.
        cpus: online_cpus(),
        processes,
        machine,
    }
}

/// CPUs online on the machine.
fn online_cpus() -> usize {
    // SAFETY: sysconf reads a system constant and has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(online).ok().filter(|n| *n > 0).unwrap_or(1)
}

/// Hands the latest sample of each live process to the feed.
fn publish(trackers: &[Tracker], watched: &[Watched], feed: &LiveFeed) {
    let latest = trackers
        .iter()
        .filter(|t| !t.summary.exited)
        .filter_map(|t| {
            let sample = t.summary.samples.last()?;
            let role = watched
                .iter()
                .find(|w| w.pid == t.summary.pid)
                .map_or("server", |w| w.role);
            Some(LiveProcess {
                pid: t.summary.pid,
                name: t.summary.name.clone(),
                role,
                cpu_pct: sample.cpu_user_pct + sample.cpu_sys_pct,
                rss_bytes: sample.rss_bytes,
            })
        })
        .collect();
    if let Ok(mut shared) = feed.lock() {
        *shared = latest;
    }
}

/// The fewest clock ticks a sample's window may span: at 100 ticks a second
/// one tick is then at most a tenth of it.
const MIN_SAMPLE_TICKS: f64 = 10.0;

fn sample_process(tracker: &mut Tracker, t_s: f64, seconds: f64, ticks: f64) {
    let Some((now, threads_now)) = tracker.read() else {
        tracker.summary.exited = true;
        return;
    };
    let pct = |from: u64, to: u64| 100.0 * to.saturating_sub(from) as f64 / ticks / seconds;
    let busiest = threads_now
        .iter()
        .map(|(tid, total)| pct(tracker.threads.get(tid).copied().unwrap_or(0), *total))
        .fold(0.0, f64::max);
    let last = tracker.last;
    tracker.summary.samples.push(ProcessSample {
        t_s,
        cpu_user_pct: pct(last.utime, now.utime),
        cpu_sys_pct: pct(last.stime, now.stime),
        busiest_thread_pct: busiest,
        rss_bytes: now.rss_bytes,
        threads: now.threads,
        open_fds: now.open_fds,
        ctx_voluntary: now.ctx_voluntary.saturating_sub(last.ctx_voluntary),
        ctx_involuntary: now.ctx_involuntary.saturating_sub(last.ctx_involuntary),
    });
    tracker.last = now;
    tracker.threads = threads_now;
}

fn summarize(tracker: Tracker, elapsed: f64, ticks: f64) -> ProcessSummary {
    let Tracker {
        mut summary,
        first,
        last,
        ..
    } = tracker;
    summary.cpu_user_s = last.utime.saturating_sub(first.utime) as f64 / ticks;
    summary.cpu_sys_s = last.stime.saturating_sub(first.stime) as f64 / ticks;
    summary.cpu_pct_mean = 100.0 * (summary.cpu_user_s + summary.cpu_sys_s) / elapsed;
    let samples = &summary.samples;
    summary.cpu_pct_max = samples
        .iter()
        .map(|s| s.cpu_user_pct + s.cpu_sys_pct)
        .fold(0.0, f64::max);
    summary.busiest_thread_pct_max = samples
        .iter()
        .map(|s| s.busiest_thread_pct)
        .fold(0.0, f64::max);
    summary.rss_max_bytes = samples
        .iter()
        .map(|s| s.rss_bytes)
        .max()
        .unwrap_or(last.rss_bytes);
    summary.threads_max = samples
        .iter()
        .map(|s| s.threads)
        .max()
        .unwrap_or(last.threads);
    summary.open_fds_max = samples
        .iter()
        .map(|s| s.open_fds)
        .max()
        .unwrap_or(last.open_fds);
    summary.ctx_voluntary = last.ctx_voluntary.saturating_sub(first.ctx_voluntary);
    summary.ctx_involuntary = last.ctx_involuntary.saturating_sub(first.ctx_involuntary);
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_a_busy_process() {
        let threads = ClientThreads::default();
        let monitor = Monitor::start(
            vec![Watched::client(threads.clone())],
            Duration::from_millis(100),
        )
        .unwrap();
        let enrolment = threads.enrol();
        let started = Instant::now();
        assert!(threads::tests::spin(Duration::from_millis(350)) > 0);
        // At least three samples, however fast the spin was.
        if let Some(rest) = Duration::from_millis(350).checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
        drop(enrolment);
        let feed = monitor.feed();
        let mut report = monitor.stop();
        assert_eq!(
            feed.lock().unwrap().len(),
            1,
            "the feed holds the latest sample"
        );
        report.set_requests(1000);
        let me = report.client().expect("client summary");
        assert!(me.samples.len() >= 3, "{:?}", me.samples.len());
        // The spin's 0.35 s of CPU (in clock ticks), at whatever share of a
        // core a busy machine gave it.
        assert!(me.cpu_user_s + me.cpu_sys_s > 0.25, "{me:?}");
        assert!(me.cpu_pct_max > 0.0);
        assert!(me.cpu_s_per_1k_requests.unwrap() > 0.1);
        assert!(!report.machine.is_empty());
    }
}
