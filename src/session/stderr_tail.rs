//! The last lines a spawned server wrote to stderr, kept in memory: a
//! thread drains the pipe for as long as the server holds it (a server is
//! never blocked on a full pipe) and keeps only the last few non-blank
//! lines, which name why a server failed.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long [`StderrTail::last_lines`] waits for the reader to reach the
/// end of a pipe an exited server closed (its last lines may be in flight).
const DRAIN_WAIT: Duration = Duration::from_millis(200);

/// The tail of one server's stderr.
pub struct StderrTail {
    keep: usize,
    lines: Arc<Mutex<VecDeque<String>>>,
    reader: Mutex<Option<JoinHandle<()>>>,
}

impl StderrTail {
    /// A tail keeping the last `keep` non-blank lines.
    pub fn new(keep: usize) -> StderrTail {
        StderrTail {
            keep,
            lines: Arc::default(),
            reader: Mutex::new(None),
        }
    }

    /// Reads `pipe` to its end on a thread of its own.
    pub fn follow(&self, pipe: impl Read + Send + 'static) {
        let (lines, keep) = (self.lines.clone(), self.keep);
        let reader = std::thread::Builder::new()
            .name("server-stderr".into())
            .spawn(move || {
                for line in BufReader::new(pipe).split(b'\n').map_while(Result::ok) {
                    let line = String::from_utf8_lossy(&line).trim_end().to_string();
                    if line.trim().is_empty() {
                        continue;
                    }
                    let mut lines = lines.lock().unwrap_or_else(|p| p.into_inner());
                    if lines.len() == keep {
                        lines.pop_front();
                    }
                    lines.push_back(line);
                }
            });
        if let Ok(handle) = reader {
            *self.reader.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
        }
    }

    /// The last lines so far, after giving the reader a moment to reach
    /// the end of a closed pipe.
    pub fn last_lines(&self) -> Vec<String> {
        let deadline = Instant::now() + DRAIN_WAIT;
        let reader = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        while reader.as_ref().is_some_and(|r| !r.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_non_blank_lines_of_a_pipe() {
        let tail = StderrTail::new(2);
        assert!(tail.last_lines().is_empty(), "nothing followed yet");
        tail.follow(std::io::Cursor::new(
            b"one\n\ntwo\r\n  \nthree\nfour".to_vec(),
        ));
        assert_eq!(tail.last_lines(), ["three", "four"]);
    }

    #[test]
    fn a_server_that_writes_more_than_a_pipe_holds_is_never_blocked() {
        let tail = StderrTail::new(1);
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 20000 ]; do echo line $i >&2; i=$((i+1)); done",
            ])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        tail.follow(child.stderr.take().expect("a piped stderr"));
        assert!(child.wait().expect("sh ends").success());
        assert_eq!(tail.last_lines(), ["line 19999"]);
    }
}
