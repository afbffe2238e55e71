//! `--log-requests` with a workload: a response that failed a
//! check is marked `check_failed` with the failed checks' indices in the
//! result's `checks[]`, and every line names its virtual user (`vu`), on
//! io_uring, epoll and tokio; each user sends exactly its own iterations.

use stampede_testkit::workload as workload_support;

use stampede_testkit::{event_loop_or_skip, one_thread, spawn_target, EVENT_LOOPS};
use std::collections::BTreeMap;
use workload_support::*;

struct Line {
    status: String,
    error: String,
    target: String,
    vu: u64,
    check: String,
}

fn lines(log: &std::path::Path) -> Vec<Line> {
    let text = std::fs::read_to_string(log).expect("the request log");
    let mut all = text.lines();
    assert_eq!(
        all.next(),
        Some("# t_s status latency_us bytes error target vu check")
    );
    all.map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f.len(), 8, "{l}");
        Line {
            status: f[1].into(),
            error: f[4].into(),
            target: f[5].into(),
            vu: f[6].parse().expect("vu"),
            check: f[7].into(),
        }
    })
    .collect()
}

#[test]
fn failed_checks_and_virtual_users_are_on_every_line() {
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let target = spawn_target(one_thread());
        let base = format!("http://{}", target.local_addr());
        let dir = temp_dir("log-checks");
        let text = format!(
            "[[group]]\nname = \"g\"\nconnections = 3\niterations = 2\n\n\
             [[group.step]]\nname = \"ok\"\nurl = \"{base}/?ok\"\ncheck = [\"status == 200\"]\n\n\
             [[group.step]]\nname = \"bad\"\nurl = \"{base}/?bad\"\n\
             check = [\"status == 200\", 'body contains \"nope\"']\n\n\
             [[group.step]]\nname = \"gone\"\nurl = \"{base}/status/404\"\n"
        );
        let file = write(&dir, "log.toml", &text);
        let log = dir.join("requests.log");
        let log_arg = log.display().to_string();
        let args = ["--scenario", &file, "--log-requests", &log_arg, "-t", "2"];
        let mut all = args.to_vec();
        all.extend(["--io", io]);
        let run = run_stampede(binary(), &all);
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        assert_eq!(run.count("/requests/check_failed"), 6, "{io}");
        let checks = run.result()["checks"].as_array().expect("checks[]").clone();
        assert_eq!(checks[2]["check"], "body contains \"nope\"", "{io}");
        let lines = lines(&log);
        assert_eq!(lines.len(), 18, "{io}: 3 users × 2 iterations × 3 steps");
        let mut per_user: BTreeMap<u64, usize> = BTreeMap::new();
        for line in &lines {
            *per_user.entry(line.vu).or_default() += 1;
            let (error, check) = match line.target.rsplit('/').next().unwrap_or("") {
                "?ok" => ("-", "-"),
                "?bad" => ("check_failed", "2"),
                "404" => ("-", "-"),
                other => panic!("{io}: unexpected target {other}"),
            };
            assert_eq!(
                (line.error.as_str(), line.check.as_str()),
                (error, check),
                "{io}"
            );
            if line.target.ends_with("404") {
                assert_eq!(line.status, "404", "{io}: a failed status, not a check");
            }
        }
        let users: Vec<u64> = per_user.keys().copied().collect();
        assert_eq!(users, [0, 1, 2], "{io}: the users of both workers");
        assert!(per_user.values().all(|&n| n == 6), "{io}: {per_user:?}");
        drop(target);
    }
}
