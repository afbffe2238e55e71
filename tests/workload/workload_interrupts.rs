//! A workload run stopped from outside: Ctrl-C mid-run, and the
//! server dying under it. The outcome classes still add up (`sent =
//! success + failed_status + check_failed + errors + unfinished`), a lost
//! connection is an error and never a failed check, and the checks' tallies
//! match the successes, on both event loops.

use stampede_testkit::workload as workload_support;

use stampede_testkit::{read_json, text};
use std::process::Command;
use std::time::Duration;
use workload_support::*;

/// Starts the binary in the background, writing its result to `json`.
fn spawn_run(args: &[&str], json: &std::path::Path) -> std::process::Child {
    Command::new(binary())
        .args(args)
        .arg("--json")
        .arg(json)
        .arg("--quiet")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("stampede starts")
}

#[test]
fn ctrl_c_mid_run_keeps_the_outcomes_adding_up() {
    for io in LOOPS {
        let dir = temp_dir("checks-sigint");
        let target = LoggedTarget::start(&dir);
        let json = dir.join("result.json");
        let url = target.url("/delay/20?n={{seq}}");
        let mut args = vec![
            url.as_str(),
            "-c",
            "4",
            "-d",
            "5s",
            "--check",
            "status == 200",
        ];
        if let Some(io) = io {
            args.extend(["--io", io]);
        }
        let child = spawn_run(&args, &json);
        std::thread::sleep(Duration::from_millis(1500));
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let output = child.wait_with_output().expect("stampede exits");
        assert_eq!(
            output.status.code(),
            Some(130),
            "{io:?}: {}",
            text(&output.stderr)
        );
        let run = Run {
            output,
            json: Some(read_json(&json)),
        };
        assert_eq!(run.result()["interrupted"], true, "{io:?}");
        assert!(run.count("/requests/success") > 0, "{io:?}");
        run.assert_accounted("");
        let (passed, failed) = tally(&run, "status == 200", None);
        assert_eq!(passed, run.count("/requests/success"), "{io:?}");
        assert_eq!(failed, 0, "{io:?}");
    }
}

#[test]
fn a_server_that_dies_mid_run_leaves_errors_not_check_failures() {
    for io in LOOPS {
        let dir = temp_dir("checks-dies");
        let mut target = LoggedTarget::start(&dir);
        let json = dir.join("result.json");
        let url = target.url("/?n={{seq}}");
        let mut args = vec![url.as_str(), "-c", "2", "-d", "3s"];
        args.extend([
            "--check",
            "status == 200",
            "--extract",
            "srv=header(Server)",
        ]);
        if let Some(io) = io {
            args.extend(["--io", io]);
        }
        let child = spawn_run(&args, &json);
        std::thread::sleep(Duration::from_millis(1000));
        target.stop();
        let output = child.wait_with_output().expect("stampede exits");
        let run = Run {
            output,
            json: Some(read_json(&json)),
        };
        assert!(run.count("/requests/success") > 0, "{io:?}");
        assert!(
            run.count("/requests/errors") > 0,
            "{io:?}: {}",
            run.result()["requests"]
        );
        assert_eq!(run.count("/requests/check_failed"), 0, "{io:?}");
        run.assert_accounted("");
        assert_eq!(
            tally(&run, "extract srv", None),
            (run.count("/requests/success"), 0),
            "{io:?}"
        );
    }
}
