//! `stampede serve` in its own process on a free loopback port, for tests
//! whose server must not share the test's file descriptors or threads
//! (ten thousand idle connections, TLS with a written certificate). Killed
//! when dropped.

use crate::binary::binary;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `stampede serve --threads 1 --port PORT EXTRA...`.
pub struct ServeProcess {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
}

impl ServeProcess {
    /// Starts it with `extra` flags and waits (up to 15 s) until it accepts.
    pub fn start(extra: &[&str]) -> ServeProcess {
        let port = crate::free_port();
        let child = Command::new(binary())
            .args(["serve", "--threads", "1", "--port", &port.to_string()])
            .args(extra)
            .stderr(Stdio::null())
            .spawn()
            .expect("stampede serve starts");
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "stampede serve did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        ServeProcess { child, port }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
