//! `--feed FILE[:MODE]` end to end: `unique` hands every row
//! out exactly once (across connections, workers, agents, and in the open
//! model), then the run stops with `stop_reason: "feed_exhausted"` and
//! `sent == rows`, as the access logs of `stampede serve` and nginx prove;
//! `circular` wraps; `random` stays in the file; JSON Lines feeds; bad
//! files are one line with file:line and exit 2 before any request.

use stampede_testkit::workload as workload_support;

use std::collections::BTreeMap;
use workload_support::*;

/// A CSV with column `id` holding 0..rows.
fn ids_csv(dir: &std::path::Path, rows: usize) -> String {
    let mut text = String::from("id,label\n");
    for i in 0..rows {
        text.push_str(&format!("{i},\"row {i}, quoted\"\n"));
    }
    write(dir, "ids.csv", &text)
}

/// How many times each row id was logged (`/?id=ID` on the built-in
/// target, which answers 200 on `/` with any query; `/u/ID` on nginx).
fn per_id(paths: &[String]) -> BTreeMap<u64, usize> {
    let mut counts = BTreeMap::new();
    for path in paths {
        let id = path
            .rsplit(['/', '='])
            .next()
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("unexpected path {path}"));
        *counts.entry(id).or_insert(0) += 1;
    }
    counts
}

fn assert_each_row_once(paths: &[String], rows: u64, context: &str) {
    let counts = per_id(paths);
    assert_eq!(
        counts.keys().copied().collect::<Vec<_>>(),
        (0..rows).collect::<Vec<_>>(),
        "{context}: every row used"
    );
    assert!(
        counts.values().all(|&n| n == 1),
        "{context}: a row used twice: {counts:?}"
    );
}

fn assert_exhausted(run: &Run, rows: u64, context: &str) {
    assert_eq!(run.code(), Some(0), "{context}: {}", run.stderr());
    assert_eq!(run.result()["stop_reason"], "feed_exhausted", "{context}");
    assert_eq!(run.count("/requests/sent"), rows, "{context}: sent == rows");
    assert_eq!(run.count("/requests/success"), rows, "{context}");
    run.assert_accounted("");
}

#[test]
fn unique_rows_are_each_used_once_then_the_run_stops() {
    for io in LOOPS {
        let dir = temp_dir("feed-unique");
        let feed = format!("{}:unique", ids_csv(&dir, 40));
        let target = LoggedTarget::start(&dir);
        // -d 5s bounds the run; the rows run out long before.
        let run = run_on(
            io,
            &[
                &target.url("/?id={{id}}"),
                "--feed",
                &feed,
                "-c",
                "4",
                "-t",
                "2",
                "-d",
                "5s",
            ],
        );
        let paths = target.stop_and_paths();
        assert_exhausted(&run, 40, &format!("{io:?}"));
        assert!(
            run.result()["elapsed_s"].as_f64().unwrap_or(9.0) < 4.5,
            "{io:?}: stopped early"
        );
        assert_each_row_once(&paths, 40, &format!("{io:?}"));
    }
}

#[test]
fn unique_with_more_connections_than_rows() {
    let dir = temp_dir("feed-few");
    let feed = format!("{}:unique", ids_csv(&dir, 3));
    let target = LoggedTarget::start(&dir);
    let run = run_on(
        None,
        &[
            &target.url("/?id={{id}}"),
            "--feed",
            &feed,
            "-c",
            "12",
            "-d",
            "5s",
        ],
    );
    let paths = target.stop_and_paths();
    assert_exhausted(&run, 3, "-c 12, 3 rows");
    assert_each_row_once(&paths, 3, "-c 12, 3 rows");
    // One row, -n larger than the file: the rows bound the run.
    let one = write(&dir, "one.csv", "id\n7\n");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/?id={{id}}");
    let run = run_on(
        None,
        &[
            &url,
            "--feed",
            &format!("{one}:unique"),
            "-n",
            "5",
            "-c",
            "2",
        ],
    );
    assert_exhausted(&run, 1, "one row");
    drop(target);
}

#[test]
fn unique_rows_split_between_agents_and_in_nginx_log() {
    let program = stampede_testkit::require_tool!("nginx");
    let dir = temp_dir("feed-agents");
    let feed = format!("{}:unique", ids_csv(&dir, 30));
    let nginx = Nginx::start(&program, &dir);
    let url = nginx.url("/u/{{id}}");
    let zero = run_on(
        None,
        &[
            &url, "--feed", &feed, "-c", "4", "-d", "5s", "--agent", "0/2",
        ],
    );
    let one = run_on(
        Some("tokio"),
        &[
            &url, "--feed", &feed, "-c", "4", "-d", "5s", "--agent", "1/2",
        ],
    );
    let paths = nginx.stop_and_paths();
    assert_exhausted(&zero, 15, "agent 0/2");
    assert_exhausted(&one, 15, "agent 1/2");
    assert_each_row_once(&paths, 30, "two agents");
}

#[test]
fn unique_in_the_open_model() {
    let dir = temp_dir("feed-open");
    let feed = format!("{}:unique", ids_csv(&dir, 12));
    for io in LOOPS {
        let target = LoggedTarget::start(&dir);
        let run = run_on(
            io,
            &[
                &target.url("/?id={{id}}"),
                "--feed",
                &feed,
                "-r",
                "40",
                "-d",
                "5s",
            ],
        );
        let paths = target.stop_and_paths();
        assert_exhausted(&run, 12, &format!("-r 40 {io:?}"));
        assert_each_row_once(&paths, 12, &format!("-r 40 {io:?}"));
        let _ = std::fs::remove_file(dir.join("access.log"));
    }
}

