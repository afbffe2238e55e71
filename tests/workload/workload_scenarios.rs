//! `--scenario FILE.toml` end to end: each virtual user walks
//! login → me with the token (or the `sid` cookie) it extracted, so `/me`
//! answers 200 every time, as the access log of `stampede serve` proves; a
//! broken extractor shows as `check_failed` (nothing found) or as 401s
//! (a wrong value); think time slows a user; the open model (`rate`) starts
//! iterations; several groups run side by side; the cookie jar and the
//! command line's headers reach every step; the same on both event loops.
//! Bad scenario files: workload_scenario_errors.rs.

use stampede_testkit::workload as workload_support;

use workload_support::*;

/// A one-group scenario in `dir` with `load` (e.g. `connections = 3`),
/// `extra` group keys, and the steps in `steps` (TOML), feeding users.csv.
fn scenario(dir: &std::path::Path, load: &str, extra: &str, steps: &str) -> String {
    write(dir, "users.csv", "user,pass\nann,a1\nbob,b2\ncid,c3\n");
    write(
        dir,
        "shop.toml",
        &format!(
            "[[group]]\nname = \"auth\"\n{load}\n{extra}\nfeed = [{{ file = \"users.csv\" }}]\n\n{steps}"
        ),
    )
}

/// login (token extracted as `{extract}`) then me with `Bearer {{token}}`.
fn login_me(target: &LoggedTarget, extract: &str) -> String {
    format!(
        "[[group.step]]\nname = \"login\"\nmethod = \"POST\"\nurl = \"{login}\"\n\
         headers = {{ Content-Type = \"application/json\" }}\n\
         body = '{{\"user\":\"{{{{user}}}}\",\"pass\":\"{{{{pass}}}}\"}}'\n\
         check = [\"status == 200\"]\nextract = {{ token = \"{extract}\" }}\n\n\
         [[group.step]]\nname = \"me\"\nurl = \"{me}\"\n\
         headers = {{ Authorization = \"Bearer {{{{token}}}}\" }}\n\
         check = [\"status == 200\", \"json($.ok) == true\"]\n",
        login = target.url("/login"),
        me = target.url("/me"),
    )
}

