//! A background thread that samples, while one load runs, what only shows
//! during it: the client's own TCP sockets to the target (sock_diag.rs:
//! their RTT and retransmits). It runs beside the load, never in it: the
//! engine's threads do no work for it.

use super::sock_diag::{own_socket_inodes, tcp_sockets_to, TcpSocketInfo};
use stampede_metrics::ClientTcp;
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
    thread: JoinHandle<Option<ClientTcp>>,
}

/// What a watch saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadWatchReport {
    /// `None` where sock_diag could not be read (no netlink, not Linux).
    pub client_tcp: Option<ClientTcp>,
}

impl LoadWatch {
    /// Starts sampling this process's sockets connected to `target`.
    pub fn start(target: SocketAddr, interval: Duration) -> std::io::Result<LoadWatch> {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("stampede-load-watch".into())
            .spawn(move || {
                let mut sockets = ClientSockets::new(target);
                loop {
                    sockets.sample();
                    if !matches!(
                        stopped.recv_timeout(interval),
                        Err(mpsc::RecvTimeoutError::Timeout)
                    ) {
                        sockets.sample();
                        return sockets.summary();
                    }
                }
            })?;
        Ok(LoadWatch { stop, thread })
    }

    /// Takes a last sample and returns the figures.
    pub fn stop(self) -> LoadWatchReport {
        let _ = self.stop.send(());
        LoadWatchReport {
            client_tcp: self.thread.join().ok().flatten(),
        }
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
        let watch = LoadWatch::start(target, Duration::from_millis(20)).unwrap();
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
        let tcp = watch.stop().client_tcp.expect("sock_diag is readable");
        assert_eq!(tcp.sockets, 2.0, "{tcp:?}");
        assert_eq!(tcp.sockets_seen, 2.0, "{tcp:?}");
        assert!(tcp.rtt_us_median > 0.0, "{tcp:?}");
        assert_eq!(tcp.retransmits, 0.0, "{tcp:?}");
    }
}
