//! The target's addresses during a run (`--dns`, `--dns-ttl`, `--resolve
//! HOST:PORT:ADDR,ADDR…`): every address the name gives (a `--resolve`
//! override first), an [`AddressBook`] shared by the workers that holds the
//! current ones and counts the connections each got, a refresher thread that
//! resolves the name again every `--dns-ttl` (new connections take the new
//! addresses; open ones stay), and each worker's [`AddressPicker`], which
//! hands every new connection its address: the first, the next in turn, or
//! one at random.
//!
//! A run with `--dns first` (the default) and no `--dns-ttl` has no book:
//! every connection goes to the first address, as before, and no work is
//! added to it.

use crate::error::EngineError;
use stampede_metrics::{AddressUse, DnsUse};
use stampede_plan::{DnsMode, Plan};
use std::cell::{Cell, RefCell};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

/// Every address of the plan's host: a `--resolve` override's, in the
/// order given, else the resolver's (duplicates dropped, order kept).
pub(crate) fn resolve_all(plan: &Plan) -> Result<Vec<SocketAddr>, EngineError> {
    let host = plan.target.host.to_ascii_lowercase();
    let port = plan.target.port;
    let overridden = plan
        .transport
        .resolve
        .iter()
        .find(|r| r.host == host && r.port == port);
    match overridden {
        Some(r) => Ok(r
            .addrs
            .iter()
            .map(|&ip| SocketAddr::new(ip, port))
            .collect()),
        None => resolve_host(&plan.target.host, port),
    }
}

/// Every address `host` names, in the resolver's order, each once.
pub(crate) fn resolve_host(host: &str, port: u16) -> Result<Vec<SocketAddr>, EngineError> {
    let error = |reason: String| EngineError::Resolve {
        host: host.to_string(),
        reason,
    };
    let mut addrs: Vec<SocketAddr> = Vec::new();
    for addr in (host, port)
        .to_socket_addrs()
        .map_err(|e| error(e.to_string()))?
    {
        if !addrs.contains(&addr) {
            addrs.push(addr);
        }
    }
    if addrs.is_empty() {
        return Err(error("no addresses".into()));
    }
    Ok(addrs)
}

/// One address the name gave, with the connections it got.
#[derive(Debug)]
struct Known {
    addr: SocketAddr,
    connections: Arc<AtomicU64>,
}

#[derive(Debug)]
struct Book {
    /// Every address seen, in the order first seen.
    known: Vec<Known>,
    /// Indices into `known` of the addresses now in use, in the resolver's order.
    current: Vec<usize>,
    resolutions: u64,
    failures: u64,
}

/// The addresses of the target shared by every worker of a run.
#[derive(Debug)]
pub(crate) struct AddressBook {
    mode: DnsMode,
    ttl: Option<Duration>,
    /// Bumped when `current` changes: a picker reloads when it sees a new one.
    generation: AtomicU64,
    book: Mutex<Book>,
}

