//! A workload over HTTP/2 in the open model (`--http2 -r RATE`): each
//! stream slot is a virtual user, each arrival its next step, rendered and
//! judged as in the closed model. The target's access log proves what it
//! got (a feeder's rows in order, each once), the checks are counted, a
//! scenario's steps keep their order, the request log has one line per
//! finished request, and a 1 s server stall shows in p99: the requests
//! queued behind it count their wait from their intended instant.

use stampede_testkit::workload as workload_support;

use stampede_testkit::{one_thread, spawn_target};
use workload_support::*;

/// A CSV with column `column` holding `rows` (a header line first).
fn column_csv(dir: &std::path::Path, column: &str, rows: &[String]) -> String {
    let mut text = format!("{column}\n");
    for row in rows {
        text.push_str(row);
        text.push('\n');
    }
    write(dir, &format!("{column}.csv"), &text)
}

/// The data lines of a `--log-requests` file (its header aside).
fn logged_lines(log: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).expect("the request log");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_feeder_goes_out_in_order_at_the_rate_and_its_checks_count() {
    let dir = temp_dir("h2-open-feed");
    let rows: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    let feed = column_csv(&dir, "id", &rows);
    let target = LoggedTarget::start(&dir);
    let log = dir.join("requests.log");
    // One stream: the requests leave one after another, so the server
    // sees the rows in the feeder's order.
    let run = run_stampede(
        binary(),
        &[
            &target.url("/?id={{id}}"),
            "--http2",
            "-r",
            "100",
            "-n",
            "30",
            "-c",
            "1",
            "--streams",
            "1",
            "-t",
            "1",
            "--feed",
            &feed,
            "--check",
            "status == 200",
            "--log-requests",
            log.to_str().unwrap(),
        ],
    );
    let paths = target.stop_and_paths();
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), 30);
    assert_eq!(run.count("/requests/success"), 30, "{}", run.result());
    assert_eq!(tally(&run, "status == 200", None), (30, 0));
    run.assert_accounted("");
    let expected: Vec<String> = rows.iter().map(|id| format!("/?id={id}")).collect();
    assert_eq!(paths, expected, "the feeder's rows, in order, each once");
    assert_eq!(
        logged_lines(&log).len(),
        30,
        "one line per finished request"
    );
}

#[test]
fn unique_rows_over_several_streams_and_connections_each_go_once() {
    let dir = temp_dir("h2-open-unique");
    let rows: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    let feed = format!("{}:unique", column_csv(&dir, "id", &rows));
    let target = LoggedTarget::start(&dir);
    let log = dir.join("requests.log");
    let run = run_stampede(
        binary(),
        &[
            &target.url("/?id={{id}}"),
            "--http2",
            "-r",
            "200",
            "-d",
            "20s",
            "-c",
            "2",
            "--streams",
            "2",
            "-t",
            "2",
            "--feed",
            &feed,
            "--check",
            "status == 200",
            "--log-requests",
            log.to_str().unwrap(),
        ],
    );
    let mut paths = target.stop_and_paths();
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.result()["stop_reason"], "feed_exhausted");
    assert_eq!(run.count("/requests/sent"), 40);
    assert_eq!(run.count("/requests/success"), 40, "{}", run.result());
    assert_eq!(tally(&run, "status == 200", None), (40, 0));
    paths.sort();
    let mut expected: Vec<String> = rows.iter().map(|id| format!("/?id={id}")).collect();
    expected.sort();
    assert_eq!(paths, expected, "every row once");
    assert_eq!(
        logged_lines(&log).len(),
        40,
        "one line per finished request"
    );
}

#[test]
fn a_paced_scenario_keeps_its_steps_in_order_over_http2() {
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let dir = temp_dir("h2-open-scenario");
    // Ten arrivals (10/s for 1 s), each an iteration: `me` needs the token
    // its own `login` extracted, so a step out of order fails its check.
    let text = format!(
        "[[group]]\nname = \"auth\"\nrate = 10\nduration = \"1s\"\n\n\
         [[group.step]]\nname = \"login\"\nmethod = \"POST\"\nurl = \"{base}/login\"\n\
         headers = {{ Content-Type = \"application/json\" }}\n\
         body = '{{\"user\":\"u{{{{conn}}}}\",\"pass\":\"p\"}}'\n\
         check = [\"status == 200\"]\nextract = {{ token = \"json($.token)\" }}\n\n\
         [[group.step]]\nname = \"me\"\nurl = \"{base}/me\"\n\
         headers = {{ Authorization = \"Bearer {{{{token}}}}\" }}\n\
         check = [\"status == 200\", \"json($.ok) == true\"]\n"
    );
    let file = write(&dir, "paced.toml", &text);
    let log = dir.join("requests.log");
    let run = run_stampede(
        binary(),
        &[
            "--scenario",
            &file,
            "--http2",
            "-d",
            "30s",
            "--log-requests",
            log.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), 20, "10 iterations × 2 steps");
    assert_eq!(run.count("/requests/success"), 20, "{}", run.result());
    assert_eq!(tally(&run, "extract token", Some("login")), (10, 0));
    assert_eq!(tally(&run, "json($.ok) == true", Some("me")), (10, 0));
    assert_eq!(run.result()["stop_reason"], "groups_done");
    assert_eq!(
        logged_lines(&log).len(),
        20,
        "one line per finished request"
    );
    let stats = target.shutdown().expect("target stats");
    assert_eq!(stats.h2_streams_total, 20, "all of it over HTTP/2");
}

#[test]
fn a_one_second_stall_shows_in_p99_with_the_backlog_counted() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("h2-open-stall");
    // The sixth request stalls 1 s; on one stream the requests due
    // meanwhile (50/s) wait in the backlog.
    let rows: Vec<String> = (0..60)
        .map(|i| if i == 5 { "delay/1000" } else { "bytes/10" }.to_string())
        .collect();
    let feed = column_csv(&dir, "path", &rows);
    let log = dir.join("requests.log");
    let url = format!("http://{}/{{{{path}}}}", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "-r",
            "50",
            "-n",
            "60",
            "-c",
            "1",
            "--streams",
            "1",
            "-t",
            "1",
            "--feed",
            &feed,
            "--check",
            "status == 200",
            "--log-requests",
            log.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/success"), 60, "{}", run.result());
    assert_eq!(tally(&run, "status == 200", None), (60, 0));
    let p99 = run.result()["latency_us"]["p99"].as_u64().unwrap_or(0);
    assert!(p99 >= 990_000, "the stall is in p99: {p99} us");
    // Those intended in the stall's first half ended after it: at least
    // 0.5 s each from their intended instant (25 of them at 50/s), where
    // a clock started at the send would show one slow request.
    let lines = logged_lines(&log);
    assert_eq!(lines.len(), 60, "one line per finished request");
    let waited = lines
        .iter()
        .filter_map(|l| l.split(' ').nth(2).and_then(|us| us.parse::<u64>().ok()))
        .filter(|&us| us >= 500_000)
        .count();
    assert!(waited >= 20, "{waited} requests show the backlog's wait");
    let stats = target.shutdown().expect("target stats");
    assert_eq!(stats.h2_streams_total, 60);
}
