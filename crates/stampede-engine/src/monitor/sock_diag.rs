//! The kernel's `struct tcp_info` of TCP sockets, by one netlink sock_diag
//! dump (`SOCK_DIAG_BY_FAMILY` with `INET_DIAG_INFO`, as `ss -ti` asks),
//! kept for the sockets connected to one address and port; and the
//! inodes of this process's own sockets (/proc/self/fd), so that another
//! process's connections to the same target are told apart.
//!
//! Hand-written over libc (already a dependency) rather than
//! netlink-packet-sock-diag: one request and four fields at fixed offsets
//! of a stable kernel ABI did not justify its three netlink crates.

use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// One socket's figures, from its `tcp_info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSocketInfo {
    pub inode: u64,
    /// Local port (host order).
    pub local_port: u16,
    /// Smoothed RTT and its variation, µs (`tcpi_rtt`, `tcpi_rttvar`).
    pub rtt_us: u32,
    pub rttvar_us: u32,
    /// Segments retransmitted over the socket's life (`tcpi_total_retrans`).
    pub total_retrans: u32,
}

// linux/sock_diag.h, linux/inet_diag.h, linux/netlink.h.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const INET_DIAG_INFO: u16 = 2;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLMSG_HEADER: usize = 16;
/// `struct inet_diag_req_v2`: family, protocol, ext, pad, states, sockid (48).
const REQUEST: usize = 56;
/// `struct inet_diag_msg`: family, state, timer, retrans, sockid (48),
/// expires, rqueue, wqueue, uid, inode.
const DIAG_MSG: usize = 72;
/// Every state a connected socket is in (TCP_ESTABLISHED … TCP_CLOSING),
/// less TIME_WAIT, CLOSE and LISTEN: a socket in TIME_WAIT belongs to no
/// process any more, and has no `tcp_info`.
const STATES: u32 = (1 << 1) | (1 << 2) | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 9) | (1 << 11);
// Offsets in `struct tcp_info` (linux/tcp.h).
const TCPI_RTT: usize = 68;
const TCPI_RTTVAR: usize = 72;
const TCPI_TOTAL_RETRANS: usize = 100;

/// The TCP sockets of this network namespace connected to `target`
/// (remote address and port), whatever process holds them.
pub fn tcp_sockets_to(target: SocketAddr) -> io::Result<Vec<TcpSocketInfo>> {
    let family = match target {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: socket() takes no pointers; the descriptor is owned at once.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor that nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    set_receive_timeout(&socket)?;
    let request = request(family as u8);
    // SAFETY: the buffer is valid for its length; the kernel is the peer.
    let sent = unsafe {
        libc::send(
            socket.as_raw_fd(),
            request.as_ptr().cast(),
            request.len(),
            0,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut found = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: the buffer is valid and writable for its length.
        let got = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                0,
            )
        };
        if got < 0 {
            return Err(io::Error::last_os_error());
        }
        if got == 0 || parse(&buffer[..got as usize], target, &mut found)? {
            return Ok(found);
        }
    }
}

/// This process's sockets, by inode (the links `socket:[N]` of
/// /proc/self/fd).
pub fn own_socket_inodes() -> HashSet<u64> {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return HashSet::new();
    };
    fds.flatten()
        .filter_map(|fd| {
            let link = std::fs::read_link(fd.path()).ok()?;
            let link = link.to_str()?;
            link.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// A dump can wait on nothing: a second without an answer is an error,
/// not a hang.
fn set_receive_timeout(socket: &OwnedFd) -> io::Result<()> {
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: the option value is a timeval, valid for its size.
    let set = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if set < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `nlmsghdr` then `inet_diag_req_v2` asking for every TCP socket of
/// `family` with its `tcp_info`.
fn request(family: u8) -> Vec<u8> {
    let mut message = Vec::with_capacity(NLMSG_HEADER + REQUEST);
    message.extend_from_slice(&((NLMSG_HEADER + REQUEST) as u32).to_ne_bytes());
    message.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    message.extend_from_slice(&0u32.to_ne_bytes()); // the kernel fills the port id
    message.push(family);
    message.push(libc::IPPROTO_TCP as u8);
    message.push(1 << (INET_DIAG_INFO - 1));
    message.push(0);
    message.extend_from_slice(&STATES.to_ne_bytes());
    message.resize(NLMSG_HEADER + REQUEST, 0); // any socket id
    message
}

/// Parses one datagram of the dump into `found`; true at its end.
fn parse(datagram: &[u8], target: SocketAddr, found: &mut Vec<TcpSocketInfo>) -> io::Result<bool> {
    let mut at = 0;
    while at + NLMSG_HEADER <= datagram.len() {
        let length = u32_at(datagram, at) as usize;
        let kind = u16::from_ne_bytes([datagram[at + 4], datagram[at + 5]]);
        if length < NLMSG_HEADER || at + length > datagram.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a truncated sock_diag message",
            ));
        }
        let body = &datagram[at + NLMSG_HEADER..at + length];
        match kind {
            NLMSG_DONE => return Ok(true),
            NLMSG_ERROR => {
                let errno = body
                    .get(..4)
                    .map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
                return Err(io::Error::from_raw_os_error(-errno));
            }
            _ => found.extend(socket_info(body, target)),
        }
        at += align4(length);
    }
    Ok(false)
}

