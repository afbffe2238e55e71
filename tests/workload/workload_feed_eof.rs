//! A `unique` feeder running out , with JMeter's
//! CSV Data Set "stop thread on EOF" semantics: the virtual user that needs
//! a row and finds none stops; the others finish the iteration they are in
//! (every one of its steps) and stop when they in turn need a row; the run
//! ends when every user has stopped, with `stop_reason: "feed_exhausted"`.
//! A two-step scenario with think time between its steps, four users over
//! two workers and ten rows: each step is sent exactly ten times, once per
//! row, as the result's per-step counts and the target's access log prove,
//! on io_uring, epoll, tokio, over HTTP/2, and in the open model.

use stampede_testkit::workload as workload_support;

use stampede_testkit::{event_loop_or_skip, EVENT_LOOPS};
use std::collections::BTreeMap;
use workload_support::*;

const ROWS: u64 = 10;

/// Ten rows of column `id`, and a group of `load` walking two steps with a
/// think time between them, so that when the rows run out the other users
/// are inside an iteration (between its first and its second step); then
/// the groups in `more` (TOML).
fn two_step_scenario(
    dir: &std::path::Path,
    target: &LoggedTarget,
    load: &str,
    more: &str,
) -> String {
    let mut ids = String::from("id\n");
    for i in 0..ROWS {
        ids.push_str(&format!("{i}\n"));
    }
    write(dir, "ids.csv", &ids);
    let text = format!(
        "[[group]]\nname = \"eof\"\n{load}\nthink = \"40ms..80ms\"\n\
         feed = [{{ file = \"ids.csv\", mode = \"unique\" }}]\n\n\
         [[group.step]]\nname = \"first\"\nurl = \"{first}\"\ncheck = [\"status == 200\"]\n\n\
         [[group.step]]\nname = \"second\"\nurl = \"{second}\"\ncheck = [\"status == 200\"]\n",
        first = target.url("/?step=first&id={{id}}"),
        second = target.url("/?step=second&id={{id}}"),
    );
    write(dir, "eof.toml", &(text + more))
}

/// How many times each id was logged for `step` (`/?step=STEP&id=ID`).
fn ids_of_step(paths: &[String], step: &str) -> BTreeMap<u64, usize> {
    let prefix = format!("/?step={step}&id=");
    let mut counts = BTreeMap::new();
    for path in paths.iter().filter(|p| p.starts_with(&prefix)) {
        let id = path[prefix.len()..]
            .parse()
            .unwrap_or_else(|_| panic!("unexpected path {path}"));
        *counts.entry(id).or_insert(0) += 1;
    }
    counts
}

/// The result's per-step count `field` of the step named `name` (with
/// several groups, `group/step`).
fn step_count(run: &Run, name: &str, field: &str) -> u64 {
    run.result()["targets"]
        .as_array()
        .unwrap_or_else(|| panic!("no targets[] in {}", run.result()))
        .iter()
        .find(|t| t["name"] == name)
        .and_then(|t| t[field].as_u64())
        .unwrap_or_else(|| panic!("no {field} of step {name} in {}", run.result()["targets"]))
}

/// Every row went through both steps exactly once, and the run says why it stopped.
fn assert_every_iteration_complete(run: &Run, paths: &[String], label: &str) {
    assert_rows_through_both_steps(run, paths, "", label);
    assert_eq!(
        run.count("/requests/sent"),
        2 * ROWS,
        "{label}: 10 rows × 2 steps"
    );
    assert_eq!(run.count("/requests/success"), 2 * ROWS, "{label}");
    assert_eq!(
        paths.len() as u64,
        2 * ROWS,
        "{label}: the target got 20: {paths:?}"
    );
}

