//! What both floor probes share: their command line and the request. A probe
//! keeps N keep-alive connections busy for a duration with one GET each and
//! takes a response as done once RESPONSE_BYTES bytes arrived (the target is
//! a static file, so every response has the same size). Exits with a message
//! on any error: a probe is for measuring, not for robustness. The paced probe
//! (floor-paced) takes a seventh argument, the rate in requests per second.

use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

pub struct Args {
    pub address: String,
    pub connections: usize,
    pub duration: Duration,
    pub path: String,
    pub response_bytes: usize,
    /// Requests per second (the paced probe only).
    pub rate: Option<u64>,
}

impl Args {
    /// `probe ADDRESS CONNECTIONS SECONDS PATH RESPONSE_BYTES [RATE]`
    pub fn from_env() -> Args {
        let args: Vec<String> = std::env::args().collect();
        if args.len() != 6 && args.len() != 7 {
            fail("usage: probe ADDRESS CONNECTIONS SECONDS PATH RESPONSE_BYTES [RATE]");
        }
        let number = |i: usize| -> u64 {
            args[i]
                .parse()
                .unwrap_or_else(|_| fail(&format!("not a number: {}", args[i])))
        };
        Args {
            address: args[1].clone(),
            connections: number(2) as usize,
            duration: Duration::from_secs(number(3)),
            path: args[4].clone(),
            response_bytes: number(5) as usize,
            rate: (args.len() == 7).then(|| number(6)),
        }
    }

    pub fn request(&self) -> Vec<u8> {
        format!("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n", self.path, self.address).into_bytes()
    }
}

/// An epoll instance and `args.connections` non-blocking connections, each
/// registered once, edge-triggered, for input only, with its index as data.
pub fn epoll_connections(args: &Args) -> (RawFd, Vec<TcpStream>) {
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
    (epoll, sockets)
}

pub fn fail(message: &str) -> ! {
    eprintln!("floor probe: {message}");
    std::process::exit(2)
}
