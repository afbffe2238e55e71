//! The access log in Common Log Format (`host ident authuser [date] "request" status bytes`).
//! Each worker appends to its own buffer (no lock on the request path) and writes the
//! buffer out when it passes 64 KiB, once a second, and at shutdown.

use std::fs::File;
use std::io::Write;
use std::sync::Arc;

use crate::response::push_num;

/// Buffer size past which a worker writes its lines out without waiting for the tick.
const FLUSH_AT: usize = 64 * 1024;

/// Where the lines end up.
#[derive(Clone)]
pub(crate) enum Sink {
    File(Arc<File>),
    Stdout,
}

/// One worker's access log buffer.
pub(crate) struct AccessLog {
    buf: Vec<u8>,
    sink: Sink,
    /// Write errors so far (the log never stops the server).
    pub errors: u64,
}

/// The fields of one line.
pub(crate) struct Entry<'a> {
    pub peer: &'a [u8],
    pub clf_date: &'a [u8],
    pub method: &'a str,
    pub target: &'a str,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1, 2 for HTTP/2, `None` when the request line was unreadable.
    pub version: Option<u8>,
    pub status: u16,
    pub bytes: usize,
}

impl AccessLog {
    pub(crate) fn new(sink: Sink) -> Self {
        AccessLog {
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            sink,
            errors: 0,
        }
    }

    /// Appends one line; writes the buffer out if it is full.
    pub(crate) fn line(&mut self, e: &Entry) {
        let b = &mut self.buf;
        b.extend_from_slice(e.peer);
        b.extend_from_slice(b" - - ");
        b.extend_from_slice(e.clf_date);
        b.extend_from_slice(b" \"");
        match e.version {
            Some(v) => {
                push_escaped(b, e.method.as_bytes());
                b.push(b' ');
                push_escaped(b, e.target.as_bytes());
                b.extend_from_slice(match v {
                    0 => b" HTTP/1.0",
                    1 => b" HTTP/1.1",
                    2 => b" HTTP/2.0",
                    _ => b" HTTP/3",
                });
            }
            None => b.push(b'-'),
        }
        b.extend_from_slice(b"\" ");
        push_num(b, e.status as u64);
        b.push(b' ');
        if e.bytes == 0 {
            b.push(b'-');
        } else {
            push_num(b, e.bytes as u64);
        }
        b.push(b'\n');
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// Writes the buffered lines out.
    pub(crate) fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let res = match &self.sink {
            // O_APPEND: each worker's write lands whole at the end of the file.
            Sink::File(f) => (&**f).write_all(&self.buf),
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&self.buf).and_then(|_| out.flush())
            }
        };
        if res.is_err() {
            self.errors += 1;
        }
        self.buf.clear();
    }
}

/// Copies bytes, escaping quotes, backslashes and control bytes so a line stays one line.
fn push_escaped(b: &mut Vec<u8>, s: &[u8]) {
    if s.iter()
        .all(|&c| c >= 0x20 && c != b'"' && c != b'\\' && c < 0x7f)
    {
        b.extend_from_slice(s);
        return;
    }
    for &c in s {
        if c < 0x20 || c == b'"' || c == b'\\' || c >= 0x7f {
            b.extend_from_slice(b"\\x");
            b.push(b"0123456789abcdef"[(c >> 4) as usize]);
            b.push(b"0123456789abcdef"[(c & 15) as usize]);
        } else {
            b.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_clf() {
        let mut log = AccessLog::new(Sink::Stdout);
        log.line(&Entry {
            peer: b"127.0.0.1",
            clf_date: b"[10/Oct/2000:13:55:36 +0000]",
            method: "GET",
            target: "/a\"b",
            version: Some(1),
            status: 200,
            bytes: 515,
        });
        assert_eq!(
            log.buf,
            b"127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a\\x22b HTTP/1.1\" 200 515\n"
        );
        log.buf.clear();
    }
}
