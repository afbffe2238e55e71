//! Pipelined requests a server closes the connection on (nginx's
//! `keepalive_requests`: its 10th response says `Connection: close`): the
//! requests after that response were never answered nor processed, so they
//! go again on a new connection (RFC 9112 §9.3.2), counted as a reconnect,
//! not as errors. Before, each was a `closed_early` error (the trial's
//! 16,012 "read" errors where real wrk reports none), on `--pipeline` and a
//! script's pipelined `request()` alike, on every HTTP/1.1 path.

use stampede_testkit::nginx as nginx_support;

use stampede_testkit::wrk_scripts as support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{binary, free_port, read_json, require_tool, temp_dir};
use support::script;

#[test]
fn requests_after_the_servers_close_go_again_on_a_new_connection() {
    let program = require_tool!("nginx");
    let dir = temp_dir("pipeline-server-close");
    let port = free_port();
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{port}")],
        log_format: "$connection $connection_requests $request_uri",
        http_extra: "keepalive_requests 10;",
        netns: None,
    };
    let addr = format!("127.0.0.1:{port}");
    let nginx = Nginx::start(&program, &dir, &setup, || listening(&addr));
    let three = script(
        "pipeline-close.lua",
        r#"request = function()
   return wrk.format(nil, "/a") .. wrk.format(nil, "/b") .. wrk.format(nil, "/c")
end
"#,
    );
    let url = format!("http://{addr}/");
    let json = dir.join("r.json");
    for io in ["auto", "epoll", "tokio"] {
        for how in [["--pipeline", "3"], ["--script", three.to_str().unwrap()]] {
            let what = format!("--io {io} {}", how[0]);
            let words = [
                "run",
                &url,
                "--io",
                io,
                "-c",
                "2",
                "-t",
                "1",
                "-n",
                "60",
                how[0],
                how[1],
                "-q",
                "--json",
                json.to_str().unwrap(),
            ];
            let (code, _, stderr) = support::run(binary(), &words);
            assert_eq!(code, Some(0), "{what}: {stderr}");
            let result = read_json(&json);
            let requests = &result["requests"];
            assert_eq!(requests["errors"], 0, "{what}: {result}");
            assert_eq!(requests["completed"], 60, "{what}: {result}");
            let lines = nginx.take_lines();
            assert_eq!(lines.len(), 60, "{what}: nginx served each once");
            assert!(
                lines.iter().all(|l| l[1].parse::<u32>().unwrap() <= 10),
                "{what}: {lines:?}"
            );
            let reconnects = result["connections"]["reconnects"].as_u64().unwrap();
            assert!(reconnects >= 4, "{what}: nginx closed every 10: {result}");
        }
    }
}
