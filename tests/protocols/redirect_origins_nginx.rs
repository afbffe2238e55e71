//! Redirects to another origin as nginx sees them: one nginx,
//! configured here, with two server blocks on two ports; the first answers
//! every request with a 302 to the second, whose `location /` answers 200.
//! nginx logs `$server_port $connection` for each request, so the log
//! counts, independently of stampede's books, the requests each origin got
//! and over how many connections (kept alive: one per slot and origin), on
//! io_uring, epoll and tokio.

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{
    binary, event_loop_or_skip, free_port, require_tool, run_stampede, temp_dir, EVENT_LOOPS,
};
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn nginx_sees_each_origin_get_its_requests_over_kept_connections() {
    let program = require_tool!("nginx");
    let dir = temp_dir("redirect-origins-nginx");
    let (home, away) = (free_port(), free_port());
    let extra = format!(
        "server {{\n    listen 127.0.0.1:{home};\n    location / {{ return 302 http://127.0.0.1:{away}/landed; }}\n  }}"
    );
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{away}")],
        log_format: "$server_port $connection $status",
        http_extra: &extra,
        netns: None,
    };
    let ready =
        || listening(&format!("127.0.0.1:{home}")) && listening(&format!("127.0.0.1:{away}"));
    let nginx = Nginx::start(&program, &dir, &setup, ready);
    let url = format!("http://127.0.0.1:{home}/start");
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let args = [
            &url,
            "--redirects",
            "2",
            "-n",
            "30",
            "-c",
            "3",
            "-t",
            "1",
            "--io",
            io,
        ];
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        assert_eq!(run.count("/status/200"), 30, "--io {io}: {}", run.result());
        assert_eq!(run.count("/redirects/followed"), 30, "--io {io}");
        let mut requests: BTreeMap<String, u64> = BTreeMap::new();
        let mut connections: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for fields in nginx.take_lines() {
            *requests.entry(fields[0].clone()).or_default() += 1;
            connections
                .entry(fields[0].clone())
                .or_default()
                .insert(fields[1].clone());
        }
        let (home, away) = (home.to_string(), away.to_string());
        assert_eq!(requests.get(&home), Some(&30), "--io {io}: {requests:?}");
        assert_eq!(requests.get(&away), Some(&30), "--io {io}: {requests:?}");
        // Three slots, each with one connection to each origin.
        assert_eq!(connections[&home].len(), 3, "--io {io}: {connections:?}");
        assert_eq!(connections[&away].len(), 3, "--io {io}: {connections:?}");
        assert_eq!(run.count("/connections/opened"), 6, "--io {io}");
    }
    drop(nginx);
    let _ = std::fs::remove_dir_all(&dir);
}
