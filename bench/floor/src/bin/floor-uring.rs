//! The leanest io_uring client: SINGLE_ISSUER | DEFER_TASKRUN, one multishot
//! receive per connection into a provided buffer ring, one send per request,
//! one io_uring_enter per batch.

use floor_probes::{fail, Args};
use io_uring::types::BufRingEntry;
use io_uring::{cqueue, opcode, types, IoUring};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Instant;

const BUFFERS: u16 = 1024;
const BUFFER_BYTES: usize = 4096;
const RECEIVE: u64 = 1;

fn main() {
    let args = Args::from_env();
    let request = args.request();
    let mut ring: IoUring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_cqsize(8192)
        .build(4096)
        .unwrap_or_else(|e| fail(&format!("io_uring: {e}")));
    // SAFETY: an anonymous mapping, checked; it lives until the process exits.
    let descriptors = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            usize::from(BUFFERS) * 16,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
            -1,
            0,
        )
    };
    if descriptors == libc::MAP_FAILED {
        fail("mmap failed");
    }
    let descriptors = descriptors as *mut BufRingEntry;
    let mut memory = vec![0u8; usize::from(BUFFERS) * BUFFER_BYTES];
    // SAFETY: the descriptors stay mapped for the life of the ring.
    unsafe { ring.submitter().register_buf_ring_with_flags(descriptors as u64, BUFFERS, 0, 0) }
        .unwrap_or_else(|e| fail(&format!("buffer ring: {e}")));
    let mut tail: u16 = 0;
    let mut give_back = |tail: &mut u16, id: u16| {
        // SAFETY: the index is masked into the mapping.
        let entry = unsafe { &mut *descriptors.add(usize::from(*tail & (BUFFERS - 1))) };
        entry.set_addr(memory[usize::from(id) * BUFFER_BYTES..].as_mut_ptr() as u64);
        entry.set_len(BUFFER_BYTES as u32);
        entry.set_bid(id);
        *tail = tail.wrapping_add(1);
    };
    let publish = |tail: u16| {
        // SAFETY: the tail overlays the first descriptor, inside the mapping.
        unsafe { (*(BufRingEntry::tail(descriptors) as *const AtomicU16)).store(tail, Ordering::Release) }
    };
    for id in 0..BUFFERS {
        give_back(&mut tail, id);
    }
    publish(tail);
    let sockets: Vec<TcpStream> = (0..args.connections)
        .map(|_| TcpStream::connect(&args.address).unwrap_or_else(|e| fail(&e.to_string())))
        .collect();
    let receive = |index: usize| {
        opcode::RecvMulti::new(types::Fd(sockets[index].as_raw_fd()), 0)
            .build()
            .user_data((index as u64) << 1 | RECEIVE)
    };
    let send = |index: usize| {
        opcode::Send::new(types::Fd(sockets[index].as_raw_fd()), request.as_ptr(), request.len() as u32)
            .build()
            .user_data((index as u64) << 1)
    };
    let mut queued = Vec::new();
    for index in 0..args.connections {
        queued.push(receive(index));
        queued.push(send(index));
    }
    let mut received = vec![0usize; args.connections];
    let end = Instant::now() + args.duration;
    let mut done = 0u64;
    while Instant::now() < end {
        for entry in queued.drain(..) {
            // SAFETY: the request bytes and sockets outlive the ring's use of them.
            while unsafe { ring.submission().push(&entry) }.is_err() {
                ring.submit().unwrap_or_else(|e| fail(&e.to_string()));
            }
        }
        let timeout = types::Timespec::new().nsec(100_000_000);
        match ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&timeout)) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {}
            Err(e) => fail(&e.to_string()),
        }
        for completion in ring.completion() {
            let index = (completion.user_data() >> 1) as usize;
            let result = completion.result();
            if completion.user_data() & RECEIVE == 0 {
                if result < 0 {
                    fail(&format!("send: {}", std::io::Error::from_raw_os_error(-result)));
                }
                continue;
            }
            if result <= 0 {
                fail(&format!("receive: {result}"));
            }
            if let Some(id) = cqueue::buffer_select(completion.flags()) {
                give_back(&mut tail, id);
            }
            if !cqueue::more(completion.flags()) {
                queued.push(receive(index));
            }
            received[index] += result as usize;
            if received[index] >= args.response_bytes {
                received[index] -= args.response_bytes;
                done += 1;
                queued.push(send(index));
            }
        }
        publish(tail);
    }
    println!("floor-uring: {done} responses");
}
