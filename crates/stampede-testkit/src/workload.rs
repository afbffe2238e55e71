//! Shared by the workload integration tests (tests/workload/): the
//! built-in target with an access log, a real nginx with one, the request
//! paths those logs prove were sent, and the outcome invariant every result
//! must keep (`sent = success + failed_status + check_failed + errors +
//! unfinished`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use crate::{binary, free_port, run_stampede, temp_dir, Run};

/// The event loops a workload must behave the same on: the default
/// reactor (io_uring or epoll, whichever `auto` picks here) and tokio.
pub const LOOPS: [Option<&str>; 2] = [None, Some("tokio")];

/// Runs the binary with `args`, on `io` when given.
pub fn run_on(io: Option<&str>, args: &[&str]) -> Run {
    let mut args = args.to_vec();
    if let Some(io) = io {
        args.extend(["--io", io]);
    }
    run_stampede(binary(), &args)
}

/// `stampede serve` (one worker, a free port) writing its access log into
/// `dir`; stopped with SIGTERM, which writes the log buffers out.
pub struct LoggedTarget {
    child: Child,
    addr: String,
    /// Its access log, `dir/access.log` (Common Log Format).
    pub log: PathBuf,
}

impl LoggedTarget {
    /// Starts it and reads the address it listens on from its first line.
    pub fn start(dir: &Path) -> LoggedTarget {
        LoggedTarget::start_with(dir, &["--port", "0"])
    }

    /// As [`LoggedTarget::start`], with more `serve` arguments (`--port`
    /// given there, `--root DIR`).
    pub fn start_with(dir: &Path, args: &[&str]) -> LoggedTarget {
        let log = dir.join("access.log");
        let mut child = Command::new(binary())
            .arg("serve")
            .args(args)
            .args(["--threads", "1", "--access-log"])
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("stampede serve starts");
        // "stampede serve: listening on http://127.0.0.1:PORT, 1 worker ..."
        let stderr = child.stderr.take().expect("piped stderr");
        let mut reader = BufReader::new(stderr);
        let mut first = String::new();
        reader
            .read_line(&mut first)
            .expect("stampede serve prints where it listens");
        // Keep draining: a closed pipe would fail the server's later lines.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string();
        LoggedTarget { child, addr, log }
    }

    /// `http://ADDR` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stops the target and returns the request paths it logged, in order.
    pub fn stop_and_paths(mut self) -> Vec<String> {
        self.stop();
        logged_paths(&self.log)
    }

    /// Stops the target (the log is complete afterwards).
    pub fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
            let _ = self.child.wait();
        }
    }
}

impl Drop for LoggedTarget {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The request target (path and query) of every Common Log Format line:
/// `host - - [date] "GET /path HTTP/1.1" status bytes`.
pub fn logged_paths(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let request = line.split('"').nth(1)?;
            request.split(' ').nth(1).map(str::to_string)
        })
        .collect()
}

/// The status of every logged line whose request path starts with `prefix`.
pub fn logged_statuses(log: &Path, prefix: &str) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut quoted = line.split('"');
            let request = quoted.nth(1)?;
            let path = request.split(' ').nth(1)?;
            let status = quoted.next()?.split_whitespace().next()?;
            path.starts_with(prefix).then(|| status.to_string())
        })
        .collect()
}

/// A real nginx on a free loopback port: every path answers 200 with
/// `ok <uri>`, each request logged (`$request_uri $status`) to its own file.
pub struct Nginx {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Nginx {
    /// Starts `program` with its config, log and temporary files in `dir`;
    /// waits until it listens.
    pub fn start(program: &Path, dir: &Path) -> Nginx {
        let port = free_port();
        let log = dir.join("nginx-access.log");
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  client_body_temp_path {dir}/body;\n  proxy_temp_path {dir}/proxy;\n\
               fastcgi_temp_path {dir}/fastcgi;\n  uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
               log_format uri '\"GET $request_uri HTTP/1.1\" $status';\n\
               access_log {log} uri;\n\
               server {{\n    listen 127.0.0.1:{port};\n\
                 location / {{ return 200 \"ok $uri\\n\"; }}\n  }}\n}}\n",
            dir = dir.display(),
            log = log.display(),
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).expect("write nginx.conf");
        let child = Command::new(program)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        wait_for_port(port);
        Nginx { child, port, log }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Stops nginx (SIGTERM: the master stops its worker and flushes) and
    /// returns the logged request paths.
    pub fn stop_and_paths(mut self) -> Vec<String> {
        self.stop();
        logged_paths(&self.log)
    }

    fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// Waits (up to 20 s) until a connect to `port` on loopback works.
fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes `text` to `dir/name` and returns the path as a string.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a test file");
    path.display().to_string()
}

/// The `checks[]` entry for `check` (on `step`, when given).
pub fn check_entry<'a>(run: &'a Run, check: &str, step: Option<&str>) -> &'a serde_json::Value {
    run.result()["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no checks[] in {}", run.result()))
        .iter()
        .find(|c| c["check"] == check && step.is_none_or(|s| c["step"] == s))
        .unwrap_or_else(|| panic!("no check {check:?} in {}", run.result()["checks"]))
}

/// `(passed, failed)` of a check.
pub fn tally(run: &Run, check: &str, step: Option<&str>) -> (u64, u64) {
    let entry = check_entry(run, check, step);
    (
        entry["passed"].as_u64().unwrap_or(0),
        entry["failed"].as_u64().unwrap_or(0),
    )
}

/// A usage error: exit 2, and a stderr that says `needle` with no panic.
pub fn assert_usage_error(run: &Run, needle: &str) {
    let stderr = run.stderr();
    assert_eq!(run.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains(needle), "expected {needle:?} in: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
}
