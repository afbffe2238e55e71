//! Result files read back: `compare` takes a `--repeat` file's
//! mean and interval, not its last round; an interrupted `--repeat`
//! summarizes the rounds it completed, in text and JSON alike; `report`
//! renders every file stampede writes exactly as the fresh command printed
//! it; `merge` names a file that is not a run's result. Through the binary,
//! against the built-in target on loopback, every run bounded.

use serde_json::Value;
use stampede_testkit::{
    read_json, spawn_target, stampede, temp_dir, text, ServerHandle, TargetConfig,
};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Runs `args`, expecting `code`; returns stdout.
fn expect(args: &[&str], code: i32) -> String {
    let output = stampede(args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "stampede {}\nstdout: {}\nstderr: {}",
        args.join(" "),
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

fn target() -> (ServerHandle, String) {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    (target, url)
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name)
        .to_str()
        .expect("UTF-8 temp path")
        .to_string()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn row<'a>(comparison: &'a Value, figure: &str) -> &'a Value {
    comparison["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["figure"] == figure)
        .unwrap_or_else(|| panic!("no {figure} row in {comparison}"))
}

#[test]
fn compare_takes_a_repeat_files_mean_and_interval_and_report_prints_the_same() {
    let (_target, url) = target();
    let dir = temp_dir("compare");
    let (plain, repeat, delta) = (
        path(&dir, "plain.json"),
        path(&dir, "rounds.json"),
        path(&dir, "delta.json"),
    );
    let load = [url.as_str(), "-n", "400", "-c", "2", "-t", "1", "-q"];
    let rounds_html = path(&dir, "rounds.html");
    let fresh_repeat = expect(
        &[
            &load[..],
            &["--repeat", "3", "--json", &repeat, "--html", &rounds_html],
        ]
        .concat(),
        0,
    );
    // --html with --repeat overlays the rounds (it was silently ignored).
    let page = std::fs::read_to_string(&rounds_html).expect("--repeat --html writes a page");
    assert!(page.contains("round 3"), "the rounds are drawn");
    // The exports of one run are refused before any load.
    let csv = path(&dir, "x.csv");
    expect(&[&load[..], &["--repeat", "3", "--csv", &csv]].concat(), 2);
    expect(&[&load[..], &["--json", &plain]].concat(), 0);
    let rounds = read_json(Path::new(&repeat));
    let summary = &rounds["summary"]["goodput"];
    let mean = summary["mean"].as_f64().expect("a mean over 3 rounds");
    let last = rounds["runs"][2]["goodput"].as_f64().unwrap();
    assert!(!close(mean, last), "the rounds differ: {mean} vs {last}");

    let fresh_compare = expect(&["compare", &plain, &repeat, "--json", &delta], 0);
    let comparison = read_json(Path::new(&delta));
    assert_eq!(comparison["schema"], "stampede.compare/1");
    assert_eq!(comparison["rounds"], serde_json::json!([1, 3]));
    let goodput = row(&comparison, "goodput");
    let compared = goodput["values"][1].as_f64().unwrap();
    assert!(
        close(compared, mean),
        "compared {compared}, the file's own mean {mean} (last round {last})"
    );
    let half = goodput["half_widths"][1].as_f64().expect("an interval");
    assert!(close(half, summary["half_width"].as_f64().unwrap()));
    assert_eq!(goodput["intervals"][1]["method"], "prediction");
    let p50 = row(&comparison, "p50");
    assert!(close(
        p50["values"][1].as_f64().unwrap(),
        rounds["summary"]["p50"]["mean"].as_f64().unwrap()
    ));

    // Three files: each file of rounds contributes its mean, and two files
    // of rounds are compared by Welch.
    let three = path(&dir, "three.json");
    expect(&["compare", &repeat, &plain, &repeat, "--json", &three], 0);
    let three = read_json(Path::new(&three));
    let goodput = row(&three, "goodput");
    for i in [0, 2] {
        assert!(
            close(goodput["values"][i].as_f64().unwrap(), mean),
            "{goodput}"
        );
    }
    assert_eq!(goodput["intervals"][1]["method"], "prediction");
    assert_eq!(goodput["intervals"][2]["method"], "welch");
    assert_eq!(goodput["verdicts"][2], "no_significant_difference");

    // `report` of each file prints what the fresh command printed.
    assert_eq!(expect(&["report", &repeat], 0), fresh_repeat);
    let report_html = path(&dir, "report.html");
    expect(&["report", &repeat, "--html", &report_html], 0);
    assert!(std::fs::read_to_string(&report_html)
        .unwrap()
        .contains("round 3"));
    assert_eq!(expect(&["report", &delta], 0), fresh_compare);
    let as_json: Value =
        serde_json::from_str(&expect(&["report", &repeat, "-o", "json"], 0)).unwrap();
    assert_eq!(as_json["schema"], "stampede.repeat/1");
    assert_eq!(
        as_json["summary"]["goodput"]["mean"],
        rounds["summary"]["goodput"]["mean"]
    );
    // A merge's output is a run's result and reads back too.
    let merged = path(&dir, "merged.json");
    let fresh_merge = expect(&["merge", &plain, "--json", &merged], 0);
    assert_eq!(read_json(Path::new(&merged))["schema"], "stampede.result/1");
    assert_eq!(expect(&["report", &merged], 0), fresh_merge);
    // No ±inf% for a zero error rate.
    assert!(!fresh_repeat.contains("inf"), "{fresh_repeat}");
}

#[test]
fn compare_text_is_aligned_and_warns_once_per_file() {
    let (_target, url) = target();
    let dir = temp_dir("align");
    let (a, b) = (path(&dir, "a.json"), path(&dir, "b.json"));
    let load = |c: &'static str| -> Vec<String> {
        [url.as_str(), "-n", "200", "-c", c, "-t", "1", "-q"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let run = |c: &'static str, extra: &[&str]| {
        let mut args = load(c);
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        expect(&args, 0);
    };
    run("2", &["--repeat", "2", "--json", &a]);
    run("3", &["--repeat", "3", "--json", &b]);
    let table = expect(&["compare", &a, &b], 0);
    let warnings = table.lines().filter(|l| l.starts_with("WARNING")).count();
    assert_eq!(warnings, 1, "one warning for b's three rounds: {table}");
    // Every row's verdict starts in the same column.
    let starts: Vec<usize> = table
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("x ±"))
        .map(|l| {
            [
                "better",
                "worse",
                "same",
                "no significant difference",
                "unknown",
            ]
            .iter()
            .filter_map(|v| l.find(v))
            .min()
            .unwrap_or_else(|| panic!("no verdict in {l:?}"))
        })
        .collect();
    assert!(starts.len() >= 8, "{table}");
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{table}");
}

