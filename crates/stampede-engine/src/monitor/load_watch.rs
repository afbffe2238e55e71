//! A background thread that samples, while one load runs, what only shows
//! during it: the client's own TCP sockets to the target (sock_diag.rs:
//! their RTT and retransmits) and where the server's threads sleep
//! (thread_states.rs). It runs beside the load, never in it: the engine's
//! threads do no work for it.

use super::sock_diag::{own_socket_inodes, tcp_sockets_to, TcpSocketInfo};
use super::thread_states::read_thread_states;
use stampede_metrics::{ClientTcp, ThreadWait, ThreadWaits};
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the sockets are read: a few times in the shortest load.
pub const LOAD_WATCH_INTERVAL: Duration = Duration::from_millis(200);

/// A running watch; [`LoadWatch::stop`] ends it.
pub struct LoadWatch {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<LoadWatchReport>,
}

/// What a watch saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadWatchReport {
    /// `None` where sock_diag could not be read (no netlink, not Linux).
    pub client_tcp: Option<ClientTcp>,
    /// Where the server's threads slept; `None` without a server to watch.
    pub thread_waits: Option<ThreadWaits>,
}

impl LoadWatch {
    /// Starts sampling this process's sockets connected to `target`, and
    /// the threads of `server`.
    pub fn start(
        target: SocketAddr,
        server: Option<u32>,
        interval: Duration,
    ) -> std::io::Result<LoadWatch> {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("stampede-load-watch".into())
            .spawn(move || {
                let mut sockets = ClientSockets::new(target);
                let mut threads = server.map(ServerThreads::new);
                // The first sample, before the load, and the last, after
                // it, give the threads' timeslices; only the samples
                // between show what they did during the load.
                let mut during = false;
                loop {
                    sockets.sample();
                    if let Some(threads) = threads.as_mut() {
                        threads.sample(during);
                    }
                    during = true;
                    if !matches!(
                        stopped.recv_timeout(interval),
                        Err(mpsc::RecvTimeoutError::Timeout)
                    ) {
                        sockets.sample();
                        if let Some(threads) = threads.as_mut() {
                            threads.sample(false);
                        }
                        return LoadWatchReport {
                            client_tcp: sockets.summary(),
                            thread_waits: threads.map(|t| t.summary()),
                        };
                    }
                }
            })?;
        Ok(LoadWatch { stop, thread })
    }

