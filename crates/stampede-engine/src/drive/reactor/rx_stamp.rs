//! Kernel receive times for `--batch-reads`. A batched read finds an answer
//! up to a pace window after it came; stamped when read, the wait would be
//! counted as the server's. With SO_TIMESTAMPNS the kernel stamps each
//! segment as it arrives (a software stamp, CLOCK_REALTIME), and a read
//! returns the stamp in a control message; the answer's first byte and end
//! take that time. Only runs with `--batch-reads` ask for it: any other run
//! reads with plain recv, as before.
//!
//! For TCP the stamp is the receive time of the last segment the read
//! consumed: `tcp_recvmsg_locked` (net/ipv4/tcp.c) calls
//! `tcp_update_recv_tstamps` for every skb it copies from, and
//! `tcp_recv_timestamp` puts the last one in one SCM_TIMESTAMPNS message
//! ("similar to __sock_recv_timestamp, but does not require an skb").
//! Segments coalesced in the receive queue keep the later stamp
//! (`tcp_try_coalesce`). So a response in one read is stamped when its last
//! byte arrived; over TLS, when the last ciphertext of that read did.
//!
//! The kernel's clock is CLOCK_REALTIME, the engine's `Instant` is
//! CLOCK_MONOTONIC: [`RxStamps::woke`] reads both once per wake-up, and a
//! stamp becomes an `Instant` by its distance from that reading. A stamp is
//! kept between the request's send and the read (a clock step or slew in
//! between cannot move an answer out of its exchange); a read without one
//! (a Unix socket, a kernel that did not stamp) keeps the read time.

use std::cell::Cell;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Room for the control messages of a read: one SCM_TIMESTAMPNS is a
/// cmsghdr (16 bytes) and a timespec (16). 64 leaves room for another the
/// kernel might add.
pub(super) const CONTROL_BYTES: usize = 64;

/// A kernel receive stamp: nanoseconds of CLOCK_REALTIME.
pub(super) type KernelStamp = i64;

/// Both clocks read at one instant of a wake-up.
#[derive(Debug, Clone, Copy)]
struct ClockPair {
    at: Instant,
    real_ns: i64,
}

impl ClockPair {
    fn read() -> ClockPair {
        ClockPair {
            real_ns: realtime_ns(),
            at: Instant::now(),
        }
    }

    /// `stamp` on the monotonic clock, by its distance from this pair.
    fn instant(&self, stamp: KernelStamp) -> Option<Instant> {
        let delta = stamp.saturating_sub(self.real_ns);
        let distance = Duration::from_nanos(delta.unsigned_abs());
        if delta >= 0 {
            self.at.checked_add(distance)
        } else {
            self.at.checked_sub(distance)
        }
    }
}

/// What a reactor worker keeps to stamp answers with their kernel receive
/// time: the clock pair of its latest wake-up, and (io_uring) the msghdr
/// its multishot recvmsgs take, which lives as long as the worker.
pub(crate) struct RxStamps {
    clock: Cell<ClockPair>,
    multishot: libc::msghdr,
    /// A socket that asks for stamps as long as the worker lives: the
    /// kernel stamps arriving packets only while some socket asks, and
    /// turns that on a moment after the first does (a static key flipped
    /// by deferred work), so connections that come and go would leave
    /// their first answers unstamped.
    _keeper: Option<OwnedFd>,
}

impl std::fmt::Debug for RxStamps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxStamps")
            .field("clock", &self.clock.get())
            .finish_non_exhaustive()
    }
}

impl RxStamps {
    pub(crate) fn new() -> RxStamps {
        // SAFETY: an all-zero msghdr is a valid empty one.
        let mut multishot: libc::msghdr = unsafe { std::mem::zeroed() };
        // No name; room for the control messages, which the kernel puts in
        // each buffer before the data.
        multishot.msg_controllen = CONTROL_BYTES as _;
        // SAFETY: socket() takes plain integers; the result is checked.
        let keeper =
            unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        // SAFETY: a new fd, owned here only.
        let keeper = (keeper >= 0).then(|| unsafe { OwnedFd::from_raw_fd(keeper) });
        if let Some(fd) = &keeper {
            enable(fd.as_raw_fd());
        }
        RxStamps {
            clock: Cell::new(ClockPair::read()),
            multishot,
            _keeper: keeper,
        }
    }

    /// The msghdr of an io_uring multishot recvmsg (IORING_OP_RECVMSG):
    /// it must outlive the request's submission, as `self` does.
    pub(super) fn multishot_header(&self) -> *const libc::msghdr {
        &self.multishot
    }

