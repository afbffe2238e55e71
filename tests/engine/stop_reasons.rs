//! The trial's stop-reason defects, each a short run against `stampede
//! serve` on loopback: a worker stuck before its first snapshot is not
//! "no request was sent" (D2); a unique feeder running out while another
//! group goes on to `-d` is no run-level `feed_exhausted` (D3); a script
//! that calls `thread:stop()` in every thread says so (D8); the refusals
//! of `--pipeline` name what the user gave (D4).

use stampede_testkit::{read_json, stampede, temp_dir, text, ServeProcess};
use std::path::Path;

/// Writes `contents` to `dir/name` and gives its path as text.
fn write(dir: &Path, name: &str, contents: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write a test file");
    path.to_string_lossy().into_owned()
}

/// Runs the binary with `args` plus `--json dir/out.json`: exit code,
/// stdout, stderr and the result.
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String, serde_json::Value) {
    let json = dir.join("out.json");
    let mut all: Vec<&str> = args.to_vec();
    let json_arg = json.to_string_lossy().into_owned();
    all.extend(["--json", json_arg.as_str()]);
    let output = stampede(&all);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(
        json.exists(),
        "no result written; stdout: {stdout}\nstderr: {stderr}"
    );
    (output.status.code(), stdout, stderr, read_json(&json))
}

#[test]
fn a_worker_stuck_before_its_first_snapshot_is_not_no_request_sent() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("stops-stuck");
    let script = write(
        &dir,
        "hang.lua",
        "local n = 0\nresponse = function(s, h, b)\n  n = n + 1\n  if n >= 5 then while true do end end\nend\n",
    );
    let url = format!("http://127.0.0.1:{}/", serve.port);
    let args = ["run", &url, "-c2", "-t1", "-d", "2s", "--script", &script];
    let (code, stdout, stderr, result) = run(&dir, &args);
    assert_eq!(code, Some(2), "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(result["stop_reason"], "worker_stuck", "{result}");
    let all = format!("{stdout}\n{stderr}");
    assert!(
        !all.contains("no request was sent"),
        "the server saw requests: {all}"
    );
    assert!(
        stderr.contains("are lost") && stderr.contains("snapshot"),
        "the warning says the figures are lost: {stderr}"
    );
    assert!(
        stdout.contains("figures after its last snapshot are lost"),
        "the summary says so: {stdout}"
    );
    let warnings = result["warnings"].to_string();
    assert!(warnings.contains("are lost"), "{warnings}");
}

/// A group `fed` of five users with a unique feeder of three rows and two
/// steps, and a group `free` of two users without one.
fn fed_and_free(dir: &Path, port: u16) -> String {
    write(dir, "ids.csv", "id\n1\n2\n3\n");
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let toml = format!(
        "[[group]]\nname = \"fed\"\nconnections = 5\n\
         feed = [{{ file = \"ids.csv\", mode = \"unique\" }}]\n\n\
         [[group.step]]\nname = \"one\"\nurl = \"{one}\"\n\n\
         [[group.step]]\nname = \"two\"\nurl = \"{two}\"\n\n\
         [[group]]\nname = \"free\"\nconnections = 2\n\n\
         [[group.step]]\nname = \"ping\"\nurl = \"{ping}\"\n",
        one = url("/one?id={{id}}"),
        two = url("/two?id={{id}}"),
        ping = url("/ping"),
    );
    write(dir, "sc.toml", &toml)
}

#[test]
fn a_feeder_running_out_while_another_group_goes_on_is_no_early_stop() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("stops-feed");
    let scenario = fed_and_free(&dir, serve.port);
    let args = ["run", "--scenario", &scenario, "-d", "2s"];
    let (code, stdout, stderr, result) = run(&dir, &args);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    let elapsed = result["elapsed_s"].as_f64().unwrap_or(0.0);
    assert!(elapsed >= 1.9, "the free group ran to -d: {elapsed} s");
    assert!(
        result.get("stop_reason").is_none(),
        "the run went its full -d: {}",
        result["stop_reason"]
    );
    assert!(!stdout.contains("Stopped"), "{stdout}");
    let notices = result["notices"].to_string();
    assert!(
        notices.contains("group fed: its unique feeder ran out of rows"),
        "the feeder's group says it stopped: {notices}"
    );
}

#[test]
fn thread_stop_in_every_thread_is_a_stop_reason() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("stops-script");
    // As wrk's scripts/stop.lua: each thread stops after 100 responses.
    let script = write(
        &dir,
        "stop.lua",
        "local counter = 0\nfunction response()\n  if counter == 100 then\n    wrk.thread:stop()\n  end\n  counter = counter + 1\nend\n",
    );
    let url = format!("http://127.0.0.1:{}/", serve.port);
    let args = ["run", &url, "-t1", "-c4", "-d", "20s", "--script", &script];
    let (code, stdout, stderr, result) = run(&dir, &args);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    let elapsed = result["elapsed_s"].as_f64().unwrap_or(99.0);
    assert!(elapsed < 15.0, "the script ended it, not -d: {elapsed} s");
    assert_eq!(result["stop_reason"], "script_stopped", "{result}");
    assert!(
        stdout.contains("Stopped       early: the script called thread:stop() in every thread"),
        "{stdout}"
    );
}

#[test]
fn the_pipeline_refusals_name_what_was_given() {
    let dir = temp_dir("stops-pipeline");
    let script = write(&dir, "delay.lua", "function delay()\n  return 10\nend\n");
    let url = "http://127.0.0.1:9/";
    let output = stampede(&[
        "run",
        url,
        "-d",
        "1s",
        "--pipeline",
        "4",
        "--script",
        &script,
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--script") && stderr.contains("drop --pipeline"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("scenarios"),
        "no --scenario was given: {stderr}"
    );

    let scenario = fed_and_free(&dir, 9);
    let output = stampede(&[
        "run",
        "-d",
        "1s",
        "--scenario",
        &scenario,
        "--pipeline",
        "4",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--scenario") && stderr.contains("drop --pipeline"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("--targets"),
        "no --targets was given: {stderr}"
    );
}