    /// Takes a last sample and returns the figures.
    pub fn stop(self) -> LoadWatchReport {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

/// This process's sockets to the target, sample after sample.
struct ClientSockets {
    target: SocketAddr,
    own: HashSet<u64>,
    foreign: HashSet<u64>,
    /// What each socket had retransmitted when first seen in the first
    /// sample (before the load); a socket born later starts from zero.
    baseline: HashMap<u64, u32>,
    latest: HashMap<u64, TcpSocketInfo>,
    most_at_once: usize,
    samples: usize,
    readable: bool,
}

impl ClientSockets {
    fn new(target: SocketAddr) -> ClientSockets {
        ClientSockets {
            target,
            own: HashSet::new(),
            foreign: HashSet::new(),
            baseline: HashMap::new(),
            latest: HashMap::new(),
            most_at_once: 0,
            samples: 0,
            readable: true,
        }
    }

    fn sample(&mut self) {
        if !self.readable {
            return;
        }
        let Ok(sockets) = tcp_sockets_to(self.target) else {
            self.readable = false;
            return;
        };
        // /proc/self/fd is read again only when a socket is new to us.
        if sockets
            .iter()
            .any(|s| !self.own.contains(&s.inode) && !self.foreign.contains(&s.inode))
        {
            let fds = own_socket_inodes();
            for socket in &sockets {
                if fds.contains(&socket.inode) {
                    self.own.insert(socket.inode);
                } else if !self.own.contains(&socket.inode) {
                    self.foreign.insert(socket.inode);
                }
            }
        }
        let first = self.samples == 0;
        let mut now = 0;
        for socket in sockets.into_iter().filter(|s| self.own.contains(&s.inode)) {
            now += 1;
            if first {
                self.baseline.insert(socket.inode, socket.total_retrans);
            }
            self.latest.insert(socket.inode, socket);
        }
        self.most_at_once = self.most_at_once.max(now);
        self.samples += 1;
    }

    fn summary(&self) -> Option<ClientTcp> {
        if !self.readable {
            return None;
        }
        let mut rtt: Vec<u32> = self.latest.values().map(|s| s.rtt_us).collect();
        let mut rttvar: Vec<u32> = self.latest.values().map(|s| s.rttvar_us).collect();
        let retransmits: u64 = self
            .latest
            .values()
            .map(|s| {
                let from = self.baseline.get(&s.inode).copied().unwrap_or(0);
                u64::from(s.total_retrans.saturating_sub(from))
            })
            .sum();
        Some(ClientTcp {
            sockets: self.most_at_once as f64,
            sockets_seen: self.latest.len() as f64,
            samples: self.samples as f64,
            rtt_us_median: percentile(&mut rtt, 50.0),
            rtt_us_p99: percentile(&mut rtt, 99.0),
            rttvar_us_median: percentile(&mut rttvar, 50.0),
            retransmits: retransmits as f64,
        })
    }
}

/// A thread that ran this few timeslices during the load took no part in
/// it (a main thread waiting on a join, an idle pool).
const WORKING_SLICES: u64 = 10;

/// Kernel functions of an event loop waiting for the network: waiting for
/// work (the client's requests), not in a blocking call.
const EVENT_LOOP_WAITS: [&str; 3] = ["epoll", "ep_poll", "io_cqring_wait"];

/// One server thread over the samples.
#[derive(Default)]
struct ThreadTrack {
    first_slices: u64,
    last_slices: u64,
    seen: usize,
    /// Samples asleep in a blocking call, by kernel function.
    asleep_in: HashMap<String, usize>,
}

/// The server's threads, sample after sample.
struct ServerThreads {
    pid: u32,
    threads: HashMap<u32, ThreadTrack>,
    /// Samples of the threads' states (during the load).
    samples: usize,
    started: bool,
}

impl ServerThreads {
    fn new(pid: u32) -> ServerThreads {
        ServerThreads {
            pid,
            threads: HashMap::new(),
            samples: 0,
            started: false,
        }
    }

    /// Reads every thread's timeslices, and with `states` counts where
    /// each one is.
    fn sample(&mut self, states: bool) {
        let first = !self.started;
        self.started = true;
        for state in read_thread_states(self.pid) {
            let track = self
                .threads
                .entry(state.tid)
                .or_insert_with(|| ThreadTrack {
                    // A thread born during the load counts from zero.
                    first_slices: if first { state.slices } else { 0 },
                    ..ThreadTrack::default()
                });
            track.last_slices = state.slices;
            if !states {
                continue;
            }
            track.seen += 1;
            let idle = EVENT_LOOP_WAITS.iter().any(|w| state.wchan.contains(w));
            if state.asleep() && !idle && !state.wchan.is_empty() && state.wchan != "0" {
                *track.asleep_in.entry(state.wchan).or_default() += 1;
            }
        }
        if states {
            self.samples += 1;
        }
    }

    fn summary(&self) -> ThreadWaits {
        let working: Vec<&ThreadTrack> = self
            .threads
            .values()
            .filter(|t| t.last_slices.saturating_sub(t.first_slices) >= WORKING_SLICES)
            .collect();
        let mut waits: Vec<ThreadWait> = Vec::new();
        let mut asleep = 0;
        for track in &working {
            let total: usize = track.asleep_in.values().sum();
            if track.seen == 0 || total * 2 < track.seen {
                continue;
            }
            asleep += 1;
            // Where it slept most (ties by name, for a stable answer).
            let Some((wchan, _)) = track
                .asleep_in
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            else {
                continue;
            };
            match waits.iter_mut().find(|w| &w.wchan == wchan) {
                Some(wait) => wait.threads += 1.0,
                None => waits.push(ThreadWait {
                    wchan: wchan.clone(),
                    threads: 1.0,
                }),
            }
        }
        waits.sort_by(|a, b| b.threads.total_cmp(&a.threads).then(a.wchan.cmp(&b.wchan)));
        ThreadWaits {
            samples: self.samples as f64,
            working_threads: working.len() as f64,
            asleep_threads: asleep as f64,
            waits,
        }
    }
}

/// The nearest-rank percentile of `values` (0 when empty).
fn percentile(values: &mut [u32], pct: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable();
    let rank = ((pct / 100.0) * values.len() as f64).ceil() as usize;
    f64::from(values[rank.clamp(1, values.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(percentile(&mut [], 50.0), 0.0);
        assert_eq!(percentile(&mut [30, 10, 20, 40], 50.0), 20.0);
        assert_eq!(percentile(&mut [30, 10, 20, 40], 99.0), 40.0);
        let mut hundred: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&mut hundred, 99.0), 99.0);
    }

    #[test]
    fn counts_the_sockets_open_during_the_watch() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = listener.local_addr().unwrap();
        let watch = LoadWatch::start(target, None, Duration::from_millis(20)).unwrap();
        let mut clients: Vec<TcpStream> = (0..2)
            .map(|_| TcpStream::connect(target).unwrap())
            .collect();
        let mut accepted: Vec<TcpStream> = (0..2).map(|_| listener.accept().unwrap().0).collect();
        for (client, server) in clients.iter_mut().zip(&mut accepted) {
            client.write_all(b"ping").unwrap();
            let mut four = [0u8; 4];
            server.read_exact(&mut four).unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
        let report = watch.stop();
        assert_eq!(report.thread_waits, None, "no server to watch");
        let tcp = report.client_tcp.expect("sock_diag is readable");
        assert_eq!(tcp.sockets, 2.0, "{tcp:?}");
        assert_eq!(tcp.sockets_seen, 2.0, "{tcp:?}");
        assert!(tcp.rtt_us_median > 0.0, "{tcp:?}");
        assert_eq!(tcp.retransmits, 0.0, "{tcp:?}");
    }

    #[test]
    fn names_where_a_working_thread_sleeps() {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        // Works 1 ms, sleeps 20 ms, over and over for 600 ms: about 28
        // timeslices (working: 10 or more) and asleep in a sleep (not an
        // event loop) in nearly every sample, even when the other tests
        // running beside it keep both cores busy. Sleeping 5 ms at a time
        // for 300 ms was named in fewer than half its samples once in a
        // CI run.
        let sleeper = std::thread::spawn(move || {
            while stopped.try_recv().is_err() {
                let busy = std::time::Instant::now();
                while busy.elapsed() < Duration::from_millis(1) {
                    std::hint::spin_loop();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let watch = LoadWatch::start(
            listener.local_addr().unwrap(),
            Some(std::process::id()),
            Duration::from_millis(20),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(600));
        let waits = watch.stop().thread_waits.expect("a server watched");
        stop.send(()).unwrap();
        sleeper.join().unwrap();
        assert!(waits.samples >= 5.0, "{waits:?}");
        // The sleeper worked (about 28 times); this test's thread slept in
        // one long sleep and the watch itself ran: at least the sleeper.
        assert!(waits.working_threads >= 1.0, "{waits:?}");
        assert!(waits.asleep_threads >= 1.0, "{waits:?}");
        let sleep = waits
            .waits
            .iter()
            .find(|w| w.wchan.contains("nanosleep"))
            .unwrap_or_else(|| panic!("{waits:?}"));
        assert!(sleep.threads >= 1.0, "{waits:?}");
    }
}