    /// A multishot recvmsg's buffer split into its data and stamp; `None`
    /// when it is not one (shorter than its header).
    pub(super) fn split_multishot<'a>(
        &self,
        buffer: &'a [u8],
    ) -> Option<(&'a [u8], Option<KernelStamp>)> {
        // struct io_uring_recvmsg_out: namelen, controllen, payloadlen, flags
        // (u32 each); then the name (none here), the control field, the data.
        let word = |i: usize| -> Option<usize> {
            let bytes = buffer.get(i * 4..i * 4 + 4)?;
            Some(u32::from_ne_bytes(bytes.try_into().ok()?) as usize)
        };
        let (controllen, payloadlen) = (word(1)?, word(2)?);
        let data_start = 16 + CONTROL_BYTES;
        let control = buffer.get(16..16 + controllen.min(CONTROL_BYTES))?;
        let data = buffer.get(data_start..)?;
        Some((&data[..payloadlen.min(data.len())], stamp_in(control)))
    }

    /// The worker woke up: the clocks are read again (the realtime clock
    /// may be slewed, so the pair is never older than a wake-up).
    pub(crate) fn woke(&self) {
        self.clock.set(ClockPair::read());
    }

    /// When what a read at `read_at` returned arrived: its kernel `stamp`
    /// on the monotonic clock, kept between `sent` (the request's send)
    /// and `read_at`; `read_at` when there is no stamp.
    pub(crate) fn arrived(
        &self,
        stamp: Option<KernelStamp>,
        sent: Instant,
        read_at: Instant,
    ) -> Instant {
        match stamp.and_then(|stamp| self.clock.get().instant(stamp)) {
            Some(at) => at.max(sent).min(read_at),
            None => read_at,
        }
    }
}

fn realtime_ns() -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    now.tv_sec.saturating_mul(1_000_000_000) + now.tv_nsec
}

