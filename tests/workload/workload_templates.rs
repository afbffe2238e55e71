//! `{{...}}` templates end to end: every `{{seq}}` path is
//! distinct and the sequence has no gap, as the access logs of `stampede
//! serve` and of a real nginx prove; `--agent I/N` splits the sequence;
//! built-ins, `--var` and `env.NAME` land in the URL, headers and body;
//! `--targets` blocks take templates; bad templates are exit 2 before any
//! request, an unknown variable naming the known ones.

use stampede_testkit::workload as workload_support;

use std::collections::BTreeSet;
use workload_support::*;

/// The numbers after `key=` in each logged path (e.g. `/?s=7` → 7).
fn values_of(paths: &[String], key: &str) -> Vec<u64> {
    paths
        .iter()
        .filter_map(|p| {
            let at = p.find(&format!("{key}="))? + key.len() + 1;
            p[at..].split('&').next()?.parse().ok()
        })
        .collect()
}

#[test]
fn every_seq_path_is_distinct_in_the_targets_access_log() {
    for io in LOOPS {
        let dir = temp_dir("tpl-seq");
        let target = LoggedTarget::start(&dir);
        let url = target.url("/?s={{seq}}&c={{conn}}&i={{iter}}&w={{worker}}");
        let run = run_on(io, &[&url, "-c", "8", "-t", "2", "-n", "300"]);
        let paths = target.stop_and_paths();
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(run.count("/requests/success"), 300, "{io:?}");
        assert_eq!(paths.len(), 300, "{io:?}: logged paths");
        let distinct: BTreeSet<&String> = paths.iter().collect();
        assert_eq!(distinct.len(), 300, "{io:?}: a path was sent twice");
        let seqs: BTreeSet<u64> = values_of(&paths, "s").into_iter().collect();
        assert_eq!(seqs, (0..300).collect(), "{io:?}: seq is 0..300, no gap");
        // Eight virtual users on two workers, each with its own iterations.
        let conns: BTreeSet<u64> = values_of(&paths, "c").into_iter().collect();
        assert_eq!(conns.len(), 8, "{io:?}: {{{{conn}}}} values {conns:?}");
        let workers: BTreeSet<u64> = values_of(&paths, "w").into_iter().collect();
        assert_eq!(workers, BTreeSet::from([0, 1]), "{io:?}");
        let iters = values_of(&paths, "i");
        assert!(iters.contains(&0) && iters.iter().any(|&i| i > 0), "{io:?}");
    }
}

#[test]
fn every_seq_path_is_distinct_in_nginx_access_log() {
    let program = stampede_testkit::require_tool!("nginx");
    let dir = temp_dir("tpl-nginx");
    let nginx = Nginx::start(&program, &dir);
    let url = nginx.url("/item/{{seq}}");
    let mut expected = 0;
    for io in LOOPS {
        let run = run_on(
            io,
            &[
                &url,
                "-c",
                "6",
                "-t",
                "2",
                "-n",
                "200",
                "--check",
                "body contains \"ok /item/\"",
            ],
        );
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(run.count("/requests/success"), 200, "{io:?}");
        assert_eq!(tally(&run, "body contains \"ok /item/\"", None), (200, 0));
        expected += 200;
    }
    let paths = nginx.stop_and_paths();
    assert_eq!(paths.len(), expected);
    // Each run starts its sequence at 0: per run, 0..200 once each.
    let mut counts = std::collections::BTreeMap::new();
    for path in &paths {
        let n: u64 = path
            .strip_prefix("/item/")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected path {path}"));
        *counts.entry(n).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), 200, "distinct /item/N paths");
    assert!(
        counts.values().all(|&c| c == LOOPS.len()),
        "each N once per run"
    );
}

#[test]
fn agents_take_disjoint_interleaved_sequences() {
    let dir = temp_dir("tpl-agents");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/?s={{seq}}&a={{agent}}");
    let zero = run_on(None, &[&url, "-n", "20", "-c", "2", "--agent", "0/2"]);
    let one = run_on(
        Some("tokio"),
        &[&url, "-n", "20", "-c", "2", "--agent", "1/2"],
    );
    let paths = target.stop_and_paths();
    assert_eq!(zero.code(), Some(0), "{}", zero.stderr());
    assert_eq!(one.code(), Some(0), "{}", one.stderr());
    let seqs: BTreeSet<u64> = values_of(&paths, "s").into_iter().collect();
    assert_eq!(seqs, (0..20).collect(), "the two shares cover 0..20 once");
    for path in &paths {
        let seq = values_of(std::slice::from_ref(path), "s")[0];
        let agent = values_of(std::slice::from_ref(path), "a")[0];
        assert_eq!(seq % 2, agent, "{path}: agent I of 2 sends I, I+2, ...");
    }
}

