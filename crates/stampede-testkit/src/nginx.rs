//! A real nginx configured by the test that needs it (tests/engine/conn_lifetime_nginx.rs,
//! tests/protocols/dns.rs, tests/protocols/dns_netns.rs): its `listen` lines, one access-log
//! format (nginx variables such as `$connection`, `$server_addr`), extra
//! `http` directives, and optionally a network namespace to run in. Every
//! path answers 200 `ok`. The log is read as whitespace-separated fields.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How one nginx is set up.
pub struct Setup<'a> {
    /// What follows `listen` in each listen line, e.g. `127.0.0.1:8080`,
    /// `[::1]:8080`, `8080 http2`.
    pub listens: Vec<String>,
    /// The access log's format, e.g. `$connection $server_addr`.
    pub log_format: &'a str,
    /// More directives of the `http` block, e.g. `keepalive_requests 5;`.
    pub http_extra: &'a str,
    /// Run inside this network namespace (`ip netns exec`).
    pub netns: Option<&'a str>,
}

/// A running nginx, stopped when dropped.
pub struct Nginx {
    child: Child,
    /// Its access log, in `dir` (one line per request, in `log_format`).
    pub log: PathBuf,
}

impl Nginx {
    /// Starts nginx; `ready` says when it listens (a connect that works).
    pub fn start(program: &Path, dir: &Path, setup: &Setup, ready: impl Fn() -> bool) -> Nginx {
        let log = dir.join("access.log");
        let listens: String = setup
            .listens
            .iter()
            .map(|l| format!("    listen {l};\n"))
            .collect();
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
             events {{ worker_connections 512; }}\n\
             http {{\n  client_body_temp_path {dir}/body;\n  proxy_temp_path {dir}/proxy;\n\
               fastcgi_temp_path {dir}/fastcgi;\n  uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
               log_format fields '{format}';\n  access_log {log} fields;\n  {extra}\n\
               server {{\n{listens}    location / {{ return 200 \"ok\\n\"; }}\n  }}\n}}\n",
            dir = dir.display(),
            log = log.display(),
            format = setup.log_format,
            extra = setup.http_extra,
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).expect("write nginx.conf");
        let mut command = match setup.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(program);
                c
            }
            None => Command::new(program),
        };
        let child = command
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready() {
            assert!(Instant::now() < deadline, "nginx does not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx { child, log }
    }

    /// The fields of every line logged since the log was last taken
    /// (the log is emptied; nginx appends, so it goes on writing).
    pub fn take_lines(&self) -> Vec<Vec<String>> {
        // nginx writes a line after its response: give the last one a moment.
        std::thread::sleep(Duration::from_millis(200));
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        std::fs::write(&self.log, "").expect("empty the access log");
        text.lines()
            .map(|line| line.split_whitespace().map(str::to_string).collect())
            .collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM to `ip netns exec` reaches nginx: exec replaces it.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// True when something accepts TCP connections at `addr`.
pub fn listening(addr: &str) -> bool {
    std::net::TcpStream::connect(addr).is_ok()
}
