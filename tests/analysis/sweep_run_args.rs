//! `stampede sweep --run-args`: the user's words are split as a shell splits
//! them (a quoted body stays one argument), and what the sweep sets itself
//! (the load, the step length, warm-up, threads, SLO) is refused there with
//! the sweep's flag to use instead, not silently overridden.

use stampede_testkit::{one_thread, read_json, spawn_target, stampede, temp_dir, text};

#[test]
fn quoted_run_args_stay_one_argument() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/echo", target.local_addr());
    let dir = temp_dir("sweep-run-args");
    let json = dir.join("sweep.json");
    let output = stampede(&[
        "sweep",
        &url,
        "-c",
        "1,2",
        "--step",
        "300ms",
        "--warmup",
        "0s",
        "-t",
        "1",
        "-q",
        "--run-args",
        "-m POST -b 'a b c'",
        "--json",
        json.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let sweep = read_json(&json);
    for step in sweep["steps"].as_array().expect("steps") {
        let result = &step["result"];
        assert_eq!(result["plan"]["method"], "POST", "{result}");
        assert_eq!(result["plan"]["body_bytes"], 5, "the body is 'a b c'");
        assert!(result["requests"]["success"].as_u64() > Some(0), "{result}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_the_sweep_sets_is_refused_in_run_args() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for (words, instead) in [
        ("-c 5", "sweep -c or --max-connections"),
        ("-d 1s", "sweep --step"),
        ("-t 3", "sweep -t"),
        ("--slo p99<1s", "sweep --slo"),
        ("-b 'unbalanced", "unbalanced quotes"),
    ] {
        let output = stampede(&[
            "sweep",
            &url,
            "-c",
            "1,2",
            "--step",
            "300ms",
            "-q",
            "--run-args",
            words,
        ]);
        assert_eq!(output.status.code(), Some(2), "--run-args {words}");
        let stderr = text(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(instead), "--run-args {words}: {stderr}");
    }
    assert_eq!(target.stats().requests_total, 0, "nothing was sent");
}
