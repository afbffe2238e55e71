//! Templates, checks, extractors and scenario steps over HTTP/2 (`--http2`,
//! h2c prior knowledge against the built-in target): each stream is a
//! virtual user; its request is rendered as over HTTP/1.1 and sent in
//! HTTP/2's form; the server's counts and access log prove what it got.

use stampede_testkit::workload as workload_support;

use stampede_testkit::{one_thread, spawn_target};
use workload_support::*;

#[test]
fn a_templated_url_is_new_each_request_and_checks_judge_it() {
    let dir = temp_dir("h2-template");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/?id={{seq}}");
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "-c",
            "2",
            "--streams",
            "2",
            "-n",
            "40",
            "--check",
            "status == 200",
            "--check",
            "body contains \"<html\"",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(
        run.count("/requests/success"),
        40,
        "{}",
        run.result()["checks"]
    );
    assert_eq!(run.count("/requests/check_failed"), 0);
    assert_eq!(tally(&run, "body contains \"<html\"", None), (40, 0));
    let mut paths = target.stop_and_paths();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), 40, "every {{{{seq}}}} once: {paths:?}");
}

#[test]
fn login_then_me_with_the_extracted_token_over_http2() {
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let dir = temp_dir("h2-scenario");
    let text = format!(
        "[[group]]\nname = \"auth\"\nconnections = 2\niterations = 3\n\n\
         [[group.step]]\nname = \"login\"\nmethod = \"POST\"\nurl = \"{base}/login\"\n\
         headers = {{ Content-Type = \"application/json\" }}\n\
         body = '{{\"user\":\"u{{{{conn}}}}\",\"pass\":\"p\"}}'\n\
         check = [\"status == 200\"]\nextract = {{ token = \"json($.token)\" }}\n\n\
         [[group.step]]\nname = \"me\"\nurl = \"{base}/me\"\n\
         headers = {{ Authorization = \"Bearer {{{{token}}}}\" }}\n\
         check = [\"status == 200\", \"json($.ok) == true\"]\n"
    );
    let file = write(&dir, "h2.toml", &text);
    let run = run_stampede(binary(), &["--scenario", &file, "--http2"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), 12, "2 users × 3 × 2 steps");
    assert_eq!(
        run.count("/requests/success"),
        12,
        "{}",
        run.result()["checks"]
    );
    assert_eq!(tally(&run, "extract token", Some("login")), (6, 0));
    assert_eq!(tally(&run, "json($.ok) == true", Some("me")), (6, 0));
    assert_eq!(run.result()["stop_reason"], "groups_done");
    let stats = target.shutdown().expect("target stats");
    assert_eq!(stats.h2_streams_total, 12, "all of it over HTTP/2");
}

#[test]
fn a_failed_check_over_http2_is_check_failed() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "-c",
            "1",
            "-n",
            "10",
            "--check",
            "status == 201",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/check_failed"), 10);
    assert_eq!(tally(&run, "status == 201", None), (0, 10));
    drop(target);
}

#[test]
fn what_http2_cannot_carry_is_refused_in_one_line() {
    // The open model and redirects carry a workload over HTTP/2
    // (workload_h2_open.rs, redirect_origins_h2.rs); a step's keep_alive
    // means nothing there.
    let dir = temp_dir("h2-refused");
    let text = "[[group]]\nname = \"g\"\nconnections = 1\n\n\
                [[group.step]]\nname = \"s\"\nurl = \"http://127.0.0.1:9/\"\n\
                keep_alive = false\n";
    let file = write(&dir, "keep_alive.toml", text);
    let run = run_stampede(binary(), &["--scenario", &file, "--http2"]);
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert_eq!(
        run.stderr().trim(),
        "stampede: error: step s: keep_alive is HTTP/1.1's: drop it or --http2"
    );
    let run = run_stampede(
        binary(),
        &["https://127.0.0.1:9/?{{seq}}", "--http3", "-n", "1"],
    );
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(run.stderr().contains("drop --http3"), "{}", run.stderr());
}