/// Asks the kernel to stamp what `fd` receives. A failure leaves reads
/// unstamped (stamped when read), which is what the run did before.
pub(super) fn enable(fd: RawFd) {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt reads one c_int from `on`.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Receives into `buffer` (as socket::recv) and the kernel's stamp of the
/// last segment read, if it gave one.
pub(super) fn recv(fd: RawFd, buffer: &mut [u8]) -> io::Result<(usize, Option<KernelStamp>)> {
    let mut control = [0u64; CONTROL_BYTES / 8];
    let mut iov = libc::iovec {
        iov_base: buffer.as_mut_ptr().cast(),
        iov_len: buffer.len(),
    };
    // SAFETY: an all-zero msghdr is a valid empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    loop {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = CONTROL_BYTES as _;
        // SAFETY: the kernel writes at most `buffer.len()` bytes into the
        // buffer and `msg_controllen` bytes into `control`, both live.
        let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
        if n >= 0 {
            let written = (msg.msg_controllen as usize).min(CONTROL_BYTES);
            // SAFETY: `control` is CONTROL_BYTES of plain memory.
            let bytes =
                unsafe { std::slice::from_raw_parts(control.as_ptr().cast::<u8>(), written) };
            return Ok((n as usize, stamp_in(bytes)));
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// The SCM_TIMESTAMPNS stamp among control messages (`msg_control` as
/// the kernel filled it: a recvmsg's, or an io_uring multishot recvmsg's).
pub(super) fn stamp_in(control: &[u8]) -> Option<KernelStamp> {
    let header = size_of::<libc::cmsghdr>();
    let mut at = 0;
    while at + header <= control.len() {
        // SAFETY: a cmsghdr's bytes are inside `control` (checked above).
        let cmsg: libc::cmsghdr =
            unsafe { std::ptr::read_unaligned(control.as_ptr().add(at).cast()) };
        let len = cmsg.cmsg_len as usize;
        if len < header || at + len > control.len() {
            return None;
        }
        if cmsg.cmsg_level == libc::SOL_SOCKET
            && cmsg.cmsg_type == libc::SCM_TIMESTAMPNS
            && len >= header + size_of::<libc::timespec>()
        {
            // SAFETY: the timespec follows the header, inside `control`.
            let ts: libc::timespec =
                unsafe { std::ptr::read_unaligned(control.as_ptr().add(at + header).cast()) };
            return Some(ts.tv_sec.saturating_mul(1_000_000_000) + ts.tv_nsec);
        }
        // The next message starts at the length rounded up to a word.
        at += (len + size_of::<usize>() - 1) & !(size_of::<usize>() - 1);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_stamp_is_placed_by_its_distance_from_the_wake_up() {
        let stamps = RxStamps::new();
        let pair = stamps.clock.get();
        let sent = pair.at - Duration::from_millis(50);
        let read_at = pair.at + Duration::from_millis(1);
        // 20 ms before the wake-up on the realtime clock.
        let stamp = pair.real_ns - 20_000_000;
        let at = stamps.arrived(Some(stamp), sent, read_at);
        assert_eq!(pair.at - at, Duration::from_millis(20));
        // No stamp: the read time.
        assert_eq!(stamps.arrived(None, sent, read_at), read_at);
        // Never before the send, never after the read.
        let early = pair.real_ns - 1_000_000_000;
        assert_eq!(stamps.arrived(Some(early), sent, read_at), sent);
        let late = pair.real_ns + 1_000_000_000;
        assert_eq!(stamps.arrived(Some(late), sent, read_at), read_at);
    }

    #[test]
    fn control_messages_are_walked_to_the_timestamp() {
        let header = size_of::<libc::cmsghdr>();
        let mut control = vec![0u8; CONTROL_BYTES];
        // One message of another kind first (4 bytes of data, padded).
        let other = libc::cmsghdr {
            cmsg_len: (header + 4) as _,
            cmsg_level: libc::SOL_SOCKET,
            cmsg_type: libc::SCM_RIGHTS,
        };
        let stamp = libc::cmsghdr {
            cmsg_len: (header + size_of::<libc::timespec>()) as _,
            cmsg_level: libc::SOL_SOCKET,
            cmsg_type: libc::SCM_TIMESTAMPNS,
        };
        let ts = libc::timespec {
            tv_sec: 3,
            tv_nsec: 7,
        };
        let second = header + 8;
        // SAFETY: every write is inside `control` (16 + 8 + 16 + 16 <= 64).
        unsafe {
            let base = control.as_mut_ptr();
            std::ptr::write_unaligned(base.cast(), other);
            std::ptr::write_unaligned(base.add(second).cast(), stamp);
            std::ptr::write_unaligned(base.add(second + header).cast(), ts);
        }
        let used = second + header + size_of::<libc::timespec>();
        assert_eq!(stamp_in(&control[..used]), Some(3_000_000_007));
        assert_eq!(stamp_in(&control[..second]), None, "no stamp");
        assert_eq!(stamp_in(&control[..used - 1]), None, "cut short");
    }

    #[test]
    fn a_multishot_buffer_splits_into_data_and_stamp() {
        let stamps = RxStamps::new();
        let header = size_of::<libc::cmsghdr>();
        // io_uring_recvmsg_out: no name, 32 bytes of control, 5 of data.
        let mut buffer = Vec::new();
        for word in [0u32, (header + 16) as u32, 5, 0] {
            buffer.extend_from_slice(&word.to_ne_bytes());
        }
        let mut control = vec![0u8; CONTROL_BYTES];
        let cmsg = libc::cmsghdr {
            cmsg_len: (header + size_of::<libc::timespec>()) as _,
            cmsg_level: libc::SOL_SOCKET,
            cmsg_type: libc::SCM_TIMESTAMPNS,
        };
        let ts = libc::timespec {
            tv_sec: 1,
            tv_nsec: 2,
        };
        // SAFETY: both writes are inside `control` (16 + 16 <= 64).
        unsafe {
            std::ptr::write_unaligned(control.as_mut_ptr().cast(), cmsg);
            std::ptr::write_unaligned(control.as_mut_ptr().add(header).cast(), ts);
        }
        buffer.extend_from_slice(&control);
        buffer.extend_from_slice(b"HTTP/");
        let (data, stamp) = stamps.split_multishot(&buffer).expect("a recvmsg buffer");
        assert_eq!(data, b"HTTP/");
        assert_eq!(stamp, Some(1_000_000_002));
        // The end of the stream: no data.
        buffer[8..12].copy_from_slice(&0u32.to_ne_bytes());
        let (data, _) = stamps
            .split_multishot(&buffer[..16 + CONTROL_BYTES])
            .unwrap();
        assert!(data.is_empty());
        assert!(stamps.split_multishot(&buffer[..12]).is_none(), "no header");
    }

    /// The kernel stamps a TCP segment when it arrives, not when it is read.
    #[test]
    fn a_tcp_read_carries_the_arrival_time() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        enable(client.as_raw_fd());
        let stamps = RxStamps::new();
        // The kernel turns stamping on a moment after the first socket asks.
        std::thread::sleep(Duration::from_millis(50));
        let sent = Instant::now();
        server.write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        stamps.woke();
        let mut buffer = [0u8; 64];
        let (n, stamp) = recv(client.as_raw_fd(), &mut buffer).unwrap();
        let read_at = Instant::now();
        assert_eq!(&buffer[..n], b"HTTP/1.1 200 OK\r\n");
        let at = stamps.arrived(stamp, sent, read_at);
        let waited = read_at - at;
        assert!(
            waited >= Duration::from_millis(25),
            "stamped at arrival, {waited:?} before the read"
        );
        drop(server);
        let mut rest = Vec::new();
        let mut client = client;
        client.read_to_end(&mut rest).unwrap();
    }
}