/// Runs `--repeat 3 -d 1s` and interrupts it with SIGINT during round `k`.
fn interrupt_in_round(url: &str, json: &str, k: usize) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args([url, "-d", "1s", "-c", "2", "-t", "1", "--repeat", "3"])
        .args(["--json", json])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("stampede starts");
    let stderr = child.stderr.take().expect("piped");
    let marker = format!("round {k}/3");
    let mut reader = BufReader::new(stderr);
    let mut seen = String::new();
    let mut line = String::new();
    while reader.read_line(&mut line).expect("stderr reads") > 0 {
        seen.push_str(&line);
        if line.contains(&marker) {
            break;
        }
        line.clear();
    }
    assert!(seen.contains(&marker), "never reached round {k}: {seen}");
    // Well inside the round's 1 s, whatever the load on the machine.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut reader, &mut rest);
    });
    let output = child.wait_with_output().expect("stampede exits");
    drain.join().expect("stderr drained");
    output
}

#[test]
fn an_interrupted_repeat_summarizes_the_rounds_it_completed() {
    let (_target, url) = target();
    let dir = temp_dir("interrupt");
    for k in [2usize, 3] {
        let json = path(&dir, &format!("cut{k}.json"));
        let output = interrupt_in_round(&url, &json, k);
        let stdout = text(&output.stdout);
        assert_eq!(output.status.code(), Some(130), "{stdout}");
        let document = read_json(Path::new(&json));
        let completed = k - 1;
        assert_eq!(document["rounds"], k, "{document:#}");
        assert_eq!(document["rounds_completed"], completed);
        assert_eq!(document["interrupted"], true);
        assert_eq!(document["runs"][k - 1]["interrupted"], true);
        let goodputs: Vec<f64> = (0..completed)
            .map(|i| document["runs"][i]["goodput"].as_f64().unwrap())
            .collect();
        let mean = goodputs.iter().sum::<f64>() / completed as f64;
        let summary = &document["summary"]["goodput"];
        assert!(
            close(summary["mean"].as_f64().expect("a mean"), mean),
            "{summary}"
        );
        assert_eq!(summary["rounds"], completed);
        // Said once at most, not once per figure.
        assert!(stdout.matches("at least 2 rounds").count() <= 1, "{stdout}");
        if completed == 1 {
            assert!(summary["half_width"].is_null(), "{summary}");
            assert_eq!(
                stdout.matches("no confidence interval").count(),
                1,
                "{stdout}"
            );
            assert!(stdout.contains("One completed round"), "{stdout}");
        } else {
            assert!(summary["half_width"].as_f64().is_some(), "{summary}");
            assert!(
                stdout.contains(&format!("Mean over {completed} completed rounds")),
                "{stdout}"
            );
        }
        assert!(
            stdout.contains(&format!("round {k} was interrupted")),
            "{stdout}"
        );
        // The file reads back as the same text.
        assert_eq!(expect(&["report", &json], 0), stdout);
    }
}

