//! The same Lua script run by real wrk and by `stampede wrk -s`, each
//! against its own built-in target: the server sees the same distribution
//! of requests over paths, `response()` sees the same statuses, `done()`
//! prints the same shape of output, `thread:stop()` stops and `delay()`
//! paces both. Needs wrk (`apt-get install wrk`).

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, require_tool};
use std::collections::BTreeMap;
use std::path::Path;
use support::{lines_with, per_path, run, script, LoggedTarget};

/// Round-robin over four paths; response() tallies statuses per thread and
/// done() reads them back from every thread.
const MIX: &str = r#"local paths = { "/", "/1k.html", "/status/201", "/bytes/10" }
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
   i = 0
   statuses = {}
end
function request()
   i = i % #paths + 1
   return wrk.format(nil, paths[i])
end
function response(status, headers, body)
   statuses[status] = (statuses[status] or 0) + 1
   if status == 201 and not shown then
      shown = true
      print("saw 201 with Content-Type " .. tostring(headers["Content-Type"]) .. " and " .. #body .. " body bytes")
   end
end
function done(summary, latency, requests)
   local seen = {}
   for _, thread in ipairs(threads) do
      for status, n in pairs(thread:get("statuses")) do
         seen[status] = (seen[status] or 0) + n
      end
   end
   for _, status in ipairs({ 200, 201 }) do
      print(string.format("done status %d %d", status, seen[status] or 0))
   end
   print(string.format("done summary %d %d %d", summary.duration, summary.requests, summary.bytes))
   local e = summary.errors
   print(string.format("done errors %d %d %d %d %d", e.connect, e.read, e.write, e.status, e.timeout))
   print(string.format("done latency %d %d %d %d %d", latency.min, latency.max, latency.mean, latency:percentile(99), #latency))
   local value, count = latency(1)
   print(string.format("done first %d %d", value, count))
end
"#;

/// Runs `tool` (wrk or `stampede wrk`) with the script against a fresh target.
fn run_against(
    tool: &Path,
    stampede: bool,
    script: &Path,
    flags: &[&str],
) -> (String, BTreeMap<String, u64>) {
    let target = LoggedTarget::start();
    let url = target.url("/");
    let mut words: Vec<&str> = if stampede { vec!["wrk"] } else { Vec::new() };
    words.extend_from_slice(flags);
    words.extend_from_slice(&["-s", script.to_str().unwrap(), &url]);
    let (code, stdout, stderr) = run(tool, &words);
    assert_eq!(code, Some(0), "{}: {stderr}", tool.display());
    (stdout, per_path(&target.served()))
}

/// `done 12 34` → `done N N`: the shape of a line.
fn shape(line: &str) -> String {
    line.split(' ')
        .map(|w| if w.parse::<f64>().is_ok() { "N" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

fn numbers(line: &str) -> Vec<u64> {
    line.split(' ').filter_map(|w| w.parse().ok()).collect()
}

#[test]
fn the_same_script_spreads_requests_and_reports_alike() {
    let wrk = require_tool!("wrk");
    let mix = script("mix.lua", MIX);
    let flags = ["-t2", "-c4", "-d1s"];
    let (wrk_out, wrk_paths) = run_against(&wrk, false, &mix, &flags);
    let (ours_out, our_paths) = run_against(binary(), true, &mix, &flags);
    for (name, paths) in [("wrk", &wrk_paths), ("stampede", &our_paths)] {
        let total: u64 = paths.values().sum();
        assert!(total > 100, "{name}: {paths:?}");
        assert_eq!(paths.len(), 4, "{name}: {paths:?}");
        // Round-robin in each of the 2 threads: the paths' counts differ
        // by at most a request per thread (and wrk's one probe request).
        let (least, most) = (paths.values().min().unwrap(), paths.values().max().unwrap());
        assert!(most - least <= 4, "{name}: not an even spread: {paths:?}");
    }
    for out in [&wrk_out, &ours_out] {
        assert!(
            out.contains("saw 201 with Content-Type text/plain and "),
            "{out}"
        );
    }
    let done_wrk: Vec<String> = lines_with(&wrk_out, "done ")
        .into_iter()
        .map(shape)
        .collect();
    let done_ours: Vec<String> = lines_with(&ours_out, "done ")
        .into_iter()
        .map(shape)
        .collect();
    assert_eq!(
        done_ours, done_wrk,
        "done()'s output has wrk's shape:\n{ours_out}\n---\n{wrk_out}"
    );
    // What done() read matches what each server saw.
    let check = |out: &str, paths: &BTreeMap<String, u64>| {
        let served: u64 = paths.values().sum();
        let line = |prefix: &str| numbers(lines_with(out, prefix)[0]);
        let ok = line("done status 200")[1];
        let created = line("done status 201")[1];
        assert!(
            ok + created <= served && served - (ok + created) <= 4,
            "{out}"
        );
        assert!(created.abs_diff(paths["/status/201"]) <= 4, "{out}");
        let summary = line("done summary");
        assert!(summary[0] > 500_000, "duration in µs: {out}");
        assert!(
            summary[1].abs_diff(served) <= 4 && summary[2] > served * 50,
            "{out}"
        );
        assert_eq!(line("done errors"), [0, 0, 0, 0, 0], "{out}");
        let latency = line("done latency");
        assert!(
            latency[0] <= latency[3] && latency[3] <= latency[1] && latency[4] > 0,
            "{out}"
        );
    };
    check(&wrk_out, &wrk_paths);
    check(&ours_out, &our_paths);
}

#[test]
fn stop_and_delay_behave_as_in_wrk() {
    let wrk = require_tool!("wrk");
    let stop = script(
        "stop.lua",
        "local counter = 1\nfunction response()\n   if counter == 100 then wrk.thread:stop() end\n   counter = counter + 1\nend\n",
    );
    for (tool, stampede) in [(&wrk, false), (&binary().to_path_buf(), true)] {
        let (_, paths) = run_against(tool, stampede, &stop, &["-t2", "-c2", "-d1s"]);
        let served: u64 = paths.values().sum();
        assert!(
            (200..=202).contains(&served),
            "{}: {served}",
            tool.display()
        );
    }
    let delay = script("delay.lua", "function delay() return 100 end\n");
    for (tool, stampede) in [(&wrk, false), (&binary().to_path_buf(), true)] {
        let (_, paths) = run_against(tool, stampede, &delay, &["-t1", "-c1", "-d1s"]);
        let served: u64 = paths.values().sum();
        assert!(
            (3..=12).contains(&served),
            "{}: {served} requests in 1 s at 100 ms apart",
            tool.display()
        );
    }
}
