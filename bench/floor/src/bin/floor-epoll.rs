//! The leanest correct epoll client: each socket registered once,
//! edge-triggered, for input only; a short read means drained; the next
//! request is written from the read that completed the response.

use floor_probes::{fail, Args};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

fn main() {
    let args = Args::from_env();
    let request = args.request();
    // SAFETY: no pointers; the result is checked.
    let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epoll < 0 {
        fail("epoll_create1 failed");
    }
    let mut sockets = Vec::new();
    for index in 0..args.connections {
        let socket = TcpStream::connect(&args.address).unwrap_or_else(|e| fail(&e.to_string()));
        socket.set_nonblocking(true).unwrap_or_else(|e| fail(&e.to_string()));
        let mut event = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: index as u64,
        };
        // SAFETY: the event outlives the call; both fds are open.
        if unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, socket.as_raw_fd(), &mut event) } < 0 {
            fail("epoll_ctl failed");
        }
        sockets.push(socket);
    }
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
