//! What the wrk-script tests share: a script file, the built-in target with
//! an access log, the paths it served, running a command line, and a port
//! that tells whether anything connected.

use crate::{one_thread, spawn_target, temp_dir, text, ServerHandle, TargetConfig};
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Writes `code` to a fresh file `name` and returns its path.
pub fn script(name: &str, code: &str) -> PathBuf {
    let path = temp_dir("wrk-lua").join(name);
    std::fs::write(&path, code).unwrap();
    path
}

/// The built-in target (one worker) logging every request to a file.
pub struct LoggedTarget {
    server: ServerHandle,
    /// Its access log (Common Log Format), in a fresh temporary folder.
    pub log: PathBuf,
}

impl LoggedTarget {
    /// Starts it on an ephemeral loopback port.
    pub fn start() -> LoggedTarget {
        let log = temp_dir("wrk-lua-log").join("access.log");
        let server = spawn_target(TargetConfig {
            access_log: Some(stampede_target::AccessLogDest::File(log.clone())),
            ..one_thread()
        });
        LoggedTarget { server, log }
    }

    /// `http://ADDR` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.server.local_addr())
    }

    /// Stops the target (flushing its log) and returns every request it
    /// served as (method, path, status), in order.
    pub fn served(self) -> Vec<(String, String, u16)> {
        self.server.shutdown().unwrap();
        parse_log(&self.log)
    }
}

/// Common Log Format lines: `... "GET /x HTTP/1.1" 200 14`.
fn parse_log(path: &Path) -> Vec<(String, String, u16)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (_, request) = line.split_once('"')?;
            let (request, rest) = request.split_once('"')?;
            let mut words = request.split(' ');
            let (method, target) = (words.next()?, words.next()?);
            let status = rest.split_whitespace().next()?.parse().ok()?;
            Some((method.to_string(), target.to_string(), status))
        })
        .collect()
}

/// How many requests went to each path.
pub fn per_path(served: &[(String, String, u16)]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for (_, path, _) in served {
        *counts.entry(path.clone()).or_insert(0) += 1;
    }
    counts
}

/// Runs `program` with `args`: (status, stdout, stderr).
pub fn run(program: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// Runs the binary under test: (status, stdout, stderr).
pub fn run_binary(args: &[&str]) -> (Option<i32>, String, String) {
    run(crate::binary(), args)
}

/// A listener that records whether anything connected to it, and its URL.
pub fn watched_port() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("an ephemeral port");
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let url = format!(
        "http://{}/",
        listener.local_addr().expect("a bound listener's address")
    );
    (listener, url)
}

/// True when nothing connected to `listener` (after 50 ms for a late one).
pub fn nobody_connected(listener: &TcpListener) -> bool {
    std::thread::sleep(Duration::from_millis(50));
    listener.accept().is_err()
}

/// The lines of `stdout` that start with `prefix`.
pub fn lines_with<'a>(stdout: &'a str, prefix: &str) -> Vec<&'a str> {
    stdout.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// wrk's auth.lua style: `POST /login`, the `Set-Cookie` from its response
/// (the header's name as wrk scripts write it) sent as `Cookie` on `GET
/// /me`, and `thread:stop()` after `stop_after` of those; prints the login
/// response and the last status.
pub fn auth_script(name: &str, stop_after: u32) -> PathBuf {
    script(
        name,
        &format!(
            r#"token = nil
method, path, body = "POST", "/login", "user=ann"
request = function()
   return wrk.format(method, path, nil, body)
end
response = function(status, headers, body)
   if not token and status == 200 then
      token = headers["Set-Cookie"]:match("^([^;]+)")
      print("login " .. status .. " " .. body)
      method, path, body = "GET", "/me", nil
      wrk.headers["Cookie"] = token
   elseif token then
      seen = (seen or 0) + 1
      if seen == {stop_after} then print("me " .. status) wrk.thread:stop() end
   end
end
"#
        ),
    )
}
