//! The leanest open-model client: requests leave on a fixed schedule (the
//! k-th at start + k / RATE), whatever the responses do. One epoll_pwait2
//! with a nanosecond timeout until the next intended instant (timer slack set
//! to 1 ns, no timerfd), then every request due goes out on an idle
//! connection; when none is idle the request waits in a queue and leaves as
//! soon as a response frees one (its lateness counts from its intended
//! instant); while every connection is busy only I/O wakes it. Sockets are edge-triggered, input only; a response is done when
//! RESPONSE_BYTES bytes arrived. Prints the responses, the sends and the send
//! lateness (actual − intended): p50, p99, max and how many were over 1 ms.

use floor_probes::{epoll_connections, fail, Args};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Lateness histogram: one bucket per microsecond up to 100 ms, then one more.
const LATENESS_BUCKETS: usize = 100_001;

/// The intended instant of request `k`, in nanoseconds from the start: a pure
/// function so that rounding never drifts (vegeta's ConstantPacer does the same).
fn intended_ns(k: u64, rate: u64) -> u64 {
    (u128::from(k) * 1_000_000_000 / u128::from(rate)) as u64
}

fn main() {
    let args = Args::from_env();
    let rate = args.rate.unwrap_or_else(|| fail("floor-paced needs RATE (requests per second)"));
    if rate == 0 {
        fail("RATE must be above 0");
    }
    let request = args.request();
    // The default 50 µs timer slack would make every wait late by up to that much.
    // SAFETY: a plain prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let (epoll, mut sockets) = epoll_connections(&args);
    let mut idle: Vec<usize> = (0..args.connections).rev().collect();
    let mut received = vec![0usize; args.connections];
    let mut waiting: VecDeque<u64> = VecDeque::new(); // intended instants (ns) of queued requests
    let mut lateness = vec![0u64; LATENESS_BUCKETS];
    let mut buffer = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let start = Instant::now();
    let total_ns = args.duration.as_nanos() as u64;
    let (mut next, mut sent, mut done) = (0u64, 0u64, 0u64);
    let send = |socket: &mut TcpStream, intended: u64, now: u64, lateness: &mut [u64]| {
        socket.write_all(&request).unwrap_or_else(|e| fail(&e.to_string()));
        let late_us = (now.saturating_sub(intended) / 1000) as usize;
        lateness[late_us.min(LATENESS_BUCKETS - 1)] += 1;
    };
    loop {
        let now = start.elapsed().as_nanos() as u64;
        if now >= total_ns {
            break;
        }
        // Everything due by now leaves (or queues when every connection is busy).
        loop {
            let due = intended_ns(next, rate);
            if due > now || due >= total_ns {
                break;
            }
            next += 1;
            match idle.pop() {
                Some(index) => {
                    send(&mut sockets[index], due, now, &mut lateness);
                    sent += 1;
                }
                None => waiting.push_back(due),
            }
        }
        // With every connection busy nothing can leave before a response
        // frees one, so only I/O (or the end) wakes the loop; the requests
        // that fall due meanwhile queue at the next wake with their own
        // intended instants, so their lateness is still counted in full.
        let wake = if idle.is_empty() {
            total_ns
        } else {
            intended_ns(next, rate).min(total_ns)
        };
        let wait = Duration::from_nanos(wake.saturating_sub(now));
        let timeout = libc::timespec {
            tv_sec: wait.as_secs() as libc::time_t,
            tv_nsec: wait.subsec_nanos() as libc::c_long,
        };
        // SAFETY: epoll_pwait2(epfd, events, maxevents, timeout, sigmask = NULL,
        // sigsetsize); the kernel writes at most 1024 entries; timeout outlives the call.
        let ready = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                epoll,
                events.as_mut_ptr(),
                1024,
                &timeout as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if ready < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == ErrorKind::Interrupted {
                continue;
            }
            fail(&format!("epoll_pwait2: {error}"));
        }
        for event in &events[..ready as usize] {
            let index = event.u64 as usize;
            loop {
                match sockets[index].read(&mut buffer) {
                    Ok(0) => fail("the server closed a connection"),
                    Ok(n) => {
                        received[index] += n;
                        if received[index] >= args.response_bytes {
                            received[index] -= args.response_bytes;
                            done += 1;
                            match waiting.pop_front() {
                                Some(due) => {
                                    let now = start.elapsed().as_nanos() as u64;
                                    send(&mut sockets[index], due, now, &mut lateness);
                                    sent += 1;
                                }
                                None => idle.push(index),
                            }
                        }
                        if n < buffer.len() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => fail(&e.to_string()),
                }
            }
        }
    }
    let percentile = |p: f64| -> usize {
        let rank = ((sent as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        lateness
            .iter()
            .position(|&count| {
                seen += count;
                seen >= rank
            })
            .unwrap_or(0)
    };
    let over_1ms: u64 = lateness[1000..].iter().sum();
    let max = lateness.iter().rposition(|&count| count > 0).unwrap_or(0);
    println!(
        "floor-paced: {done} responses {sent} sent {} queued-at-end lateness_us p50 {} p99 {} max {max} over_1ms {over_1ms}",
        waiting.len(),
        percentile(0.50),
        percentile(0.99),
    );
}

#[cfg(test)]
mod tests {
    use super::intended_ns;

    #[test]
    fn intended_instants_do_not_drift() {
        // (k, rate, expected ns): exact multiples, rounding down, and far out.
        let table = [
            (0, 20_000, 0),
            (1, 20_000, 50_000),
            (3, 30_000, 100_000),
            (1, 3, 333_333_333),
            (2, 3, 666_666_666),
            (3, 3, 1_000_000_000),
            (50_000 * 3600, 50_000, 3600 * 1_000_000_000),
        ];
        for (k, rate, expected) in table {
            assert_eq!(intended_ns(k, rate), expected, "k={k} rate={rate}");
        }
    }
}
