//! Test helpers: start a server on 127.0.0.1:0, send raw bytes over std TcpStream,
//! and read HTTP/1.1 responses (Content-Length, chunked or close-delimited) exactly.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use stampede_target::{Config, Server, ServerHandle};

pub fn start(cfg: Config) -> ServerHandle {
    Server::start("127.0.0.1:0".parse().unwrap(), cfg).expect("server starts")
}

pub fn small() -> Config {
    Config {
        threads: 2,
        ..Config::default()
    }
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Reads one response from a stream that may hold more (keeps the leftovers in `buf`).
pub struct Reader {
    pub s: TcpStream,
    buf: Vec<u8>,
}

impl Reader {
    pub fn new(s: TcpStream) -> Self {
        Reader { s, buf: Vec::new() }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).unwrap();
    }

    fn fill(&mut self) -> usize {
        let mut tmp = [0u8; 65536];
        let n = self.s.read(&mut tmp).unwrap_or(0);
        self.buf.extend_from_slice(&tmp[..n]);
        n
    }

    fn line(&mut self) -> Option<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let l = String::from_utf8_lossy(&self.buf[..i]).into_owned();
                self.buf.drain(..i + 2);
                return Some(l);
            }
            if self.fill() == 0 {
                return None;
            }
        }
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            if self.fill() == 0 {
                panic!("eof with {} of {n} body bytes", self.buf.len());
            }
        }
        self.buf.drain(..n).collect()
    }

    /// Reads one response; `head_request` when it answers a HEAD (no body).
    pub fn read(&mut self, head_request: bool) -> Option<Resp> {
        let mut head = String::new();
        loop {
            let l = self.line()?;
            if l.is_empty() {
                break;
            }
            head.push_str(&l);
            head.push_str("\r\n");
        }
        let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
        let mut r = Resp {
            status,
            head,
            body: Vec::new(),
        };
        if head_request || status == 204 || status == 304 || status < 200 {
            return Some(r);
        }
        if r.header("transfer-encoding").is_some() {
            loop {
                let size =
                    usize::from_str_radix(self.line()?.split(';').next()?.trim(), 16).ok()?;
                if size == 0 {
                    while !self.line()?.is_empty() {}
                    break;
                }
                let chunk = self.take(size);
                r.body.extend_from_slice(&chunk);
                self.take(2);
            }
        } else if let Some(n) = r.header("content-length") {
            r.body = self.take(n.parse().ok()?);
        } else {
            while self.fill() > 0 {}
            r.body = std::mem::take(&mut self.buf);
        }
        Some(r)
    }

    /// Reads one response's head only (a stream's body follows chunk by chunk).
    pub fn read_head(&mut self) -> Option<Resp> {
        let mut head = String::new();
        loop {
            let l = self.line()?;
            if l.is_empty() {
                break;
            }
            head.push_str(&l);
            head.push_str("\r\n");
        }
        let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
        Some(Resp {
            status,
            head,
            body: Vec::new(),
        })
    }

    /// The next chunk of a chunked body; `None` at its last (empty) chunk.
    pub fn next_chunk(&mut self) -> Option<Vec<u8>> {
        let size = usize::from_str_radix(self.line()?.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            while !self.line()?.is_empty() {}
            return None;
        }
        let chunk = self.take(size);
        self.take(2);
        Some(chunk)
    }

    /// True when the server closed the connection (EOF) within the read timeout.
    pub fn closed(&mut self) -> bool {
        self.buf.is_empty() && self.fill() == 0
    }
}

/// One request on a fresh connection, one response.
pub fn get(addr: SocketAddr, raw: &str) -> Resp {
    let mut r = Reader::new(connect(addr));
    r.send(raw.as_bytes());
    r.read(raw.starts_with("HEAD ")).expect("a response")
}