fn step_names(run: &Run) -> Vec<String> {
    run.result()["targets"]
        .as_array()
        .unwrap_or_else(|| panic!("no targets[] in {}", run.result()))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn login_then_me_with_the_extracted_token_is_200_every_time() {
    for io in LOOPS {
        let dir = temp_dir("scn-token");
        let mut target = LoggedTarget::start(&dir);
        let file = scenario(
            &dir,
            "connections = 3",
            "",
            &login_me(&target, "json($.token)"),
        );
        let run = run_on(io, &["--scenario", &file, "-n", "60"]);
        target.stop();
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(step_names(&run), ["login", "me"]);
        assert_eq!(
            run.count("/requests/success"),
            60,
            "{}",
            run.result()["checks"]
        );
        run.assert_accounted("");
        let (me_passed, me_failed) = tally(&run, "status == 200", Some("me"));
        assert!(me_passed >= 29, "{io:?}: -n 60 is about 30 iterations");
        assert_eq!(me_failed, 0, "{io:?}");
        assert_eq!(tally(&run, "extract token", Some("login")).1, 0);
        let me = logged_statuses(&target.log, "/me");
        assert_eq!(me.len() as u64, me_passed, "{io:?}: /me lines");
        assert!(me.iter().all(|s| s == "200"), "{io:?}: {me:?}");
    }
}

#[test]
fn the_sid_cookie_extracted_from_set_cookie_opens_me() {
    let dir = temp_dir("scn-cookie");
    let mut target = LoggedTarget::start(&dir);
    let steps = format!(
        "[[group.step]]\nname = \"login\"\nmethod = \"POST\"\nurl = \"{}\"\nbody = \"{{{{user}}}}\"\n\
         extract = {{ sid = \"cookie(sid)\" }}\n\n\
         [[group.step]]\nname = \"me\"\nurl = \"{}\"\nheaders = {{ Cookie = \"sid={{{{sid}}}}\" }}\n\
         check = [\"status == 200\"]\n",
        target.url("/login"),
        target.url("/me"),
    );
    let file = scenario(&dir, "connections = 2", "", &steps);
    for io in LOOPS {
        let run = run_on(io, &["--scenario", &file, "-n", "20"]);
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(
            run.count("/requests/success"),
            20,
            "{}",
            run.result()["checks"]
        );
        assert_eq!(tally(&run, "extract sid", Some("login")).1, 0);
        assert_eq!(tally(&run, "status == 200", Some("me")).1, 0);
    }
    target.stop();
    let me = logged_statuses(&target.log, "/me");
    assert!(me.len() >= 18 && me.iter().all(|s| s == "200"), "{me:?}");
}

#[test]
fn the_cookie_jar_carries_the_session_and_command_line_headers_reach_every_step() {
    let dir = temp_dir("scn-jar");
    let mut target = LoggedTarget::start(&dir);
    let steps = format!(
        "[[group.step]]\nname = \"login\"\nmethod = \"POST\"\nurl = \"{}\"\nbody = \"{{{{user}}}}\"\n\n\
         [[group.step]]\nname = \"me\"\nurl = \"{}\"\ncheck = [\"status == 200\"]\n\n\
         [[group.step]]\nname = \"echo\"\nurl = \"{}\"\n\
         check = ['body ~ Cookie: a=1; sid=s-[0-9a-f]{{16}}\\r\\n', 'body ~ X-Run: r[0-9]+\\r\\n']\n",
        target.url("/login"),
        target.url("/me"),
        target.url("/echo"),
    );
    let file = scenario(&dir, "connections = 2", "", &steps);
    let flags = ["--cookie-jar", "--cookie", "a=1", "-H", "X-Run: r{{seq}}"];
    for io in LOOPS {
        let mut args = vec!["--scenario", file.as_str(), "-n", "30"];
        args.extend(flags);
        let run = run_on(io, &args);
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        assert_eq!(
            run.count("/requests/success"),
            30,
            "{io:?}: {}",
            run.result()["checks"]
        );
        assert_eq!(tally(&run, "status == 200", Some("me")), (10, 0), "{io:?}");
        run.assert_accounted("");
    }
    // --http1.0 reaches every step too (three requests, one per step).
    let http10 = run_on(None, &["--scenario", &file, "-n", "3", "--http1.0"]);
    assert_eq!(http10.count("/requests/sent"), 3, "{}", http10.stderr());
    // Without the jar the server's cookie goes nowhere: /me is a 401.
    let run = run_on(None, &["--scenario", &file, "-n", "6"]);
    assert_eq!(
        tally(&run, "status == 200", Some("me")),
        (0, 2),
        "{}",
        run.result()
    );
    target.stop();
    let log = std::fs::read_to_string(&target.log).unwrap_or_default();
    assert_eq!(log.matches(" HTTP/1.0\" ").count(), 3, "{log}");
    let me = logged_statuses(&target.log, "/me");
    assert_eq!(me.iter().filter(|s| *s == "200").count(), 2 * 10);
    // Jarless: two /me of the -n 6 run, one of the --http1.0 run.
    assert_eq!(me.iter().filter(|s| *s == "401").count(), 3);
}

#[test]
fn a_broken_extractor_shows_as_check_failed_or_as_401s() {
    // Finds nothing: the login is check_failed and the user's iteration
    // ends there, so /me is never sent with an empty token.
    let dir = temp_dir("scn-broken");
    let mut target = LoggedTarget::start(&dir);
    let file = scenario(
        &dir,
        "connections = 2",
        "",
        &login_me(&target, "json($.nope)"),
    );
    let run = run_on(None, &["--scenario", &file, "-n", "10"]);
    target.stop();
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/check_failed"), 10);
    run.assert_accounted("");
    let entry = check_entry(&run, "extract token", Some("login"));
    assert_eq!(entry["failed"], 10);
    assert_eq!(
        entry["samples"],
        serde_json::json!(["extract token: $.nope not found"])
    );
    assert!(logged_statuses(&target.log, "/me").is_empty());
    // A wrong value (`true` is no token): every /me is a 401, a failed
    // status (a status failure outranks a failed check), and the step's
    // `status == 200` check samples it.
    let dir = temp_dir("scn-wrong");
    let mut target = LoggedTarget::start(&dir);
    let file = scenario(
        &dir,
        "connections = 2",
        "",
        &login_me(&target, "json($.ok)"),
    );
    for io in LOOPS {
        let run = run_on(io, &["--scenario", &file, "-n", "20"]);
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        run.assert_accounted("");
        let me = check_entry(&run, "status == 200", Some("me"));
        assert_eq!(me["passed"], 0, "{io:?}");
        assert_eq!(me["samples"], serde_json::json!(["401"]), "{io:?}");
        assert_eq!(
            run.count("/requests/failed_status"),
            me["failed"].as_u64().unwrap_or(0),
            "{io:?}"
        );
        assert_eq!(run.result()["targets"][1]["status"]["401"], me["failed"]);
    }
    target.stop();
    let me = logged_statuses(&target.log, "/me");
    assert!(!me.is_empty() && me.iter().all(|s| s == "401"), "{me:?}");
}

#[test]
fn think_time_slows_a_user() {
    let dir = temp_dir("scn-think");
    let target = LoggedTarget::start(&dir);
    let steps = format!(
        "[[group.step]]\nname = \"a\"\nurl = \"{0}\"\n\n[[group.step]]\nname = \"b\"\nurl = \"{0}\"\n",
        target.url("/?u={{user}}")
    );
    let thinking = scenario(&dir, "connections = 1", "think = \"250ms\"", &steps);
    let thinking = std::fs::read_to_string(&thinking).expect("scenario");
    let thinking = write(&dir, "thinking.toml", &thinking);
    let eager = scenario(&dir, "connections = 1", "", &steps);
    for io in LOOPS {
        let slow = run_on(io, &["--scenario", &thinking, "-d", "2s"]);
        let fast = run_on(io, &["--scenario", &eager, "-d", "2s"]);
        assert_eq!(slow.code(), Some(0), "{io:?}: {}", slow.stderr());
        let slow_sent = slow.count("/requests/sent");
        let fast_sent = fast.count("/requests/sent");
        // 2 s of 250 ms pauses: at most 9 requests, whatever the machine.
        assert!(
            (2..=9).contains(&slow_sent),
            "{io:?}: {slow_sent} with think"
        );
        assert!(
            fast_sent > 3 * slow_sent,
            "{io:?}: {fast_sent} without think, {slow_sent} with"
        );
        slow.assert_accounted("");
    }
    drop(target);
}

#[test]
fn the_open_model_starts_iterations_at_the_groups_rate() {
    for io in LOOPS {
        let dir = temp_dir("scn-open");
        let mut target = LoggedTarget::start(&dir);
        let file = scenario(&dir, "rate = 20", "", &login_me(&target, "json($.token)"));
        let run = run_on(io, &["--scenario", &file, "-d", "2s"]);
        target.stop();
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        run.assert_accounted("");
        let logins = tally(&run, "status == 200", Some("login")).0;
        let (me_passed, me_failed) = tally(&run, "status == 200", Some("me"));
        // 20 iterations/s for 2 s: about 40 (generous: a loaded machine).
        assert!((25..=45).contains(&logins), "{io:?}: {logins} logins");
        assert!(me_passed + 2 >= logins, "{io:?}: {me_passed} of {logins}");
        assert_eq!(me_failed, 0, "{io:?}");
        assert_eq!(
            run.result()["plan"]["rate"],
            20.0,
            "{io:?}: {}",
            run.result()["plan"]
        );
        // The result names the plan (the reports' title), not its first step.
        assert_eq!(run.result()["plan"]["name"], "shop.toml", "{io:?}");
        let me = logged_statuses(&target.log, "/me");
        assert!(me.iter().all(|s| s == "200"), "{io:?}: {me:?}");
    }
}

#[test]
fn a_staged_group_runs_its_stages_without_a_note_about_flags_not_given() {
    let dir = temp_dir("scn-stages");
    let target = LoggedTarget::start(&dir);
    let steps = format!(
        "[[group.step]]\nname = \"home\"\nurl = \"{}\"\ncheck = [\"status == 200\"]\n",
        target.url("/?u={{user}}")
    );
    let file = scenario(&dir, "stages = \"1s:10,1s:20\"", "", &steps);
    let run = run_on(None, &["--scenario", &file]);
    drop(target);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    // The stages set the duration (2 s) and the rates: 0→10→20/s, ~15 requests.
    let sent = run.count("/requests/sent");
    assert!((5..=30).contains(&sent), "{sent} sent");
    assert_eq!(run.result()["plan"]["model"], "rate");
    assert_eq!(tally(&run, "status == 200", Some("home")).1, 0);
    // The rate is the scenario's doing, not a -r the user gave.
    assert!(!run.stderr().contains("-r "), "{}", run.stderr());
}

#[test]
fn two_groups_run_side_by_side_each_with_its_own_load() {
    for io in LOOPS {
        let dir = temp_dir("scn-groups");
        let mut target = LoggedTarget::start(&dir);
        let auth = scenario(
            &dir,
            "connections = 2",
            "",
            &login_me(&target, "json($.token)"),
        );
        let auth = std::fs::read_to_string(auth).expect("the auth group");
        let browse = format!(
            "\n[[group]]\nname = \"browse\"\nrate = 20\n\n[[group.step]]\nname = \"home\"\n\
             url = \"{}\"\ncheck = [\"body contains \\\"<html\\\"\"]\n",
            target.url("/?b={{seq}}")
        );
        let file = write(&dir, "groups.toml", &(auth + &browse));
        let run = run_on(io, &["--scenario", &file, "-d", "2s"]);
        target.stop();
        assert_eq!(run.code(), Some(0), "{io:?}: {}", run.stderr());
        run.assert_accounted("");
        assert_eq!(step_names(&run), ["auth/login", "auth/me", "browse/home"]);
        let groups = run.result()["groups"].as_array().expect("groups[]");
        let names: Vec<&str> = groups.iter().filter_map(|g| g["name"].as_str()).collect();
        assert_eq!(names, ["auth", "browse"], "{io:?}");
        assert_eq!(groups[0]["load"], "2 connections");
        assert_eq!(groups[1]["load"], "20 iterations/s");
        // The open group keeps its rate whatever the closed one does.
        let (home, home_failed) = tally(&run, "body contains \"<html\"", Some("browse/home"));
        assert!((25..=45).contains(&home), "{io:?}: {home} at 20/s for 2 s");
        assert_eq!(home_failed, 0);
        assert_eq!(tally(&run, "status == 200", Some("auth/me")).1, 0, "{io:?}");
        let me = logged_statuses(&target.log, "/me");
        assert!(!me.is_empty() && me.iter().all(|s| s == "200"), "{io:?}");
    }
}

// An open-model group's `total_iterations`: the group starts exactly N
// iterations, paced by its rate, then ends the run by itself, on every
// event loop (the reactors' dispatch and the tokio pacer both stop at the
// count, two workers sharing it as the pacer numbers their instants).
mod total_iterations {
    use stampede_testkit::{read_request_head, run_on_loop, temp_dir, RawServer};
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn scenario(port: u16) -> String {
        format!(
            r#"[[group]]
name = "paced"
rate = 40.0
max_connections = 3
total_iterations = 30

[[group.step]]
name = "first"
url = "http://127.0.0.1:{port}/a"

[[group.step]]
name = "second"
url = "http://127.0.0.1:{port}/b"
"#
        )
    }

    #[test]
    fn total_iterations_end_an_open_group_at_its_count() {
        let served = Arc::new(AtomicU64::new(0));
        let count = served.clone();
        let server = RawServer::start(move |mut stream| {
            while read_request_head(&mut stream) {
                count.fetch_add(1, Ordering::SeqCst);
                let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                if stream.write_all(reply).is_err() {
                    return;
                }
            }
        });
        let dir = temp_dir("scenario-total-iterations");
        let file = dir.join("paced.toml");
        std::fs::write(&file, scenario(server.addr().port())).unwrap();
        let file = file.display().to_string();
        for io in ["epoll", "uring", "tokio"] {
            served.store(0, Ordering::SeqCst);
            let started = Instant::now();
            let Some(run) = run_on_loop(io, &["--scenario", &file, "-t", "2"]) else {
                continue;
            };
            let took = started.elapsed();
            assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
            // 30 iterations of 2 steps; the 30th starts at 29/40 s.
            assert_eq!(served.load(Ordering::SeqCst), 60, "--io {io}");
            assert_eq!(run.count("/requests/sent"), 60, "--io {io}");
            assert!(
                took >= Duration::from_millis(650) && took < Duration::from_secs(20),
                "--io {io}: ended by its count, paced: {took:?}"
            );
        }
    }
}
