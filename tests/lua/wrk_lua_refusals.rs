//! wrk's Lua scripts refused or reported, through the binary
//! (`stampede wrk -s`, `stampede run --script`): a flag the script would
//! silently override is refused, a bad output path costs no setup(), a
//! closed stdout is no script error, the report names the script, and an
//! error's stop reason is written.

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, read_json, temp_dir};
use std::io::Read;
use std::process::{Command, Stdio};
use support::{nobody_connected, run_binary as run, script, watched_port, LoggedTarget};

/// A script whose every hook prints, so any that runs shows.
fn chatty(name: &str) -> std::path::PathBuf {
    script(
        name,
        "setup = function(t) print('setup ran') end\n\
         init = function(a) print('init ran') end\n\
         response = function(s, h, b) print('response ' .. s) end\n\
         done = function(s, l, r) print('done ran') end\n",
    )
}

#[test]
fn http1_0_with_a_script_is_refused_in_one_line_before_anything_runs() {
    // request() writes its own request line: --http1.0 would be claimed in
    // the header and never sent.
    let (listener, url) = watched_port();
    let file = chatty("http10.lua");
    let file = file.to_str().unwrap();
    let (code, stdout, stderr) = run(&[
        "run",
        &url,
        "-c",
        "1",
        "-d",
        "1s",
        "--script",
        file,
        "--http1.0",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains(file) && stderr.contains("--http1.0"),
        "{stderr}"
    );
    assert!(!stdout.contains("ran"), "no hook ran: {stdout}");
    assert!(nobody_connected(&listener));
}

#[test]
fn a_bad_output_path_is_refused_before_setup_runs() {
    let (listener, url) = watched_port();
    let file = chatty("paths.lua");
    let file = file.to_str().unwrap();
    for words in [
        vec![
            "run",
            &url,
            "-c",
            "1",
            "-d",
            "1s",
            "--script",
            file,
            "--json",
            "/nonexistent/dir/x.json",
        ],
        vec![
            "wrk",
            "-t1",
            "-c1",
            "-d1s",
            "-s",
            file,
            "--stampede-json",
            "/nonexistent/dir/x.json",
            &url,
        ],
    ] {
        let (code, stdout, stderr) = run(&words);
        assert_eq!(code, Some(2), "{words:?}: {stderr}");
        assert!(stderr.contains("/nonexistent/dir"), "{stderr}");
        assert!(
            !stdout.contains("ran") && !stderr.contains("ran"),
            "no hook ran: {stdout} {stderr}"
        );
    }
    assert!(nobody_connected(&listener));
}

#[test]
fn a_closed_stdout_ends_a_scripted_run_as_quietly_as_any_other() {
    // `stampede wrk -s sb.lua URL | head -1`: without a script the closed
    // pipe exits 0 with nothing on stderr; a script's print() must not turn
    // it into an error.
    let target = LoggedTarget::start();
    let url = target.url("/");
    let file = chatty("pipe.lua");
    for script_words in [vec![], vec!["-s", file.to_str().unwrap()]] {
        let mut words = vec!["wrk", "-t1", "-c1", "-d300ms"];
        words.extend(&script_words);
        words.push(&url);
        let mut child = Command::new(binary())
            .args(&words)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Nobody reads stdout: its first write meets a closed pipe.
        drop(child.stdout.take());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{words:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{words:?}: {stderr}");
    }
    drop(target);
}

#[test]
fn the_result_names_the_script_and_a_script_error_is_its_stop_reason() {
    let target = LoggedTarget::start();
    let url = target.url("/json");
    let post = script(
        "post.lua",
        "wrk.method = 'POST'\nwrk.body = 'a=1'\nwrk.headers['Content-Type'] = 'application/x-www-form-urlencoded'\n",
    );
    let file = post.to_str().unwrap();
    let json = temp_dir("wrk-lua-trial-post").join("p.json");
    let (code, stdout, stderr) = run(&[
        "run",
        &url,
        "-c",
        "1",
        "-n",
        "5",
        "--script",
        file,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("script {file} on {url}")),
        "the first line names the script, not GET: {first}"
    );
    let result = read_json(&json);
    assert_eq!(result["plan"]["script"].as_str(), Some(file), "{result}");
    assert!(result.get("stop_reason").is_none(), "{result}");

    let broken = script(
        "broken.lua",
        "local n = 0\nfunction request()\n  n = n + 1\n  if n > 3 then error('no more') end\n  return wrk.format()\nend\n",
    );
    let json = temp_dir("wrk-lua-trial-broken").join("r.json");
    let (code, _, stderr) = run(&[
        "run",
        &url,
        "-c",
        "1",
        "-d",
        "20s",
        "-q",
        "--script",
        broken.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    let result = read_json(&json);
    assert_eq!(
        result["stop_reason"].as_str(),
        Some("script_error"),
        "{result}"
    );
    assert_eq!(result["interrupted"].as_bool(), Some(false), "{result}");
    drop(target);
}

#[test]
fn a_body_cut_at_capture_max_is_one_warning_and_wrk_takes_capture_max() {
    let target = LoggedTarget::start();
    let url = target.url("/bytes/100000");
    let body = script(
        "body.lua",
        "local seen = false\n\
         response = function(status, headers, body)\n\
           if not seen then seen = true print('body ' .. #body) end\n\
         end\n",
    );
    let file = body.to_str().unwrap();
    let base = ["wrk", "-t2", "-c2", "-d300ms", "-s", file];
    let mut words = base.to_vec();
    words.push(&url);
    let (code, stdout, stderr) = run(&words);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("body 65536"), "{stdout}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "once per run: {stderr}");
    assert!(
        warnings[0].contains(file)
            && warnings[0].contains("100000-byte body")
            && warnings[0].contains("--capture-max"),
        "{stderr}"
    );
    let mut words = base.to_vec();
    words.extend(["--capture-max", "200KiB", &url]);
    let (code, stdout, stderr) = run(&words);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("body 100000"), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
    drop(target);
}

#[test]
fn a_run_shorter_than_one_window_gives_done_one_sample_per_thread() {
    // wrk's Req/Sec windows are 100 ms: a 50 ms run has no full one, and
    // the printed Req/Sec falls back to the run's rate per thread; done()'s
    // `requests` must not be empty then.
    let target = LoggedTarget::start();
    let url = target.url("/");
    let done = script(
        "done.lua",
        "done = function(summary, latency, requests)\n\
           print(string.format('requests min=%g mean=%g', requests.min, requests.mean))\n\
         end\n",
    );
    let (code, stdout, stderr) = run(&[
        "wrk",
        "-t2",
        "-c2",
        "-d50ms",
        "-s",
        done.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("requests "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let field = |name: &str| -> f64 {
        let word = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .unwrap();
        word.parse().unwrap()
    };
    assert!(field("min") > 0.0 && field("mean") > 0.0, "{line}");
    drop(target);
}

#[test]
fn repeat_with_a_script_is_refused_before_setup_runs() {
    let (listener, url) = watched_port();
    let file = chatty("repeat.lua");
    for rounds in [["--repeat", "2"], ["--until-stable", "p99:5%"]] {
        let (code, stdout, stderr) = run(&[
            "run",
            &url,
            "-d",
            "1s",
            "--script",
            file.to_str().unwrap(),
            rounds[0],
            rounds[1],
        ]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("--script runs once"), "{stderr}");
        assert!(!stdout.contains("ran"), "no hook ran: {stdout}");
    }
    assert!(nobody_connected(&listener));
}
