//! `--spawn CMD`: start the server under test, wait until its port accepts,
//! monitor it during the load, and stop it afterwards (SIGTERM to its process
//! group, SIGKILL after a grace period). `stampede experiment` starts each
//! variant the same way, with its stderr's last lines kept for the report
//! (stderr_tail.rs).

use crate::session::stderr_tail::StderrTail;
use anyhow::{bail, Context};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a spawned server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long it may take to exit after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A server started by stampede.
pub struct SpawnedServer {
    child: Child,
    /// How messages call it.
    name: String,
}

impl SpawnedServer {
    /// Runs `command` with `sh -c 'exec …'` in its own process group (so the
    /// pid is the server's own) and waits until `addr` accepts connections.
    pub fn start(command: &str, addr: SocketAddr) -> anyhow::Result<SpawnedServer> {
        SpawnedServer::start_with(
            &format!("--spawn '{command}'"),
            command,
            addr,
            Stdio::inherit(),
            None,
        )
    }

    /// As [`SpawnedServer::start`], with the server's stderr followed by
    /// `tail` (its last lines name why a server failed).
    pub fn start_logged(
        command: &str,
        addr: SocketAddr,
        tail: &StderrTail,
    ) -> anyhow::Result<SpawnedServer> {
        SpawnedServer::start_with("the server", command, addr, Stdio::piped(), Some(tail))
    }

    /// `name` is how messages call it (`--spawn 'CMD'`, `the server`).
    fn start_with(
        name: &str,
        command: &str,
        addr: SocketAddr,
        stderr: Stdio,
        tail: Option<&StderrTail>,
    ) -> anyhow::Result<SpawnedServer> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {command}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        if let (Some(tail), Some(pipe)) = (tail, child.stderr.take()) {
            tail.follow(pipe);
        }
        // A forced exit (a second interrupt) skips Drop: it kills the group.
        crate::process::interrupt::kill_on_forced_exit(child.id() as i32);
        let mut server = SpawnedServer {
            child,
            name: name.to_string(),
        };
        let deadline = Instant::now() + READY_TIMEOUT;
        let stop = crate::process::interrupt::stop_handle()?;
        loop {
            if stop.is_stopped() {
                // Interrupted while it starts: the run ends at once (130),
                // and dropping the server stops it.
                return Ok(server);
            }
            if let Some(status) = server.child.try_wait()? {
                bail!("{name} exited before accepting connections ({status})");
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(server);
            }
            if Instant::now() > deadline {
                server.stop();
                bail!(
                    "{name} did not accept connections on {addr} within {}s",
                    READY_TIMEOUT.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How it ended, once it has (a server that died during the load).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stops the server: SIGTERM to its group, then SIGKILL after the grace period.
    pub fn stop(&mut self) {
        let group = self.child.id() as libc::pid_t;
        let _forget = Forget(group);
        // SAFETY: signalling the process group we created; no memory involved.
        unsafe { libc::kill(-group, libc::SIGTERM) };
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("stampede: {} ignored SIGTERM; killing it", self.name);
        // SAFETY: as above.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Takes the group off the forced-exit list once it is stopped, on every
/// return path of [`SpawnedServer::stop`].
struct Forget(libc::pid_t);

impl Drop for Forget {
    fn drop(&mut self) {
        crate::process::interrupt::forget_group(self.0);
    }
}

impl Drop for SpawnedServer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}
