//! A plan error names the flags of the command line that built the plan:
//! `stampede run` its own, a compat front-end the foreign tool's (ab's -E
//! for TLS, webbench's -p for the proxy). One line, exit status 2, before
//! any request and before a front-end's banner (the URLs point at a closed
//! port).

use stampede_testkit::{stampede, text};

/// Exit status and the one stderr line of `stampede ARGS`.
fn error_line(args: &[&str]) -> (Option<i32>, String) {
    let out = stampede(args);
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    // Refused before the tool's banner, not after it.
    assert_eq!(text(&out.stdout), "", "{args:?}");
    (out.status.code(), stderr.trim_end().to_string())
}

#[test]
fn run_names_run_flags() {
    let (code, line) = error_line(&["run", "http://127.0.0.1:9/", "-n", "0"]);
    assert_eq!(code, Some(2));
    assert_eq!(line, "stampede: error: requests must be at least 1 (-n)");
    let (code, line) = error_line(&["run", "http://127.0.0.1:9/", "--insecure"]);
    assert_eq!(code, Some(2));
    assert!(
        line.contains("TLS options (--insecure, --cacert,")
            && line.ends_with("need an https:// URL"),
        "{line}"
    );
}

#[test]
fn a_bad_cacert_for_redirects_to_https_is_refused_before_the_run() {
    // An http run takes TLS options for its redirects' https origins; the
    // file is read up front, not on the first hop there.
    let missing = "/nonexistent/stampede-ca.pem";
    let (code, line) = error_line(&[
        "run",
        "http://127.0.0.1:9/",
        "--redirects",
        "3",
        "--cacert",
        missing,
    ]);
    assert_eq!(code, Some(2));
    assert!(line.contains(&format!("--cacert {missing}")), "{line}");
}

#[test]
fn front_ends_name_their_own_flags() {
    let (code, line) = error_line(&["ab", "-n", "1", "-E", "c.pem", "http://127.0.0.1:9/"]);
    assert_eq!(code, Some(2));
    assert!(
        line.contains("ab: TLS options (-E, -f, -Z) need an https:// URL"),
        "{line}"
    );
    let (code, line) = error_line(&[
        "webbench",
        "-t",
        "1",
        "-p",
        "nonsense",
        "http://127.0.0.1:9/",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        line.contains("webbench: invalid -p 'nonsense': expected HOST:PORT"),
        "{line}"
    );
}