#[test]
fn merge_and_report_name_a_file_that_is_not_a_result() {
    let dir = temp_dir("merge");
    let bogus = path(&dir, "x.json");
    std::fs::write(&bogus, "{\"schema\": 1, \"version\": 2}").unwrap();
    let untagged = path(&dir, "y.json");
    std::fs::write(&untagged, "[1, 2, 3]").unwrap();
    for (file, what) in [(&bogus, "schema tag is 1"), (&untagged, "no schema tag")] {
        for command in ["merge", "report", "compare"] {
            let mut args = vec![command, file.as_str()];
            if command == "compare" {
                args.push(file.as_str());
            }
            let output = stampede(&args);
            assert_eq!(output.status.code(), Some(2), "{command} {file}");
            let stderr = text(&output.stderr);
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(
                stderr.contains(&format!("{file} is not a stampede result")),
                "{stderr}"
            );
            assert!(stderr.contains(what), "{stderr}");
            assert!(!stderr.contains("invalid type"), "{stderr}");
        }
    }
}

#[test]
fn report_routes_a_sweep_file_to_the_sweep_renderer() {
    let (_target, url) = target();
    let dir = temp_dir("sweep");
    let sweep = path(&dir, "sweep.json");
    let args = [
        "sweep", &url, "-c", "1,2", "--step", "300ms", "--warmup", "0s", "-t", "1", "-q", "--json",
        &sweep,
    ];
    expect(&args, 0);
    assert_eq!(read_json(Path::new(&sweep))["schema"], "stampede.sweep/1");
    let text = expect(&["report", &sweep], 0);
    // The sweep's own table, as the sweep printed it (tests/reports/golden_reports.rs
    // checks it byte for byte).
    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.contains("load") && header.contains("class: rule"),
        "{text}"
    );
}

/// Merging a result that was cut short by Ctrl-C is no interrupt of the
/// merge: exit 0 (or what the figures say), a warning, and the merged file
/// still marked interrupted.
#[test]
fn merge_of_an_interrupted_input_is_no_interrupt_of_the_merge() {
    let (_target, url) = target();
    let dir = temp_dir("merge-interrupted");
    let a = path(&dir, "a.json");
    expect(
        &[&url, "-n", "50", "-c", "2", "-t", "1", "-q", "--json", &a],
        0,
    );
    let mut cut = read_json(Path::new(&a));
    cut["interrupted"] = Value::Bool(true);
    let b = path(&dir, "b.json");
    std::fs::write(&b, serde_json::to_string(&cut).expect("JSON")).expect("write b.json");
    let merged = path(&dir, "m.json");
    let output = stampede(&["merge", &a, &b, "--json", &merged]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("1 input was interrupted"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(
        read_json(Path::new(&merged))["interrupted"],
        Value::Bool(true)
    );
}