#[test]
fn built_ins_vars_and_env_render_into_headers_and_body() {
    let dir = temp_dir("tpl-body");
    let target = LoggedTarget::start(&dir);
    let body = r#"{"id":"{{uuid}}","n":{{rand_int 5 5}},"s":"{{rand_str 12}}","v":"{{v}}","e":"{{env.H6_TEMPLATE_ENV}}","ms":{{now_ms}},"iso":"{{now_iso}}"}"#;
    let json_url = target.url("/json");
    let echo_url = target.url("/echo");
    let checks = [
        "json($.n) == 5",
        "json($.v) == \"hello there\"",
        "json($.e) == \"from-env\"",
        r"json($.s) ~ ^[A-Za-z0-9]{12}$",
        r"json($.id) ~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        "json($.ms) > 1700000000000",
        r"json($.iso) ~ ^20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$",
    ];
    let mut args = vec![
        json_url.as_str(),
        "-m",
        "POST",
        "-T",
        "application/json",
        "-b",
        body,
        "--var",
        "v=hello there",
        "-n",
        "20",
        "-c",
        "2",
    ];
    for check in &checks {
        args.extend(["--check", check]);
    }
    for io in LOOPS {
        let mut args = args.clone();
        if let Some(io) = io {
            args.extend(["--io", io]);
        }
        let run = run_with_env(&args, "H6_TEMPLATE_ENV", "from-env");
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(
            run.count("/requests/check_failed"),
            0,
            "{}",
            run.result()["checks"]
        );
        assert_eq!(run.count("/requests/success"), 20, "{io:?}");
        for check in &checks {
            assert_eq!(tally(&run, check, None), (20, 0), "{io:?}: {check}");
        }
        run.assert_accounted("");
    }
    // A header value with a slot, rendered per request (the echo shows it).
    let run = run_on(
        None,
        &[
            &echo_url,
            "-H",
            "X-Seq: n{{seq}}",
            "-n",
            "5",
            "-c",
            "1",
            "--check",
            r"body ~ X-Seq: n[0-4]\r\n",
        ],
    );
    assert_eq!(
        run.count("/requests/success"),
        5,
        "{}",
        run.result()["checks"]
    );
    drop(target);
}

/// Runs the binary with one more environment variable.
fn run_with_env(args: &[&str], name: &str, value: &str) -> Run {
    let dir = temp_dir("tpl-env-run");
    let json = dir.join("result.json");
    let output = std::process::Command::new(binary())
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("--quiet")
        .env(name, value)
        .output()
        .expect("stampede runs");
    let json = std::fs::read_to_string(&json)
        .ok()
        .map(|text| serde_json::from_str(&text).expect("valid JSON"));
    Run { output, json }
}

#[test]
fn targets_file_blocks_take_templates() {
    let dir = temp_dir("tpl-targets");
    let target = LoggedTarget::start(&dir);
    let file = write(
        &dir,
        "targets.txt",
        &format!(
            "GET {}\n\nGET {}\n",
            target.url("/?a={{seq}}"),
            target.url("/?b={{seq}}")
        ),
    );
    let run = run_on(None, &["--targets", &file, "-n", "40", "-c", "2"]);
    let paths = target.stop_and_paths();
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(paths.len(), 40);
    let mut seqs: Vec<u64> = values_of(&paths, "a");
    seqs.extend(values_of(&paths, "b"));
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (0..40).collect::<Vec<_>>(),
        "one sequence across blocks"
    );
    assert!(!values_of(&paths, "a").is_empty() && !values_of(&paths, "b").is_empty());
}

#[test]
fn bad_templates_are_exit_2_before_any_request() {
    let dir = temp_dir("tpl-bad");
    let target = LoggedTarget::start(&dir);
    let feed = write(&dir, "users.csv", "user,pass\nann,a1\n");
    let unknown = run_on(
        None,
        &[
            &target.url("/?u={{usr}}"),
            "--feed",
            &feed,
            "--var",
            "region=eu",
            "-n",
            "3",
        ],
    );
    assert_usage_error(
        &unknown,
        "url: unknown variable {{usr}}; known: seq, conn, iter",
    );
    for known in ["uuid", "rand_int", "env.NAME", "region", "user", "pass"] {
        assert!(
            unknown.stderr().contains(known),
            "{known}: {}",
            unknown.stderr()
        );
    }
    let header = run_on(None, &[&target.url("/"), "-H", "X-A: {{nope}}", "-n", "1"]);
    assert_usage_error(&header, "unknown variable {{nope}}");
    let body = run_on(None, &[&target.url("/"), "-b", "x{{nope}}", "-n", "1"]);
    assert_usage_error(&body, "body: unknown variable {{nope}}");
    let unclosed = run_on(None, &[&target.url("/?q={{seq"), "-n", "1"]);
    assert_usage_error(&unclosed, "unclosed {{");
    let host = run_on(None, &["http://{{h}}/", "--var", "h=127.0.0.1", "-n", "1"]);
    assert_usage_error(&host, "not the scheme or host");
    let reversed = run_on(None, &[&target.url("/?r={{rand_int 9 1}}"), "-n", "1"]);
    assert_usage_error(&reversed, "LOW is greater than HIGH");
    let builtin = run_on(None, &[&target.url("/"), "--var", "seq=1", "-n", "1"]);
    assert_usage_error(&builtin, "seq is a built-in");
    let missing_env = run_on(
        None,
        &[&target.url("/?h={{env.H6_SURELY_NOT_SET}}"), "-n", "1"],
    );
    assert_usage_error(&missing_env, "H6_SURELY_NOT_SET is not set");
    // Templates run over --http2 (tests/workload/workload_h2.rs), not yet --http3.
    let pipeline = run_on(
        None,
        &[&target.url("/?s={{seq}}"), "--pipeline", "4", "-n", "4"],
    );
    assert_usage_error(&pipeline, "drop --pipeline");
    for run in [
        &unknown, &header, &body, &unclosed, &host, &reversed, &builtin,
    ] {
        assert_eq!(
            run.stderr().trim().lines().count(),
            1,
            "one line: {}",
            run.stderr()
        );
    }
    let paths = target.stop_and_paths();
    assert!(paths.is_empty(), "a request was sent: {paths:?}");
}
