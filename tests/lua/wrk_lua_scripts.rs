//! Scripts in the style of wrk's own examples (its scripts/ directory) run
//! by `stampede wrk -s` and `stampede run --script` against the built-in
//! target, asserting on what the server saw (its access log) and on what
//! the script printed.

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, read_json, temp_dir};
use std::path::Path;
use std::time::{Duration, Instant};
use support::{lines_with, per_path, run, script, LoggedTarget};

/// `stampede wrk OPTIONS -s SCRIPT URL` against `target`'s `/`, asserted to
/// exit 0; its stdout.
fn wrk_with_script(target: &LoggedTarget, options: &[&str], script: &Path) -> String {
    let url = target.url("/");
    let mut words = vec!["wrk"];
    words.extend(options);
    words.extend(["-s", script.to_str().unwrap(), &url]);
    let (code, stdout, stderr) = run(binary(), &words);
    assert_eq!(code, Some(0), "{words:?}: {stderr}");
    stdout
}

#[test]
fn counter_style_paths_count_per_thread() {
    let target = LoggedTarget::start();
    let counter = script(
        "counter.lua",
        r#"counter = 0
request = function()
   path = "/c" .. counter
   wrk.headers["X-Counter"] = counter
   counter = counter + 1
   return wrk.format(nil, path)
end
"#,
    );
    wrk_with_script(&target, &["-t2", "-c2", "-d500ms"], &counter);
    let counts = per_path(&target.served());
    // Two threads, each with its own counter: every path twice, or once at
    // the end of the shorter thread's run; no gaps.
    assert!(counts.len() > 10, "{counts:?}");
    for k in 0..counts.len() {
        let n = counts.get(&format!("/c{k}")).copied().unwrap_or(0);
        assert!(n == 1 || n == 2, "/c{k} seen {n} times: {counts:?}");
    }
    assert!(
        counts.values().filter(|&&n| n == 2).count() > 5,
        "both threads counted: {counts:?}"
    );
}

#[test]
fn pipeline_style_sends_three_requests_per_call() {
    let target = LoggedTarget::start();
    let pipeline = script(
        "pipeline.lua",
        r#"init = function(args)
   local r = {}
   r[1] = wrk.format(nil, "/?foo")
   r[2] = wrk.format(nil, "/?bar")
   r[3] = wrk.format(nil, "/?baz")
   req = table.concat(r)
end
request = function() return req end
"#,
    );
    let json = temp_dir("wrk-lua-pipeline").join("r.json");
    wrk_with_script(
        &target,
        &[
            "-t1",
            "-c2",
            "-d500ms",
            "--stampede-json",
            json.to_str().unwrap(),
        ],
        &pipeline,
    );
    let result = read_json(&json);
    let counts = per_path(&target.served());
    let (foo, bar, baz) = (counts["/?foo"], counts["/?bar"], counts["/?baz"]);
    assert!(foo > 30, "{counts:?}");
    // A batch cut by the end of the run leaves at most one short per connection.
    assert!(
        foo.abs_diff(bar) <= 2 && foo.abs_diff(baz) <= 2,
        "{counts:?}"
    );
    let completed = result["requests"]["completed"].as_u64().unwrap();
    assert!(
        completed.abs_diff(foo + bar + baz) <= 6,
        "{completed} vs {counts:?}"
    );
}

#[test]
fn auth_style_response_takes_a_cookie_for_later_requests() {
    let target = LoggedTarget::start();
    let auth = support::auth_script("auth.lua", 50);
    let stdout = wrk_with_script(&target, &["-t1", "-c1", "-d10s"], &auth);
    assert!(
        stdout.contains("login 200 {\"token\":\"tok-"),
        "response() saw the body: {stdout}"
    );
    assert!(stdout.contains("me 200"), "{stdout}");
    let served = target.served();
    assert_eq!(served[0].1, "/login");
    let me: Vec<_> = served.iter().filter(|(_, p, _)| p == "/me").collect();
    assert_eq!(me.len(), 50, "thread:stop() after 50: {served:?}");
    assert!(
        me.iter().all(|(_, _, status)| *status == 200),
        "the cookie was sent: {me:?}"
    );
}