#[test]
fn circular_wraps_and_random_stays_in_the_file() {
    let dir = temp_dir("feed-circular");
    let csv = ids_csv(&dir, 3);
    let target = LoggedTarget::start(&dir);
    let url = target.url("/?id={{id}}");
    let circular = run_on(
        None,
        &[&url, "--feed", &csv, "-c", "1", "-t", "1", "-n", "12"],
    );
    let paths = target.stop_and_paths();
    assert_eq!(circular.code(), Some(0), "{}", circular.stderr());
    assert_eq!(circular.result()["stop_reason"], serde_json::Value::Null);
    let counts = per_id(&paths);
    assert_eq!(
        counts,
        BTreeMap::from([(0, 4), (1, 4), (2, 4)]),
        "12 = 4 laps of 3 rows"
    );

    let target = LoggedTarget::start(&temp_dir("feed-random"));
    let url = target.url("/?id={{id}}");
    let random = run_on(
        None,
        &[
            &url,
            "--feed",
            &format!("{csv}:random"),
            "-c",
            "2",
            "-n",
            "60",
        ],
    );
    let paths = target.stop_and_paths();
    assert_eq!(random.count("/requests/success"), 60, "{}", random.stderr());
    let counts = per_id(&paths);
    assert!(counts.keys().all(|id| *id < 3), "{counts:?}");
    assert!(counts.len() >= 2, "60 random draws of 3 rows: {counts:?}");
}

#[test]
fn json_lines_and_quoted_csv_fields_render() {
    let dir = temp_dir("feed-jsonl");
    let jsonl = write(
        &dir,
        "people.jsonl",
        "{\"name\":\"ann\",\"n\":1,\"ok\":true}\n\n{\"name\":\"bob\",\"n\":2.5,\"ok\":false}\n",
    );
    let csv = write(&dir, "q.csv", "id,label\n0,\"a, b\"\n");
    let target = LoggedTarget::start(&dir);
    let body = r#"{"name":"{{name}}","n":{{n}},"ok":{{ok}},"label":"{{label}}"}"#;
    let checks = [
        r#"json($.name) ~ ^(ann|bob)$"#,
        "json($.n) > 0",
        r#"json($.label) == "a, b""#,
        "json($.ok) exists",
    ];
    let url = target.url("/json");
    let mut args = vec![url.as_str(), "-m", "POST", "-b", body];
    args.extend(["--feed", &jsonl, "--feed", &csv, "-n", "10", "-c", "1"]);
    for check in &checks {
        args.extend(["--check", check]);
    }
    for io in LOOPS {
        let run = run_on(io, &args);
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        run.assert_accounted("");
        assert_eq!(
            run.count("/requests/success"),
            10,
            "{}",
            run.result()["checks"]
        );
        for check in &checks {
            assert_eq!(tally(&run, check, None), (10, 0), "{io:?}: {check}");
        }
    }
    drop(target);
}

#[test]
fn bad_feeds_are_one_line_with_file_and_line_and_exit_2() {
    let dir = temp_dir("feed-bad");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/?id={{id}}");
    let cases = [
        ("empty.csv", "", "empty.csv:1: no header row"),
        (
            "header.csv",
            "id\n",
            "header.csv: no data rows after the header",
        ),
        (
            "ragged.csv",
            "id,b\n1,2\n3\n",
            "ragged.csv:3: row has 1 fields, the header has 2",
        ),
        (
            "bad.jsonl",
            "{\"id\":1}\n{\"id\":\n",
            "bad.jsonl:2: not a JSON object",
        ),
        (
            "keys.jsonl",
            "{\"id\":1}\n{\"idx\":2}\n",
            "keys.jsonl:2: keys differ",
        ),
    ];
    for (name, text, expected) in cases {
        let path = write(&dir, name, text);
        let run = run_on(None, &[&url, "--feed", &path, "-n", "3"]);
        assert_usage_error(&run, expected);
        assert_eq!(run.stderr().trim().lines().count(), 1, "{}", run.stderr());
    }
    // A misspelt mode of a file that exists is named, not "cannot read".
    let ids = write(&dir, "ids.csv", "id\n1\n");
    let misspelt = run_on(None, &[&url, "--feed", &format!("{ids}:uniqe"), "-n", "3"]);
    assert_usage_error(
        &misspelt,
        "ids.csv:uniqe: unknown mode 'uniqe' (circular, random or unique)",
    );
    let missing = run_on(None, &[&url, "--feed", "/nonexistent/ids.csv", "-n", "3"]);
    assert_usage_error(&missing, "/nonexistent/ids.csv: cannot read");
    // A column the template needs that the feed does not have.
    let other = write(&dir, "other.csv", "user\nann\n");
    let unknown = run_on(None, &[&url, "--feed", &other, "-n", "3"]);
    assert_usage_error(&unknown, "unknown variable {{id}}; known: seq");
    assert!(unknown.stderr().contains("user"), "{}", unknown.stderr());
    let paths = target.stop_and_paths();
    assert!(paths.is_empty(), "a request was sent: {paths:?}");
}