/// One `inet_diag_msg` and its attributes, if it is connected to `target`
/// and carries a `tcp_info`.
fn socket_info(body: &[u8], target: SocketAddr) -> Option<TcpSocketInfo> {
    if body.len() < DIAG_MSG {
        return None;
    }
    // The socket id: ports big-endian, addresses in network order, 16
    // bytes each (an IPv4 address in the first 4).
    let local_port = u16::from_be_bytes([body[4], body[5]]);
    let remote_port = u16::from_be_bytes([body[6], body[7]]);
    let remote = &body[24..40];
    let same_address = match target {
        SocketAddr::V4(v4) => remote[..4] == v4.ip().octets(),
        SocketAddr::V6(v6) => remote == v6.ip().octets(),
    };
    if remote_port != target.port() || !same_address {
        return None;
    }
    let inode = u64::from(u32_at(body, 68));
    let mut at = DIAG_MSG;
    while at + 4 <= body.len() {
        let length = u16::from_ne_bytes([body[at], body[at + 1]]) as usize;
        let kind = u16::from_ne_bytes([body[at + 2], body[at + 3]]);
        if length < 4 || at + length > body.len() {
            return None;
        }
        let info = &body[at + 4..at + length];
        if kind == INET_DIAG_INFO && info.len() >= TCPI_TOTAL_RETRANS + 4 {
            return Some(TcpSocketInfo {
                inode,
                local_port,
                rtt_us: u32_at(info, TCPI_RTT),
                rttvar_us: u32_at(info, TCPI_RTTVAR),
                total_retrans: u32_at(info, TCPI_TOTAL_RETRANS),
            });
        }
        at += align4(length);
    }
    None
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn finds_this_process_connections_to_a_listener_with_their_rtt() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = listener.local_addr().unwrap();
        let mut clients: Vec<TcpStream> = (0..3)
            .map(|_| TcpStream::connect(target).unwrap())
            .collect();
        let mut accepted: Vec<TcpStream> = (0..3).map(|_| listener.accept().unwrap().0).collect();
        // A round trip on each, so that each has an RTT sample.
        for (client, server) in clients.iter_mut().zip(&mut accepted) {
            client.write_all(b"ping").unwrap();
            let mut four = [0u8; 4];
            server.read_exact(&mut four).unwrap();
            server.write_all(b"pong").unwrap();
            client.read_exact(&mut four).unwrap();
        }
        let sockets = tcp_sockets_to(target).expect("sock_diag");
        // The accepted ends are connected to the clients' ports, not to
        // the listener's: only the three client ends are found.
        assert_eq!(sockets.len(), 3, "{sockets:?}");
        let ports: HashSet<u16> = clients
            .iter()
            .map(|c| c.local_addr().unwrap().port())
            .collect();
        let own = own_socket_inodes();
        for socket in &sockets {
            assert!(ports.contains(&socket.local_port), "{socket:?}");
            assert!(own.contains(&socket.inode), "{socket:?}");
            assert!(socket.rtt_us > 0, "{socket:?}");
            assert_eq!(socket.total_retrans, 0, "{socket:?}");
        }
        drop(clients);
        let closed = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        assert!(tcp_sockets_to(closed).unwrap().is_empty());
    }

    #[test]
    fn a_truncated_message_is_an_error_not_a_panic() {
        let target: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let mut short = 40u32.to_ne_bytes().to_vec();
        short.extend_from_slice(&[0u8; 12]);
        assert!(parse(&short, target, &mut Vec::new()).is_err());
        let mut done = 16u32.to_ne_bytes().to_vec();
        done.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
        done.extend_from_slice(&[0u8; 10]);
        assert!(parse(&done, target, &mut Vec::new()).unwrap());
    }
}
