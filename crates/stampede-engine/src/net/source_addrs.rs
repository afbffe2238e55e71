//! `--source-addrs`: connections spread round-robin over several local
//! addresses. Each local address has its own ephemeral port range, so
//! 127.0.0.2–127.0.0.9 gives eight times the ~28k ports of one address pair.
//! IP_BIND_ADDRESS_NO_PORT defers the port choice to connect(), where the
//! kernel picks per 4-tuple instead of reserving a port per bind.

use std::cell::Cell;
use std::io;
use std::net::{IpAddr, SocketAddr};
use tokio::net::{TcpSocket, TcpStream};

/// Linux's IP_BIND_ADDRESS_NO_PORT (not in every libc crate version).
const IP_BIND_ADDRESS_NO_PORT: libc::c_int = 24;

/// A worker's rotation over the local addresses.
#[derive(Debug, Default)]
pub(crate) struct SourceAddrs {
    addrs: Vec<IpAddr>,
    next: Cell<usize>,
}

impl SourceAddrs {
    /// Starts at `offset` so that workers do not all begin on the same address.
    pub(crate) fn new(addrs: Vec<IpAddr>, offset: usize) -> SourceAddrs {
        let start = if addrs.is_empty() {
            0
        } else {
            offset % addrs.len()
        };
        SourceAddrs {
            addrs,
            next: Cell::new(start),
        }
    }

    /// The next local address to connect from, when there are any.
    pub(crate) fn take(&self) -> Option<IpAddr> {
        let addr = *self.addrs.get(self.next.get())?;
        self.next.set((self.next.get() + 1) % self.addrs.len());
        Some(addr)
    }

    /// Connects to `target`, from the next local address when there are any.
    pub(crate) async fn connect(&self, target: SocketAddr) -> io::Result<TcpStream> {
        let Some(local) = self.take() else {
            return TcpStream::connect(target).await;
        };
        let socket = match local {
            IpAddr::V4(_) => TcpSocket::new_v4()?,
            IpAddr::V6(_) => TcpSocket::new_v6()?,
        };
        if local.is_ipv4() {
            defer_port_choice(std::os::fd::AsRawFd::as_raw_fd(&socket));
        }
        socket.bind(SocketAddr::new(local, 0))?;
        socket.connect(target).await
    }
}

/// Sets IP_BIND_ADDRESS_NO_PORT on an IPv4 socket about to bind to a local
/// address. Best effort: without it, bind() reserves a port per local address.
pub(crate) fn defer_port_choice(fd: std::os::fd::RawFd) {
    let enable: libc::c_int = 1;
    // SAFETY: setsockopt on a socket the caller owns, with a c_int that outlives the call.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            IP_BIND_ADDRESS_NO_PORT,
            (&enable as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_from_the_offset() {
        let addrs: Vec<IpAddr> = ["127.0.0.2", "127.0.0.3"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let rotation = SourceAddrs::new(addrs.clone(), 1);
        assert_eq!(rotation.take(), Some(addrs[1]));
        assert_eq!(rotation.take(), Some(addrs[0]));
        assert_eq!(SourceAddrs::new(Vec::new(), 3).take(), None);
    }
}
