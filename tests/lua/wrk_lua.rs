//! wrk's Lua scripts through the binary (`stampede wrk -s`, `stampede run
//! --script`) when they go wrong: bad scripts are refused in one line with
//! exit status 2 before any connection; an error during the run stops it
//! with the Lua traceback, exit status 2, the result of what ran written.

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{read_json, temp_dir};
use std::time::{Duration, Instant};
use support::{nobody_connected, run_binary as run, script, watched_port, LoggedTarget};

#[test]
fn a_syntax_error_is_one_line_naming_file_and_line_before_any_connection() {
    let bad = script(
        "bad.lua",
        "counter = 0\nrequest = function(\n  return wrk.format(nil, '/')\nend\n",
    );
    let file = bad.to_str().unwrap();
    let (listener, url) = watched_port();
    for words in [
        vec!["wrk", "-t1", "-c1", "-d1s", "-s", file, &url],
        vec!["run", &url, "-c", "1", "-d", "1s", "--script", file],
    ] {
        let (code, stdout, stderr) = run(&words);
        assert_eq!(code, Some(2), "{words:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.contains(&format!("{file}:3:")),
            "file:line in {stderr}"
        );
        assert!(
            !stdout.contains("Running"),
            "no banner before the error: {stdout}"
        );
    }
    assert!(nobody_connected(&listener));
}

