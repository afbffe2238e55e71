//! A negative count (`--redirects -1`, `-n -5`, …)
//! reaches the option's parser and is refused with its range, exit 2,
//! instead of clap's "unexpected argument" and its wrong `-- -1` tip.

use stampede_testkit::{stampede, text};

#[test]
fn negative_counts_name_their_range() {
    let cases: [&[&str]; 9] = [
        &["--redirects", "-1"],
        &["--conn-max-requests", "-5"],
        &["-n", "-5"],
        &["-c", "-1"],
        &["-t", "-1"],
        &["--http2", "--streams", "-2"],
        &["--pipeline", "-2"],
        &["--repeat", "-2"],
        &["-r", "-3"],
    ];
    for case in cases {
        let mut args = vec!["run", "http://127.0.0.1:1/"];
        args.extend(case);
        let out = stampede(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case:?}: {stderr}");
        assert!(
            !stderr.contains("unexpected argument"),
            "{case:?}: {stderr}"
        );
        assert!(!stderr.contains("'-- "), "{case:?}: {stderr}");
        let value = case[case.len() - 1];
        assert!(stderr.contains(value), "{case:?}: {stderr}");
        if case[0] != "-r" {
            assert!(
                stderr.contains(&format!("{value} is not in 0..=")),
                "{case:?}: {stderr}"
            );
        }
    }
}

/// Settings HTTP/2 cannot honour are refused in one line, exit 2, before
/// anything is sent: no stream per connection, and no keep-alive (its
/// connections carry many streams; the line says how to get a new
/// connection per request).
#[test]
fn what_http2_cannot_honour_is_refused_in_one_line() {
    let cases: [(&[&str], &str); 2] = [
        (
            &["--http2", "--streams", "0"],
            "--streams must be at least 1",
        ),
        (
            &["--http2", "--no-keepalive"],
            "drop --no-keepalive (a new connection per request: --conn-max-requests 1)",
        ),
    ];
    for (case, says) in cases {
        let mut args = vec!["run", "http://127.0.0.1:1/", "-n", "1"];
        args.extend(case);
        let out = stampede(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case:?}: {stderr}");
        assert!(stderr.contains(says), "{case:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{case:?}: {stderr}");
    }
}
