//! `--streams` above what an HTTP/2 server allows a connection (nginx,
//! `http2_max_concurrent_streams 2`): the result says the server's limit
//! (`http2.server_max_streams`), and the closed model warns that the
//! requests beyond it waited in the client, their wait in their latency.
//! Counts stay exact against nginx's log. The open model sends beyond the
//! limit on other connections (tests/engine/open_model_reactors.rs), so it
//! has nothing to warn about.

use stampede_testkit::nginx::{listening, Nginx, Setup};
use stampede_testkit::{
    binary, free_port, one_thread, require_tool, run_stampede, spawn_target, temp_dir, Run,
};

/// The warning's words, as the self-check writes them.
const HELD_BACK: &str = "waited in the client for a stream";

#[test]
fn streams_above_the_servers_limit_are_reported_with_the_limit() {
    let program = require_tool!("nginx");
    let target = spawn_target(one_thread());
    let dir = temp_dir("h2-stream-limit-closed");
    let (unused, h2c) = (free_port(), free_port());
    let proxy = format!(
        "http2_max_concurrent_streams 2;\n  server {{ listen 127.0.0.1:{h2c} http2; \
         location / {{ proxy_pass http://{}; }} }}",
        target.local_addr()
    );
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{unused}")],
        log_format: "$server_port $connection",
        http_extra: &proxy,
        netns: None,
    };
    let nginx = Nginx::start(&program, &dir, &setup, || {
        listening(&format!("127.0.0.1:{h2c}"))
    });
    let url = format!("http://127.0.0.1:{h2c}/");
    let common = ["--http2", "-c", "2", "-t", "1"];
    let run_with = |streams: &str, extra: &[&str]| {
        let mut args = vec![url.as_str(), "--streams", streams];
        args.extend_from_slice(&common);
        args.extend_from_slice(extra);
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
        run.assert_accounted(streams);
        run
    };
    let warned = |run: &Run| {
        let warnings = run.result()["warnings"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        warnings
            .iter()
            .filter_map(|w| w.as_str())
            .any(|w| w.contains(HELD_BACK))
    };

    // Closed, 8 streams asked of a server that allows 2: said, once, with
    // the limit; every request reached nginx.
    let run = run_with("8", &["-n", "200"]);
    assert_eq!(run.count("/requests/success"), 200);
    assert_eq!(
        run.count("/http2/server_max_streams"),
        2,
        "{}",
        run.result()
    );
    assert!(warned(&run), "{}", run.result()["warnings"]);
    let printed = run.stdout() + &run.stderr();
    assert!(
        printed.contains(
            "the server allowed 2 concurrent streams per connection and --streams asked 8"
        ),
        "printed with the summary: {printed}"
    );
    let lines = nginx.take_lines();
    let served = lines
        .iter()
        .filter(|f| f.first() == Some(&h2c.to_string()))
        .count();
    assert_eq!(served, 200, "nginx's log");

    // Within the limit: the limit is still reported, with nothing to warn.
    let run = run_with("2", &["-n", "100"]);
    assert_eq!(run.count("/http2/server_max_streams"), 2);
    assert!(!warned(&run), "{}", run.result()["warnings"]);

    // Open model above the limit: due requests go to other connections.
    let run = run_with("8", &["-r", "100", "-n", "50"]);
    assert_eq!(run.count("/requests/success"), 50);
    assert!(!warned(&run), "{}", run.result()["warnings"]);
}
