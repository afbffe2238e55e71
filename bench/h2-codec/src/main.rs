//! The client side's cost per request, for callgrind (bench/h2-codec.sh):
//! `h2-codec-cost codec|h2 N` sends N GETs one after another on one
//! connection to an in-memory server that answers each with canned frames
//! (HEADERS `:status 200` plus four literal fields, DATA of 13 octets with
//! END_STREAM). `codec` drives stampede-h2 directly; `h2` drives the `h2`
//! crate's client on a current-thread tokio runtime over an in-memory
//! AsyncRead/AsyncWrite, as the engine does today. No socket, no syscall:
//! only the HTTP/2 client's own work (and tokio's, for `h2`) is counted.
//! Run it for two values of N and divide the difference.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use stampede_h2::frame::{self, Head};
use stampede_h2::{Config, Connection, Event, RequestBlock};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const BODY: &[u8] = b"hello, world\n";

/// A response header block: `:status 200` indexed, then literals without
/// indexing (raw strings) for content-length, content-type, server, date.
fn response_block() -> Vec<u8> {
    let mut b = vec![0x88];
    for (index, value) in [
        (28u8, "13"),
        (31, "text/plain"),
        (54, "nginx/1.22.1"),
        (33, "Fri, 04 Dec 2026 19:00:00 GMT"),
    ] {
        b.push(0x0f);
        b.push(index - 15);
        b.push(value.len() as u8);
        b.extend_from_slice(value.as_bytes());
    }
    b
}

/// The frames answering `stream`.
fn answer(out: &mut Vec<u8>, block: &[u8], stream: u32) {
    frame::write_head(out, block.len(), frame::HEADERS, frame::END_HEADERS, stream);
    out.extend_from_slice(block);
    frame::write_head(out, BODY.len(), frame::DATA, frame::END_STREAM, stream);
    out.extend_from_slice(BODY);
}

/// The in-memory server: reads the client's frames, answers SETTINGS with
/// an ACK and each request's HEADERS with `answer`.
struct Server {
    block: Vec<u8>,
    written: Vec<u8>,
    preface_seen: bool,
    to_client: Vec<u8>,
}

impl Server {
    fn new() -> Server {
        let mut to_client = Vec::new();
        frame::write_settings(
            &mut to_client,
            &[(frame::setting::MAX_CONCURRENT_STREAMS, 128)],
        );
        Server {
            block: response_block(),
            written: Vec::new(),
            preface_seen: false,
            to_client,
        }
    }

    fn read_client(&mut self, bytes: &[u8]) {
        self.written.extend_from_slice(bytes);
        let mut at = 0;
        if !self.preface_seen {
            if self.written.len() < frame::PREFACE.len() {
                return;
            }
            at = frame::PREFACE.len();
            self.preface_seen = true;
        }
        while self.written.len() - at >= frame::HEADER_LEN {
            let head = Head::parse(&self.written[at..]);
            if self.written.len() - at < frame::HEADER_LEN + head.len {
                break;
            }
            match head.kind {
                frame::SETTINGS if head.flags & frame::ACK == 0 => {
                    frame::write_head(&mut self.to_client, 0, frame::SETTINGS, frame::ACK, 0)
                }
                frame::HEADERS if head.flags & frame::END_STREAM != 0 => {
                    answer(&mut self.to_client, &self.block, head.stream)
                }
                _ => {}
            }
            at += frame::HEADER_LEN + head.len;
        }
        self.written.drain(..at);
    }
}

fn codec(n: u64) -> u64 {
    let mut server = Server::new();
    let mut conn = Connection::new(Config::default());
    let get = RequestBlock::new(
        "GET",
        "http",
        "bench.test",
        "/",
        &[("user-agent", "stampede")],
    )
    .unwrap();
    let mut finished = 0;
    for _ in 0..n {
        conn.start(&get, None).unwrap();
        server.read_client(conn.output());
        let written = conn.output().len();
        conn.consume_output(written);
        let input = std::mem::take(&mut server.to_client);
        conn.receive(&input, &mut |e| {
            if let Event::Ended { .. } = e {
                finished += 1;
            }
        })
        .unwrap();
        server.to_client = input;
        server.to_client.clear();
    }
    finished
}

/// The server as tokio I/O for the `h2` crate.
struct MemoryIo {
    server: Server,
    read_at: usize,
    reader: Option<Waker>,
}

impl AsyncRead for MemoryIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let ready = &this.server.to_client[this.read_at..];
        if ready.is_empty() {
            this.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = ready.len().min(buf.remaining());
        buf.put_slice(&ready[..n]);
        this.read_at += n;
        if this.read_at == this.server.to_client.len() {
            this.server.to_client.clear();
            this.read_at = 0;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for MemoryIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.server.read_client(buf);
        if let Some(w) = self.reader.take() {
            w.wake();
        }
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn h2_crate(n: u64) -> u64 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let io = MemoryIo {
            server: Server::new(),
            read_at: 0,
            reader: None,
        };
        let (mut client, connection) = h2::client::handshake(io).await.unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut finished = 0;
        for _ in 0..n {
            let request = http::Request::get("http://bench.test/")
                .header("user-agent", "stampede")
                .body(())
                .unwrap();
            client = client.ready().await.unwrap();
            let (response, _) = client.send_request(request, true).unwrap();
            let mut body = response.await.unwrap().into_body();
            while let Some(chunk) = body.data().await {
                let chunk = chunk.unwrap();
                body.flow_control().release_capacity(chunk.len()).unwrap();
            }
            finished += 1;
        }
        finished
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(which), Some(n)) = (args.get(1), args.get(2).and_then(|n| n.parse::<u64>().ok()))
    else {
        eprintln!("usage: h2-codec-cost codec|h2 N");
        std::process::exit(2);
    };
    let finished = match which.as_str() {
        "codec" => codec(n),
        "h2" => h2_crate(n),
        _ => {
            eprintln!("usage: h2-codec-cost codec|h2 N");
            std::process::exit(2);
        }
    };
    assert_eq!(finished, n, "every request answered");
    println!("{which}: {finished} requests");
}