impl AddressBook {
    /// The book of a run whose name resolved to `addrs` (not empty).
    pub(crate) fn new(
        mode: DnsMode,
        ttl: Option<Duration>,
        addrs: &[SocketAddr],
    ) -> Arc<AddressBook> {
        let book = AddressBook {
            mode,
            ttl,
            generation: AtomicU64::new(0),
            book: Mutex::new(Book {
                known: Vec::new(),
                current: Vec::new(),
                resolutions: 0,
                failures: 0,
            }),
        };
        book.publish(addrs);
        Arc::new(book)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Book> {
        // A worker that panicked holding the lock left nothing half-done.
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The name resolved to `addrs`: new connections use them from now on.
    fn publish(&self, addrs: &[SocketAddr]) {
        let mut book = self.lock();
        book.resolutions += 1;
        let mut current = Vec::with_capacity(addrs.len());
        for addr in addrs {
            let index = match book.known.iter().position(|k| k.addr == *addr) {
                Some(index) => index,
                None => {
                    book.known.push(Known {
                        addr: *addr,
                        connections: Arc::new(AtomicU64::new(0)),
                    });
                    book.known.len() - 1
                }
            };
            current.push(index);
        }
        if current != book.current {
            book.current = current;
            self.generation.fetch_add(1, Ordering::Release);
        }
    }

    fn failed(&self) {
        let mut book = self.lock();
        book.resolutions += 1;
        book.failures += 1;
    }

    /// Worker `worker`'s picker (`seed`, the worker's own and new each run,
    /// drives `random`).
    pub(crate) fn picker(self: &Arc<AddressBook>, worker: usize, seed: u64) -> AddressPicker {
        let picker = AddressPicker {
            book: self.clone(),
            loaded: Cell::new(u64::MAX),
            current: RefCell::new(Vec::new()),
            // Workers start at different places of the turn.
            next: Cell::new(worker),
            // Mixed, so that seeds that differ in a few bits (one worker's
            // from the next) differ from the first draw.
            random: Cell::new(splitmix64(seed) | 1),
        };
        picker.reload();
        picker
    }

    /// Resolves the plan's host again every `--dns-ttl` (as [`resolve_all`]
    /// does) on a thread of its own until the returned sender is dropped
    /// (at the end of the run); `None` without a ttl.
    pub(crate) fn refresh(
        self: &Arc<AddressBook>,
        plan: &Plan,
    ) -> Result<Option<mpsc::Sender<()>>, EngineError> {
        let Some(ttl) = self.ttl else {
            return Ok(None);
        };
        let (stop, stopped) = mpsc::channel::<()>();
        let book = self.clone();
        let name = plan.target.host.clone();
        let plan = plan.clone();
        std::thread::Builder::new()
            .name("stampede-dns".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(ttl) {
                    match resolve_all(&plan) {
                        Ok(addrs) => book.publish(&addrs),
                        // The addresses in use are kept.
                        Err(_) => book.failed(),
                    }
                }
            })
            .map_err(|e| EngineError::Resolve {
                host: name,
                reason: format!("cannot start the thread that resolves it again: {e}"),
            })?;
        Ok(Some(stop))
    }

    /// What the result says of the run's addresses.
    pub(crate) fn report(&self) -> DnsUse {
        let book = self.lock();
        DnsUse {
            mode: self.mode.as_str().to_string(),
            ttl_s: self.ttl.map(|ttl| ttl.as_secs_f64()),
            resolutions: book.resolutions,
            failures: book.failures,
            addresses: book
                .known
                .iter()
                .map(|k| AddressUse {
                    address: k.addr.to_string(),
                    connections: k.connections.load(Ordering::Relaxed),
                })
                .collect(),
        }
    }
}

/// The report of a run without a book: every one of `attempts`
/// connections went to the first of `addrs`.
pub(crate) fn report_first(addrs: &[SocketAddr], attempts: u64) -> DnsUse {
    DnsUse {
        mode: DnsMode::First.as_str().to_string(),
        ttl_s: None,
        resolutions: 1,
        failures: 0,
        addresses: addrs
            .iter()
            .enumerate()
            .map(|(i, addr)| AddressUse {
                address: addr.to_string(),
                connections: if i == 0 { attempts } else { 0 },
            })
            .collect(),
    }
}

/// One worker's view of the book: the addresses in use and whose turn it
/// is. Asked once per new connection, never per request.
#[derive(Debug)]
pub(crate) struct AddressPicker {
    book: Arc<AddressBook>,
    /// The book's generation `current` was loaded at.
    loaded: Cell<u64>,
    current: RefCell<Vec<(SocketAddr, Arc<AtomicU64>)>>,
    next: Cell<usize>,
    /// xorshift64 state for `random`.
    random: Cell<u64>,
}

impl AddressPicker {
    fn reload(&self) {
        let book = self.book.lock();
        self.loaded
            .set(self.book.generation.load(Ordering::Acquire));
        *self.current.borrow_mut() = book
            .current
            .iter()
            .map(|&i| (book.known[i].addr, book.known[i].connections.clone()))
            .collect();
    }

    /// The address of the next new connection (counted as its connection).
    pub(crate) fn next(&self) -> SocketAddr {
        if self.book.generation.load(Ordering::Acquire) != self.loaded.get() {
            self.reload();
        }
        let current = self.current.borrow();
        let index = match self.book.mode {
            DnsMode::First => 0,
            DnsMode::RoundRobin => {
                let turn = self.next.get();
                self.next.set(turn.wrapping_add(1));
                turn % current.len()
            }
            DnsMode::Random => {
                let mut x = self.random.get();
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                self.random.set(x);
                (x % current.len() as u64) as usize
            }
        };
        let (addr, connections) = &current[index];
        connections.fetch_add(1, Ordering::Relaxed);
        *addr
    }
}

/// One step of splitmix64: spreads a seed's bits over the whole word.
fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn round_robin_takes_turns_and_counts() {
        let all = addrs(&["127.0.0.1:80", "127.0.0.2:80", "127.0.0.3:80"]);
        let book = AddressBook::new(DnsMode::RoundRobin, None, &all);
        let picker = book.picker(1, 7);
        let picked: Vec<SocketAddr> = (0..6).map(|_| picker.next()).collect();
        assert_eq!(picked, [1, 2, 0, 1, 2, 0].map(|i| all[i]));
        let report = book.report();
        assert!(report.addresses.iter().all(|a| a.connections == 2));
        assert_eq!(report.resolutions, 1);
    }

    #[test]
    fn first_and_random_stay_within_the_addresses() {
        let all = addrs(&["127.0.0.1:80", "[::1]:80"]);
        let first = AddressBook::new(DnsMode::First, None, &all).picker(3, 1);
        assert!((0..5).all(|_| first.next() == all[0]));
        let book = AddressBook::new(DnsMode::Random, None, &all);
        let random = book.picker(0, 42);
        for _ in 0..200 {
            assert!(all.contains(&random.next()));
        }
        let report = book.report();
        assert!(
            report.addresses.iter().all(|a| a.connections > 50),
            "{report:?}"
        );
    }

    #[test]
    fn a_new_resolution_reaches_the_next_connection() {
        let old = addrs(&["127.0.0.2:80"]);
        let new = addrs(&["127.0.0.3:80"]);
        let book = AddressBook::new(DnsMode::First, Some(Duration::from_secs(1)), &old);
        let picker = book.picker(0, 1);
        assert_eq!(picker.next(), old[0]);
        book.publish(&new);
        assert_eq!(picker.next(), new[0]);
        book.failed();
        assert_eq!(
            picker.next(),
            new[0],
            "a failed resolution keeps the addresses"
        );
        let report = book.report();
        assert_eq!((report.resolutions, report.failures), (3, 1));
        let counts: Vec<u64> = report.addresses.iter().map(|a| a.connections).collect();
        assert_eq!(counts, [1, 2]);
    }
}
