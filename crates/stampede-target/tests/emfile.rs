//! Out of file descriptors (EMFILE) on accept must not become a busy loop: the worker
//! backs off, keeps serving the connections it has, and accepts again once fds free
//! up. Its own test binary, because it lowers the process's descriptor limit.

#[path = "server/common/mod.rs"]
mod common;
use common::*;

use std::net::TcpStream;
use std::time::{Duration, Instant};

fn cpu_time() -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(64)
}

#[test]
fn emfile_backs_off_and_keeps_serving() {
    let mut cfg = small();
    cfg.threads = 1;
    let h = start(cfg);
    let a = h.local_addr();
    let mut kept = Reader::new(connect(a));
    kept.send(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(kept.read(false).unwrap().status, 200);

    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain libc calls on structs we own.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    let saved = lim;
    lim.rlim_cur = open_fds() + 16;
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };

    // Connect until the process runs out: the server's accept hits EMFILE.
    let mut clients = Vec::new();
    while let Ok(s) = TcpStream::connect(a) {
        clients.push(s);
        if clients.len() > 64 {
            break;
        }
    }
    assert!(clients.len() < 64, "descriptor limit not reached");
    std::thread::sleep(Duration::from_millis(100));
    let (cpu0, t0) = (cpu_time(), Instant::now());
    std::thread::sleep(Duration::from_millis(500));
    let busy = (cpu_time() - cpu0).as_secs_f64() / t0.elapsed().as_secs_f64();
    assert!(
        busy < 0.3,
        "accept loop spins under EMFILE: {:.0}% CPU",
        busy * 100.0
    );

    // Existing connections are still served meanwhile.
    kept.send(b"GET /bytes/5 HTTP/1.1\r\n\r\n");
    assert_eq!(kept.read(false).unwrap().body.len(), 5);

    // Free descriptors: the pending connections get accepted and served.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &saved) };
    let last = clients.pop().unwrap();
    drop(clients);
    last.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut r = Reader::new(last);
    r.send(b"GET /bytes/3 HTTP/1.1\r\n\r\n");
    assert_eq!(
        r.read(false).expect("served after the back-off").body.len(),
        3
    );
    h.shutdown().unwrap();
}
