//! A script whose `request()` pipelines three requests over HTTP/1.1: every
//! response of the batch is handed to `response()` and judged by the
//! checks, on each event loop (the trial found only the batch's last one
//! seen: 10 passed of 30, a 404 in the middle never shown to the script).
//! Real wrk calls `response()` once per response too. And `-n` counts
//! requests, not calls of `request()`: a batch `-n` cannot pay for in full
//! is cut (the trial's `-n 6` sent 18).

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, read_json, temp_dir};
use support::{lines_with, script, LoggedTarget};

const PIPELINE: &str = r#"local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok, missing, other = 0, 0, 0 end
request = function()
   return wrk.format(nil, "/echo?a") .. wrk.format(nil, "/status/404") .. wrk.format(nil, "/echo?c")
end
response = function(status, headers, body)
   if status == 200 then ok = ok + 1 elseif status == 404 then missing = missing + 1 else other = other + 1 end
end
function done(summary)
   local a, b, c = 0, 0, 0
   for _, t in ipairs(threads) do
      a, b, c = a + t:get("ok"), b + t:get("missing"), c + t:get("other")
   end
   print(("responses ok=%d missing=%d other=%d"):format(a, b, c))
end
"#;

#[test]
fn every_response_of_a_pipelined_batch_reaches_response_and_the_checks() {
    let file = script("pipeline-responses.lua", PIPELINE);
    for io in ["auto", "epoll", "tokio"] {
        let target = LoggedTarget::start();
        let json = temp_dir("wrk-lua-pipeline-responses").join("r.json");
        let url = target.url("/");
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
            "30",
            "--check",
            "status == 200",
            "--json",
            json.to_str().unwrap(),
            "--script",
            file.to_str().unwrap(),
        ];
        let (code, stdout, stderr) = support::run(binary(), &words);
        // A failed check (the 404s) is a failed run: exit 1, not a usage error.
        assert_ne!(code, Some(2), "--io {io}: {stderr}");
        assert_eq!(
            lines_with(&stdout, "responses "),
            ["responses ok=20 missing=10 other=0"],
            "--io {io}: {stdout}"
        );
        let result = read_json(&json);
        assert_eq!(result["requests"]["completed"], 30, "--io {io}: {result}");
        let check = &result["checks"][0];
        assert_eq!(
            (check["passed"].as_u64(), check["failed"].as_u64()),
            (Some(20), Some(10)),
            "--io {io}: {check}"
        );
        assert_eq!(target.served().len(), 30, "--io {io}");
    }
}

#[test]
fn n_counts_requests_and_cuts_the_last_batch() {
    let file = script(
        "pipeline-three.lua",
        r#"request = function()
   return wrk.format(nil, "/a") .. wrk.format("POST", "/b", nil, "body") .. wrk.format(nil, "/c")
end
"#,
    );
    for (io, n) in [
        ("auto", "7"),
        ("epoll", "8"),
        ("tokio", "7"),
        ("http2", "7"),
        ("auto", "1"),
    ] {
        let target = LoggedTarget::start();
        let json = temp_dir("wrk-lua-pipeline-n").join("r.json");
        let url = target.url("/");
        let mut words = vec!["run", &url, "-c", "2", "-t", "1", "-n", n, "-q"];
        if io == "http2" {
            words.push("--http2");
        } else {
            words.extend(["--io", io]);
        }
        words.extend(["--json", json.to_str().unwrap()]);
        words.extend(["--script", file.to_str().unwrap()]);
        let (code, _, stderr) = support::run(binary(), &words);
        assert_eq!(code, Some(0), "{io} -n {n}: {stderr}");
        let want: u64 = n.parse().unwrap();
        let result = read_json(&json);
        assert_eq!(
            result["requests"]["completed"], want,
            "{io} -n {n}: {result}"
        );
        let served = target.served();
        assert_eq!(served.len() as u64, want, "{io} -n {n}: {served:?}");
        // Cut batches keep their requests whole and in the script's order.
        for (method, path, _) in &served {
            let expected = if path == "/b" { "POST" } else { "GET" };
            assert_eq!(method, expected, "{io} -n {n}: {served:?}");
        }
    }
}