#[test]
fn setup_style_passes_ids_in_and_reads_counts_back_in_done() {
    let target = LoggedTarget::start();
    let setup = script(
        "setup.lua",
        r#"local counter = 1
local threads = {}
function setup(thread)
   thread:set("id", counter)
   table.insert(threads, thread)
   counter = counter + 1
end
function init(args)
   requests = 0
   responses = 0
   print(("thread %d created"):format(id))
end
function request()
   requests = requests + 1
   return wrk.request()
end
function response(status, headers, body)
   responses = responses + 1
end
function done(summary, latency, requests)
   for index, thread in ipairs(threads) do
      local msg = "thread %d made %d requests and got %d responses"
      print(msg:format(thread:get("id"), thread:get("requests"), thread:get("responses")))
   end
   print(("summary %d %d"):format(summary.requests, summary.errors.status))
end
"#,
    );
    let stdout = wrk_with_script(&target, &["-t2", "-c2", "-d500ms"], &setup);
    let served = target.served().len() as u64;
    // init's lines before the banner, done's after the report.
    let banner = stdout.find("Running").expect("banner");
    assert!(
        stdout.find("thread 1 created").unwrap() < banner,
        "{stdout}"
    );
    assert!(
        stdout.find("thread 2 created").unwrap() < banner,
        "{stdout}"
    );
    let summary = stdout.find("summary ").expect("done printed");
    assert!(summary > stdout.find("Requests/sec").unwrap(), "{stdout}");
    let made = lines_with(&stdout, "thread ");
    assert_eq!(made.len(), 4, "{stdout}");
    let mut total_responses = 0;
    for (line, id) in made[2..].iter().zip([1, 2]) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[1], id.to_string(), "{line}");
        let (requests, responses): (u64, u64) =
            (words[3].parse().unwrap(), words[7].parse().unwrap());
        assert!(
            responses > 0 && requests >= responses && requests <= responses + 1,
            "{line}"
        );
        total_responses += responses;
    }
    // The server may have answered a request per connection that the run's
    // end left unread.
    assert!(
        served >= total_responses && served - total_responses <= 2,
        "{served}: {stdout}"
    );
    assert!(
        stdout.contains(&format!("summary {total_responses} 0")),
        "{stdout}"
    );
}

#[test]
fn stop_ends_the_run_when_every_thread_stopped() {
    let target = LoggedTarget::start();
    let stop = script(
        "stop.lua",
        "local counter = 1\nfunction response()\n   if counter == 100 then wrk.thread:stop() end\n   counter = counter + 1\nend\n",
    );
    let started = Instant::now();
    let stdout = wrk_with_script(&target, &["-t2", "-c2", "-d60s"], &stop);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "ended before -d: {stdout}"
    );
    assert_eq!(target.served().len(), 200, "100 per thread: {stdout}");
    assert!(stdout.contains("  200 requests in "), "{stdout}");
}

#[test]
fn delay_paces_each_connection() {
    let target = LoggedTarget::start();
    let delay = script("delay.lua", "function delay() return 100 end\n");
    wrk_with_script(&target, &["-t1", "-c1", "-d1s"], &delay);
    // 100 ms before each request over 1 s: about 10 (not thousands).
    let served = target.served().len();
    assert!((3..=12).contains(&served), "{served} requests");
}

#[test]
fn report_style_done_prints_the_results_percentiles() {
    let target = LoggedTarget::start();
    let report = script(
        "report.lua",
        r#"done = function(summary, latency, requests)
   io.write("------------------------------\n")
   for _, p in pairs({ 50, 90, 99, 99.999 }) do
      n = latency:percentile(p)
      io.write(string.format("%g%%,%d\n", p, n))
   end
end
"#,
    );
    let json = temp_dir("wrk-lua-report").join("r.json");
    let url = target.url("/");
    for words in [
        vec![
            "wrk",
            "-t1",
            "-c2",
            "-d300ms",
            "-s",
            report.to_str().unwrap(),
            "--stampede-json",
            json.to_str().unwrap(),
            &url,
        ],
        vec![
            "run",
            &url,
            "-t",
            "1",
            "-c",
            "2",
            "-d",
            "300ms",
            "-q",
            "--script",
            report.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    ] {
        let (code, stdout, stderr) = run(binary(), &words);
        assert_eq!(code, Some(0), "{stderr}");
        let latency = &read_json(&json)["latency_us"];
        let after = stdout
            .split("------------------------------\n")
            .nth(1)
            .expect("done's output last");
        let got: Vec<&str> = after.lines().collect();
        assert_eq!(got.len(), 4, "{stdout}");
        assert_eq!(got[0], format!("50%,{}", latency["p50"]), "{stdout}");
        assert_eq!(got[1], format!("90%,{}", latency["p90"]), "{stdout}");
        assert_eq!(got[2], format!("99%,{}", latency["p99"]), "{stdout}");
        assert!(got[3].starts_with("99.999%,"), "{stdout}");
    }
    drop(target);
}
