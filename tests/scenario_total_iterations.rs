//! An open-model group's `total_iterations`: the group starts exactly N
//! iterations, paced by its rate, then ends the run by itself, on every
//! event loop (the reactors' dispatch and the tokio pacer both stop at the
//! count, two workers sharing it as the pacer numbers their instants).

use stampede_testkit::{read_request_head, run_on_loop, temp_dir, RawServer};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn scenario(port: u16) -> String {
    format!(
        r#"[[group]]
name = "paced"
rate = 40.0
max_connections = 3
total_iterations = 30

[[group.step]]
name = "first"
url = "http://127.0.0.1:{port}/a"

[[group.step]]
name = "second"
url = "http://127.0.0.1:{port}/b"
"#
    )
}

#[test]
fn total_iterations_end_an_open_group_at_its_count() {
    let served = Arc::new(AtomicU64::new(0));
    let count = served.clone();
    let server = RawServer::start(move |mut stream| {
        while read_request_head(&mut stream) {
            count.fetch_add(1, Ordering::SeqCst);
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if stream.write_all(reply).is_err() {
                return;
            }
        }
    });
    let dir = temp_dir("scenario-total-iterations");
    let file = dir.join("paced.toml");
    std::fs::write(&file, scenario(server.addr().port())).unwrap();
    let file = file.display().to_string();
    for io in ["epoll", "uring", "tokio"] {
        served.store(0, Ordering::SeqCst);
        let started = Instant::now();
        let Some(run) = run_on_loop(io, &["--scenario", &file, "-t", "2"]) else {
            continue;
        };
        let took = started.elapsed();
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        // 30 iterations of 2 steps; the 30th starts at 29/40 s.
        assert_eq!(served.load(Ordering::SeqCst), 60, "--io {io}");
        assert_eq!(run.count("/requests/sent"), 60, "--io {io}");
        assert!(
            took >= Duration::from_millis(650) && took < Duration::from_secs(20),
            "--io {io}: ended by its count, paced: {took:?}"
        );
    }
}
