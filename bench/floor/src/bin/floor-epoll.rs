//! The leanest correct epoll client: each socket registered once,
//! edge-triggered, for input only; a short read means drained; the next
//! request is written from the read that completed the response.

use floor_probes::{epoll_connections, fail, Args};
use std::io::{ErrorKind, Read, Write};
use std::time::Instant;

fn main() {
    let args = Args::from_env();
    let request = args.request();
    let (epoll, mut sockets) = epoll_connections(&args);
    let mut received = vec![0usize; args.connections];
    let mut buffer = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let end = Instant::now() + args.duration;
    let mut done = 0u64;
    for socket in &mut sockets {
        socket.write_all(&request).unwrap_or_else(|e| fail(&e.to_string()));
    }
    while Instant::now() < end {
        // SAFETY: the kernel writes at most events.len() entries.
        let ready = unsafe { libc::epoll_wait(epoll, events.as_mut_ptr(), 1024, 100) };
        for event in &events[..ready.max(0) as usize] {
            let index = event.u64 as usize;
            loop {
                match sockets[index].read(&mut buffer) {
                    Ok(0) => fail("the server closed a connection"),
                    Ok(n) => {
                        received[index] += n;
                        if received[index] >= args.response_bytes {
                            received[index] -= args.response_bytes;
                            done += 1;
                            sockets[index]
                                .write_all(&request)
                                .unwrap_or_else(|e| fail(&e.to_string()));
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
    println!("floor-epoll: {done} responses");
}
