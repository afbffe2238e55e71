//! A URL with no host (`http:///index.html`, `/index.html`) is refused in
//! one line, exit status 2, before any lookup, by every command that takes
//! a target: the WHATWG parser skips the empty authority and would read
//! `index.html` as the host and look it up. wrk refuses it in parse_args
//! (src/wrk.c: script_parse_url in src/script.c wants a schema and a host:
//! "invalid URL: http:///index.html", exit 1); ab in main (support/ab.c:
//! parse_url fails: "ab: invalid URL" and its usage). The check is in
//! stampede-plan's Target::parse, which every front-end goes through.

use stampede_testkit::{binary, text};
use std::process::Command;
use std::time::{Duration, Instant};

/// The command lines that take `url`: run (and the bare shorthand), wrk,
/// ab, webbench, press.
fn command_lines(url: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["run", url, "-n", "3"],
        vec![url, "-n", "3"],
        vec!["wrk", "-t1", "-c1", "-d1s", url],
        vec!["ab", "-n", "3", url],
        vec!["webbench", "-t", "1", "-c", "1", url],
        vec!["press", "-t", "1", "-c", "1", "-d", "1s", url],
    ]
}

#[test]
fn a_url_without_a_host_is_one_line_and_exit_2() {
    for url in ["http:///index.html", "/index.html"] {
        for words in command_lines(url) {
            let started = Instant::now();
            let out = Command::new(binary()).args(&words).output().unwrap();
            let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
            assert_eq!(out.status.code(), Some(2), "{words:?}: {stderr}");
            assert_eq!(
                stderr,
                format!("stampede: error: invalid URL '{url}': no host\n"),
                "{words:?}: one line, and no lookup of a host"
            );
            assert!(stdout.is_empty(), "{words:?}: no banner: {stdout}");
            // Refused on the text: no resolver, no connection, no run.
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{words:?}: {:?}",
                started.elapsed()
            );
        }
    }
}
