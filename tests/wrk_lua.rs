//! wrk's Lua scripts through the binary (`stampede wrk -s`, `stampede run
//! --script`): bad scripts are refused in one line with exit status 2
//! before any connection.

use stampede_testkit::{stampede, temp_dir, text};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

/// Writes `code` to a fresh `name` and returns its path.
fn script(name: &str, code: &str) -> PathBuf {
    let path = temp_dir("wrk-lua").join(name);
    std::fs::write(&path, code).unwrap();
    path
}

/// A listener that records whether anything connected to it.
fn watched_port() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    (listener, url)
}

fn nobody_connected(listener: &TcpListener) -> bool {
    std::thread::sleep(Duration::from_millis(50));
    listener.accept().is_err()
}

/// Runs and returns (status, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = stampede(args);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

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
    for words in [
        vec![
            "run",
            &url,
            "-r",
            "100",
            "--script",
            paced.to_str().unwrap(),
        ],
        vec!["wrk", "-R", "100", "-s", paced.to_str().unwrap(), &url],
    ] {
        let (code, _, stderr) = run(&words);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("defines delay()") && stderr.contains("drop -r"),
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