#[test]
fn an_error_at_the_top_level_and_a_missing_file_are_one_line() {
    let (listener, url) = watched_port();
    let broken = script("top.lua", "\nlocal n = nil + 1\n");
    let (code, _, stderr) = run(&["wrk", "-s", broken.to_str().unwrap(), &url]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("top.lua:2: attempt to perform arithmetic"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (code, _, stderr) = run(&["run", &url, "--script", "/nonexistent/x.lua"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read script /nonexistent/x.lua"),
        "{stderr}"
    );
    assert!(nobody_connected(&listener));
}

#[test]
fn delay_with_a_rate_is_refused() {
    let (listener, url) = watched_port();
    let paced = script(
        "delay.lua",
        "function delay() return math.random(10, 50) end\n",
    );
    // Each front-end names its own rate flag (wrk2's -R).
    for (words, flag) in [
        (
            vec![
                "run",
                &url,
                "-r",
                "100",
                "--script",
                paced.to_str().unwrap(),
            ],
            "-r",
        ),
        (
            vec!["wrk", "-R", "100", "-s", paced.to_str().unwrap(), &url],
            "-R",
        ),
    ] {
        let (code, _, stderr) = run(&words);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("defines delay()")
                && stderr.contains(&format!(
                    "with {flag} the rate does: drop {flag} or delay()"
                )),
            "{stderr}"
        );
    }
    assert!(nobody_connected(&listener));
}

#[test]
fn script_arguments_need_a_script() {
    let (code, _, stderr) = run(&["run", "http://127.0.0.1:1/", "--", "a"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--script"), "{stderr}");
}

#[test]
fn a_runtime_error_stops_the_run_with_its_traceback_and_keeps_the_result() {
    let target = LoggedTarget::start();
    let broken = script(
        "broken.lua",
        "local n = 0\nfunction request()\n  n = n + 1\n  if n > 20 then error('no more') end\n  return wrk.format()\nend\n",
    );
    let json = temp_dir("wrk-lua-broken").join("r.json");
    let url = target.url("/");
    let started = Instant::now();
    let (code, _, stderr) = run(&[
        "run",
        &url,
        "-t",
        "2",
        "-c",
        "2",
        "-d",
        "60s",
        "-q",
        "--script",
        broken.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the error ended the run"
    );
    let file = broken.to_str().unwrap();
    assert!(
        stderr.contains(&format!("{file}: request() failed: {file}:4: no more")),
        "{stderr}"
    );
    assert!(stderr.contains("stack traceback"), "{stderr}");
    let completed = read_json(&json)["requests"]["completed"].as_u64().unwrap();
    assert!((20..=40).contains(&completed), "{completed}");
    drop(target);
}

#[test]
fn request_bytes_that_are_no_http_request_end_the_run_with_exit_2() {
    // Good requests first, then bytes no server could read: the run must
    // not end quietly with exit 0 after 49 requests.
    let target = LoggedTarget::start();
    let garbage = script(
        "garbage.lua",
        "local n = 0\nfunction request()\n  n = n + 1\n  if n >= 50 then return 'hello world\\r\\n\\r\\n' end\n  return wrk.format()\nend\n",
    );
    let url = target.url("/");
    let started = Instant::now();
    let (code, _, stderr) = run(&[
        "wrk",
        "-t1",
        "-c1",
        "-d30s",
        "-s",
        garbage.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it ended the run"
    );
    assert!(
        stderr.contains("request() returned an invalid HTTP request"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hello world"),
        "the bytes are shown: {stderr}"
    );
    drop(target);
}

// A hook's return value read as wrk reads it, end to end: a `delay()` that
// returns nothing is a delay of 0, not an error that ends the run. wrk's
// script_delay (src/script.c, github.com/wg/wrk) calls `delay` with
// `lua_call(L, 0, 1)`, which pads the missing value with nil, and reads it
// with `lua_tonumber`, which gives 0 for nil; socket_writeable (src/wrk.c)
// then waits 0 ms. Real wrk ran 10,447 requests with this script where
// stampede stopped after 3 with "bad argument #1 to 'tonumber'", exit 2,
// and no `done()`. The crate's src/tests/returns.rs reads every hook's
// value; this runs the whole command line against the built-in target.
mod hook_returns {
    use crate::wrk_lua::support::{lines_with, run, script, LoggedTarget};
    use stampede_testkit::{binary, require_tool};
    use std::path::Path;

    /// `delay()` returns nothing (its `return` is never reached); `done()` says
    /// it ran and how many requests the run counted.
    const DELAY_RETURNS_NOTHING: &str = r#"function delay()
   if false then return 5 end
end
function done(summary, latency, requests)
   print(string.format("done requests %d", summary.requests))
end
"#;

    /// Runs `program` with `first` words (`wrk` for `stampede wrk`, nothing for
    /// real wrk) and the script for 1 s on 2 connections: the requests done()
    /// printed and the requests the target served.
    fn run_script(program: &Path, first: &[&str], tail: &[&str]) -> (u64, u64) {
        let file = script("delay-returns-nothing.lua", DELAY_RETURNS_NOTHING);
        let file = file.to_str().unwrap();
        let target = LoggedTarget::start();
        let url = target.url("/");
        let mut words = first.to_vec();
        words.extend(tail.iter().map(|w| match *w {
            "FILE" => file,
            "URL" => url.as_str(),
            w => w,
        }));
        let (code, stdout, stderr) = run(program, &words);
        let served = target.served().len() as u64;
        assert_eq!(
            code,
            Some(0),
            "{} {words:?}: the run goes on to its end\n{stdout}\n{stderr}",
            program.display()
        );
        assert!(!stderr.contains("delay() failed"), "{stderr}");
        let done = lines_with(&stdout, "done requests ");
        assert_eq!(done.len(), 1, "done() ran once: {stdout}");
        let requests = done[0]["done requests ".len()..].trim().parse().unwrap();
        (requests, served)
    }

    const WRK_WORDS: &[&str] = &["-t1", "-c2", "-d1s", "-s", "FILE", "URL"];

    #[test]
    fn a_delay_that_returns_nothing_does_not_end_the_run() {
        for (first, tail) in [
            (&["wrk"][..], WRK_WORDS),
            (
                &["run"][..],
                &["URL", "-c", "2", "-d", "1s", "--script", "FILE"][..],
            ),
        ] {
            let (requests, served) = run_script(binary(), first, tail);
            // Unpaced on loopback: thousands in a second; 3 was the bug.
            assert!(requests > 200, "{first:?}: done() counted {requests}");
            assert!(served >= requests, "{first:?}: {served} < {requests}");
        }
    }

    #[test]
    fn wrk_runs_the_same_script_to_its_end() {
        let wrk = require_tool!("wrk");
        let (theirs, served) = run_script(&wrk, &[], WRK_WORDS);
        assert!(
            theirs > 200 && served >= theirs,
            "wrk: {theirs} of {served}"
        );
        let (ours, _) = run_script(binary(), &["wrk"], WRK_WORDS);
        assert!(ours > 200, "stampede wrk: {ours}, wrk: {theirs}");
    }
}