/// The feeding group (its steps named `{prefix}first`, `{prefix}second`)
/// sent each row through both steps exactly once.
fn assert_rows_through_both_steps(run: &Run, paths: &[String], prefix: &str, label: &str) {
    assert_eq!(run.code(), Some(0), "{label}: {}", run.stderr());
    assert_eq!(
        run.result()["stop_reason"],
        "feed_exhausted",
        "{label}: {}",
        run.result()["stop_reason"]
    );
    run.assert_accounted("");
    assert_eq!(run.count("/requests/unfinished"), 0, "{label}");
    for step in ["first", "second"] {
        let name = format!("{prefix}{step}");
        assert_eq!(
            step_count(run, &name, "finished"),
            ROWS,
            "{label}: step {step}"
        );
        assert_eq!(
            step_count(run, &name, "success"),
            ROWS,
            "{label}: step {step}"
        );
        let expected: BTreeMap<u64, usize> = (0..ROWS).map(|id| (id, 1)).collect();
        assert_eq!(
            ids_of_step(paths, step),
            expected,
            "{label}: step {step} got each row once (the target's log)"
        );
    }
    assert!(
        run.result()["elapsed_s"].as_f64().unwrap_or(99.0) < 20.0,
        "{label}: stopped when the users did, not at -d"
    );
}

/// Runs the scenario with `extra` arguments.
fn run_scenario(load: &str, extra: &[&str]) -> (Run, Vec<String>) {
    run_scenario_with(load, |_| String::new(), extra)
}

/// As [`run_scenario`], with more groups: `more` makes their TOML from the target.
fn run_scenario_with(
    load: &str,
    more: impl FnOnce(&LoggedTarget) -> String,
    extra: &[&str],
) -> (Run, Vec<String>) {
    let dir = temp_dir("feed-eof");
    let target = LoggedTarget::start(&dir);
    let more = more(&target);
    let file = two_step_scenario(&dir, &target, load, &more);
    let mut args = vec!["--scenario", file.as_str(), "-t", "2", "-d", "30s"];
    args.extend(extra);
    let run = run_stampede(binary(), &args);
    let paths = target.stop_and_paths();
    (run, paths)
}

#[test]
fn the_users_finish_their_iterations_when_the_rows_run_out() {
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let label = format!("--io {io}");
        let (run, paths) = run_scenario("connections = 4", &["--io", io]);
        assert_every_iteration_complete(&run, &paths, &label);
        assert_eq!(run.result()["plan"]["io"], io, "{label} ran where asked");
    }
}

#[test]
fn over_http2_each_stream_finishes_its_iteration() {
    // Two connections of two streams: four users.
    let extra = ["--http2", "--streams", "2"];
    let (run, paths) = run_scenario("connections = 2", &extra);
    assert_every_iteration_complete(&run, &paths, "--http2");
    assert_eq!(
        run.result()["plan"]["http_version"],
        "2",
        "{}",
        run.result()["plan"]
    );
}

#[test]
fn in_the_open_model_started_iterations_finish() {
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let label = format!("rate = 40, --io {io}");
        let (run, paths) = run_scenario("rate = 40", &["--io", io]);
        assert_every_iteration_complete(&run, &paths, &label);
    }
}

#[test]
fn another_group_without_the_feeder_runs_on_to_its_own_end() {
    // JMeter's EOF stops the threads of the group that reads the file; a
    // group without it walks all its iterations (longer than the rows last).
    let other = |target: &LoggedTarget| {
        format!(
            "\n[[group]]\nname = \"other\"\nconnections = 1\niterations = 40\n\
             think = \"20ms..30ms\"\n\n[[group.step]]\nname = \"ping\"\nurl = \"{}\"\n",
            target.url("/?other={{iter}}")
        )
    };
    for io in ["epoll", "tokio"] {
        let label = format!("two groups, --io {io}");
        let (run, paths) = run_scenario_with("connections = 4", other, &["--io", io]);
        assert_rows_through_both_steps(&run, &paths, "eof/", &label);
        assert_eq!(step_count(&run, "other/ping", "success"), 40, "{label}");
        let pings = paths.iter().filter(|p| p.starts_with("/?other=")).count();
        assert_eq!(pings, 40, "{label}: every iteration of the other group");
        assert_eq!(run.count("/requests/sent"), 2 * ROWS + 40, "{label}");
    }
}
