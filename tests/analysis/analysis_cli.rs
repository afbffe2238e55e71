//! From numbers to answers, end to end: the SLO gate's exit status, server
//! monitoring, a sweep that finds a knee on a CPU-bound target started with
//! --spawn, repeated runs, compare, and experiments on a server's
//! configuration (`stampede experiment`: its order, verdicts and cost per
//! request, against `stampede serve`).

use stampede_testkit::{
    binary, free_port, one_thread, run_stampede, spawn_target, stampede, temp_dir, TargetConfig,
};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Output;

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn slo_gate_passes_with_0_and_fails_with_1() {
    let _machine = shared_machine();
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let pass = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "500",
            "-c",
            "2",
            "-t",
            "1",
            "--slo",
            "p99<5s,errors<1%",
        ],
    );
    assert_eq!(pass.code(), Some(0), "{}", pass.stderr());
    let checks = pass.result()["slo"].as_array().unwrap().clone();
    assert_eq!(checks.len(), 2);
    assert!(checks.iter().all(|c| c["passed"] == true), "{checks:?}");
    let fail = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "500",
            "-c",
            "2",
            "-t",
            "1",
            "--slo",
            "p50<5s,rps>100000000",
        ],
    );
    assert_eq!(fail.code(), Some(1), "{}", fail.stderr());
    assert!(fail.stdout().contains("FAIL"), "{}", fail.stdout());
    let bad = stampede(&[&url, "-n", "1", "--slo", "p99<<5"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn monitors_the_server_process_and_itself() {
    let _machine = shared_machine();
    let port = free_port();
    let spawn = format!("{} serve --port {port} --threads 1", binary().display());
    let url = format!("http://127.0.0.1:{port}/");
    let run = run_stampede(
        binary(),
        &[
            &url, "-d", "1500ms", "-c", "4", "-t", "1", "--spawn", &spawn,
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let processes = run.result()["monitor"]["processes"]
        .as_array()
        .unwrap()
        .clone();
    let server = processes
        .iter()
        .find(|p| p["role"] == "server")
        .expect("server monitored");
    let client = processes
        .iter()
        .find(|p| p["role"] == "client")
        .expect("client monitored");
    assert_eq!(server["name"], "stampede");
    assert!(server["cpu_user_s"].as_f64().unwrap() + server["cpu_sys_s"].as_f64().unwrap() > 0.05);
    assert!(server["cpu_s_per_1k_requests"].as_f64().unwrap() > 0.0);
    assert!(!server["samples"].as_array().unwrap().is_empty());
    assert!(client["rss_max_bytes"].as_u64().unwrap() > 0);
    // The spawned server is stopped afterwards: the port is free again.
    assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
}

#[test]
fn sweep_on_a_cpu_bound_target_finds_the_knee() {
    let _machine = shared_machine();
    let port = free_port();
    let spawn = format!("{} serve --port {port} --threads 1", binary().display());
    let url = format!("http://127.0.0.1:{port}/cpu/300000");
    let json: PathBuf = temp_dir("sweep").join("sweep.json");
    let html = json.with_extension("html");
    let output = stampede(&[
        "sweep",
        &url,
        "-c",
        "1,4,16",
        "--step",
        "1s",
        "--warmup",
        "200ms",
        "-t",
        "1",
        "--spawn",
        &spawn,
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--quiet",
    ]);
    stampede_testkit::assert_succeeded(&output);
    let sweep: serde_json::Value = stampede_testkit::read_json(&json);
    assert_eq!(sweep["schema"], "stampede.sweep/1");
    let steps = sweep["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0]["connections"], 1);
    assert_eq!(steps[0]["result"]["schema"], "stampede.result/1");
    let classes: Vec<&str> = steps.iter().map(|s| s["class"].as_str().unwrap()).collect();
    assert_eq!(classes[0], "healthy");
    // One server thread doing CPU work cannot serve 16 connections 16 times
    // as fast as one: some step past the first is past the knee. (Which one
    // depends on the noise of a shared machine: each step is judged against
    // the one before it.)
    assert!(classes[1..].iter().any(|c| *c != "healthy"), "{classes:?}");
    assert!(
        sweep["knee"]["connections"].as_u64().is_some(),
        "{}",
        sweep["knee"]
    );
    assert!(sweep["capacity"]["goodput"].as_f64().unwrap() > 0.0);
    assert!(sweep["verdict"].as_array().unwrap().len() >= 2);
    assert!(sweep.get("usl").is_some());
    let text = stdout(&output);
    assert!(text.contains("Knee"), "{text}");
    let page = std::fs::read_to_string(&html).expect("sweep HTML written");
    assert!(page.contains("<html") && page.contains("uPlot"));
}

#[test]
fn compare_prints_a_column_per_run_and_repeats_get_intervals() {
    let _machine = shared_machine();
    let dir = temp_dir("compare");
    let mut files = Vec::new();
    for threads in [1usize, 2] {
        let target = spawn_target(TargetConfig {
            threads,
            ..TargetConfig::default()
        });
        let url = format!("http://{}/", target.local_addr());
        let path = dir.join(format!("threads{threads}.json"));
        let output = stampede(&[
            &url,
            "-d",
            "700ms",
            "-c",
            "8",
            "-t",
            "1",
            "--repeat",
            "2",
            "--json",
            path.to_str().unwrap(),
            "-q",
        ]);
        stampede_testkit::assert_succeeded(&output);
        assert!(stdout(&output).contains("confidence interval"));
        files.push(path);
    }
    let repeat: serde_json::Value = stampede_testkit::read_json(&files[0]);
    assert_eq!(repeat["schema"], "stampede.repeat/1");
    assert_eq!(repeat["runs"].as_array().unwrap().len(), 2);
    let compare_html = dir.join("compare.html");
    let repeated = stampede(&[
        "compare",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--html",
        compare_html.to_str().unwrap(),
    ]);
    stampede_testkit::assert_succeeded(&repeated);
    assert!(stdout(&repeated).contains("Welch"), "{}", stdout(&repeated));
    let page = std::fs::read_to_string(&compare_html).expect("compare HTML written");
    assert!(page.contains("<html") && page.contains("uPlot"));
    // Single results: the side-by-side table.
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let mut singles = Vec::new();
    for name in ["a", "b", "c"] {
        let path = dir.join(format!("{name}.json"));
        let output = stampede(&[
            &url,
            "-n",
            "300",
            "-c",
            "2",
            "-t",
            "1",
            "--json",
            path.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(output.status.code(), Some(0));
        singles.push(path.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = std::iter::once("compare")
        .chain(singles.iter().map(|s| s.as_str()))
        .collect();
    let table = stampede(&args);
    let text = stdout(&table);
    stampede_testkit::assert_succeeded(&table);
    for row in ["goodput", "p99", "error"] {
        assert!(text.contains(row), "{row} row missing: {text}");
    }
    let not_a_result = dir.join("x.json");
    std::fs::write(&not_a_result, "{\"schema\":\"other\"}").unwrap();
    let refused = stampede(&[
        "compare",
        singles[0].as_str(),
        not_a_result.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
}

/// The stop rule, not the machine's steadiness, is under test: the bound is
/// wide (±100%) because rounds of 300 ms on a 2-core CI machine busy with the
/// other tests vary by 5× in rps (seen: 2,235 to 12,457 req/s).
#[test]
fn until_stable_stops_when_the_interval_is_narrow_enough() {
    let _machine = shared_machine();
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let path = temp_dir("stable").join("stable.json");
    let output = stampede(&[
        &url,
        "-c",
        "4",
        "-t",
        "1",
        "--until-stable",
        "rps:100%",
        "--round",
        "300ms",
        "-d",
        "3s",
        "--json",
        path.to_str().unwrap(),
        "-q",
    ]);
    stampede_testkit::assert_succeeded(&output);
    let document: serde_json::Value = stampede_testkit::read_json(&path);
    let rounds = document["rounds"].as_u64().unwrap();
    assert!((3..=10).contains(&rounds), "{rounds}");
    assert_eq!(document["stable"], true, "{}", stdout(&output));
}

/// A target no machine reaches: rps within ±0.001% of its mean. The rounds
/// go on past the minimum of three to the most that fit in -d (1.5 s of
/// 300 ms rounds: five), and the document and the text say it was not stable.
/// A stop rule that always stopped at the minimum would leave three rounds.
#[test]
fn until_stable_runs_every_round_that_fits_when_stability_is_out_of_reach() {
    let _machine = shared_machine();
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let path = temp_dir("unstable").join("unstable.json");
    let output = stampede(&[
        &url,
        "-c",
        "2",
        "-t",
        "1",
        "--until-stable",
        "rps:0.001%",
        "--round",
        "300ms",
        "-d",
        "1500ms",
        "--json",
        path.to_str().unwrap(),
        "-q",
    ]);
    stampede_testkit::assert_succeeded(&output);
    let document: serde_json::Value = stampede_testkit::read_json(&path);
    assert_eq!(document["rounds"], 5, "{document:#}");
    assert_eq!(document["stable"], false, "{document:#}");
    let text = stdout(&output);
    assert!(text.contains("NOT stable"), "{text}");
    assert!(text.contains("in 5 rounds"), "{text}");
}

/// The backlog test needs the machine to itself: it opens 2000
/// connections at once (each holds an ephemeral port that a server started
/// meanwhile on a `free_port()` could collide with). It takes it alone
/// (write); every other test of this file shares it (read).
static MACHINE: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn shared_machine() -> std::sync::RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(|e| e.into_inner())
}

fn machine_alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    MACHINE.write().unwrap_or_else(|e| e.into_inner())
}

/// `stampede experiment` with `--server TEMPLATE`, its JSON file parsed.
fn experiment(dir: &std::path::Path, flags: &[&str], load: &[&str]) -> (Output, serde_json::Value) {
    let json = dir.join("experiment.json");
    let mut args = vec!["experiment", "-q", "--json", json.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(load);
    let output = stampede(&args);
    stampede_testkit::assert_succeeded(&output);
    (output, stampede_testkit::read_json(&json))
}

/// The verdict on `metric` of the second variant against the first.
fn verdict<'a>(doc: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["metric"] == metric)
        .unwrap_or_else(|| panic!("no verdict on {metric}: {}", doc["verdicts"]))
}

fn serve_template(port: u16, rest: &str) -> String {
    format!("{} serve --port {port} {rest}", binary().display())
}

#[test]
fn experiment_two_threads_carry_what_one_cannot() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-threads");
    let port = free_port();
    // Each request holds its worker 20 ms (`/block`: a blocking call in the
    // handler), so one thread carries at most 50 req/s and two 100: the
    // difference is the threads'. At 5 ms (200 and 400 req/s) a host loaded
    // by other builds starved the debug client and server of CPU instead,
    // and one thread's rounds read 162, 79 and 122 req/s.
    let block_ms = 20.0;
    let url = format!("http://127.0.0.1:{port}/block/{block_ms}");
    let template = serve_template(port, "--threads {threads}");
    let (output, doc) = experiment(
        &dir,
        &[
            "--server",
            &template,
            "--vary",
            "threads=1,2",
            "--repeat",
            "3",
            "--settle",
            "0s",
        ],
        &["run", &url, "-c", "16", "-t", "1", "-d", "1s"],
    );
    assert_eq!(doc["schema"], "stampede.experiment/1");
    // Interleaved: A B A B A B (grouped: experiment_marks_a_server_that_fails…).
    assert_eq!(doc["order"], serde_json::json!([0, 1, 0, 1, 0, 1]));
    assert_eq!(doc["variants"][1]["values"]["threads"], "2");
    assert_eq!(doc["variants"][0]["runs"].as_array().unwrap().len(), 3);
    let rounds = |v: usize| -> Vec<f64> {
        doc["variants"][v]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["goodput"].as_f64().unwrap().round())
            .collect()
    };
    eprintln!(
        "goodput, threads=1: {:?}, threads=2: {:?}",
        rounds(0),
        rounds(1)
    );
    // The premise, checked: one thread carried no more than one thread can.
    for one in rounds(0) {
        assert!(one <= 1000.0 / block_ms * 1.05, "threads=1: {one} req/s");
    }
    let goodput = verdict(&doc, "goodput");
    assert_eq!(goodput["a"], "threads=1");
    assert_eq!(goodput["same"], false, "{goodput}");
    assert!(goodput["ci_low_pct"].as_f64().unwrap() > 0.0, "{goodput}");
    // The server's cost was read from /proc. Its CPU comes in clock ticks
    // (10 ms) and a server asleep 20 ms per request may use none in a
    // round; its context switches are exact (one sleep, at least one).
    let server = &doc["variants"][1]["server"];
    assert!(server["cpu_us_per_request"].as_f64().is_some(), "{server}");
    assert!(
        server["ctx_voluntary_per_request"].as_f64().unwrap() >= 0.5,
        "{server}"
    );
    let text = stdout(&output);
    assert!(
        text.contains("threads=2 against threads=1: goodput +"),
        "{text}"
    );
}

#[test]
fn experiment_reads_the_client_sockets_rtt_from_tcp_info() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-client-tcp");
    let port = free_port();
    // Each request holds a worker 2 ms: the run lasts long enough for the
    // watch's samples (every 200 ms) to see every connection open.
    let url = format!("http://127.0.0.1:{port}/block/2");
    let template = serve_template(port, "--threads {threads}");
    let (output, doc) = experiment(
        &dir,
        &[
            "--server",
            &template,
            "--vary",
            "threads=2",
            "--repeat",
            "1",
            "--settle",
            "0s",
        ],
        &["run", &url, "-c", "6", "-t", "1", "-d", "1s"],
    );
    let tcp = &doc["variants"][0]["server"]["client_tcp"];
    eprintln!("client_tcp: {tcp}");
    // Keep-alive: one socket per connection, all open at once.
    assert_eq!(tcp["sockets"].as_f64(), Some(6.0), "{tcp}");
    assert_eq!(tcp["sockets_seen"].as_f64(), Some(6.0), "{tcp}");
    let median = tcp["rtt_us_median"].as_f64().unwrap();
    let p99 = tcp["rtt_us_p99"].as_f64().unwrap();
    assert!(median > 0.0 && p99 >= median, "{tcp}");
    // Loopback drops nothing: no retransmit, and no cause named for it.
    assert_eq!(tcp["retransmits"].as_f64(), Some(0.0), "{tcp}");
    let causes = doc["variants"][0]["server"]["bottleneck"].to_string();
    assert!(
        !causes.contains("client's sockets retransmitted"),
        "{causes}"
    );
    // The text says it too, in milliseconds.
    let line = format!(
        "threads=2: client RTT median {:.2} ms, p99 {:.2} ms over 6 sockets, 0 retransmitted",
        median / 1000.0,
        p99 / 1000.0
    );
    assert!(stdout(&output).contains(&line), "{}", stdout(&output));
}

#[test]
fn experiment_names_server_threads_asleep_in_a_blocking_call() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-asleep");
    let port = free_port();
    // Each request holds its worker asleep 20 ms (`/block`: a blocking
    // call in the handler): both workers sleep nearly all the time, with
    // little CPU, whatever else the host runs.
    let url = format!("http://127.0.0.1:{port}/block/20");
    let template = serve_template(port, "--threads {threads}");
    let (output, doc) = experiment(
        &dir,
        &[
            "--server",
            &template,
            "--vary",
            "threads=2",
            "--repeat",
            "1",
            "--settle",
            "0s",
        ],
        &["run", &url, "-c", "8", "-t", "1", "-d", "2s"],
    );
    let server = &doc["variants"][0]["server"];
    let waits = &server["thread_waits"];
    eprintln!("thread_waits: {waits}");
    // The two workers worked (the main thread waits on them, and is not
    // counted) and slept in the handler's sleep.
    assert_eq!(waits["working_threads"].as_f64(), Some(2.0), "{waits}");
    assert_eq!(waits["asleep_threads"].as_f64(), Some(2.0), "{waits}");
    let wchan = waits["waits"][0]["wchan"].as_str().unwrap();
    assert!(wchan.contains("nanosleep"), "{waits}");
    let named = server["bottleneck"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["evidence"][0]["counter"] == "server threads asleep (state S/D, wchan)")
        .unwrap_or_else(|| panic!("not named: {}", server["bottleneck"]));
    assert_eq!(named["evidence"][0]["value"].as_f64(), Some(2.0));
    let cause = format!("2 of 2 working server threads asleep in {wchan} most of the time");
    assert!(
        named["cause"].as_str().unwrap().starts_with(&cause),
        "{named}"
    );
    assert!(stdout(&output).contains(&cause), "{}", stdout(&output));
}

#[test]
fn experiment_names_the_saturated_single_thread() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-saturated");
    let port = free_port();
    // CPU-bound requests, 16 at a time: the one worker always has work.
    let url = format!("http://127.0.0.1:{port}/cpu/200000");
    let template = serve_template(port, "--threads {threads}");
    let (output, doc) = experiment(
        &dir,
        &[
            "--server",
            &template,
            "--vary",
            "threads=1",
            "--repeat",
            "1",
            "--settle",
            "0s",
        ],
        &["run", &url, "-c", "16", "-t", "1", "-d", "1s"],
    );
    let server = &doc["variants"][0]["server"];
    let single = server["threads"][0]["cpu_pct"].as_f64().unwrap();
    let waiting = server["run_queue_wait_pct_of_wall"].as_f64().unwrap();
    eprintln!("the worker: on a CPU {single:.0}%, waiting for one {waiting:.0}%");
    // On a free host it runs ~100% of a core; on a busy one it runs less
    // and waits for a CPU the rest: either way it is named, with its figure.
    let named = server["bottleneck"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| {
            b["cause"]
                .as_str()
                .unwrap()
                .starts_with("one thread does all the work")
        })
        .unwrap_or_else(|| panic!("not named: {}", server["bottleneck"]));
    assert_eq!(named["evidence"][0]["counter"], "busiest thread cpu_pct");
    assert_eq!(named["evidence"][0]["value"].as_f64().unwrap(), single);
    assert!(
        stdout(&output).contains("threads=1: bottleneck: one thread does all the work"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn experiment_on_identical_variants_finds_no_difference() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-same");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    // The same server twice; only an unused environment variable differs.
    let template = format!("env SAME={{same}} {}", serve_template(port, "--threads 1"));
    let (output, doc) = experiment(
        &dir,
        &[
            "--server", &template, "--vary", "same=a,b", "--repeat", "3", "--settle", "0s",
        ],
        // A closed load: goodput varies from run to run as it does. (A fixed
        // rate pins it so tightly that a 0.002% shift of the schedule reads
        // as significant.)
        &["run", &url, "-c", "2", "-t", "1", "-d", "600ms"],
    );
    let goodput = verdict(&doc, "goodput");
    assert_eq!(goodput["same"], true, "{goodput}");
    assert_eq!(verdict(&doc, "error_rate")["same"], true);
    let text = stdout(&output);
    // `report` of the file prints what the experiment printed.
    let json = dir.join("experiment.json");
    let report = stampede(&["report", json.to_str().unwrap()]);
    stampede_testkit::assert_succeeded(&report);
    assert_eq!(stdout(&report), text);
    // `compare` of two experiments: each variant against the same variant.
    let again = dir.join("again.json");
    std::fs::copy(&json, &again).unwrap();
    let compared = stampede(&["compare", json.to_str().unwrap(), again.to_str().unwrap()]);
    stampede_testkit::assert_succeeded(&compared);
    let table = stdout(&compared);
    assert!(
        table.starts_with("variant same=a:\n") && table.contains("\nvariant same=b:\n"),
        "{table}"
    );
    assert!(table.contains("again"), "the second file's column: {table}");
    // Other variants: one line, exit 2.
    let renamed = dir.join("renamed.json");
    let mut other = doc.clone();
    other["variants"][1]["name"] = "same=c".into();
    std::fs::write(&renamed, other.to_string()).unwrap();
    let refused = stampede(&["compare", json.to_str().unwrap(), renamed.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("hold different variants (missing: same=b; not in the first: same=c)"),
        "{err}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("same=b against same=a: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("no difference")
            && !line.contains("goodput +")
            && !line.contains("goodput -"),
        "{line}"
    );
}

#[test]
fn experiment_access_log_costs_its_line_length_in_bytes_written() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-log");
    let port = free_port();
    let log = dir.join("access.log");
    let template = serve_template(port, "--threads 1 {log}");
    let vary = format!("log=,--access-log={}", log.display());
    let url = format!("http://127.0.0.1:{port}/");
    let page = dir.join("experiment.html");
    let (_, doc) = experiment(
        &dir,
        // The log is written out once a second: the counters are read after it.
        &[
            "--server",
            &template,
            "--vary",
            &vary,
            "--repeat",
            "2",
            "--settle",
            "1100ms",
            "--html",
            page.to_str().unwrap(),
        ],
        &["run", &url, "-c", "2", "-t", "1", "-d", "500ms"],
    );
    // The page draws both variants' bars and says the verdict.
    let html = std::fs::read_to_string(&page).expect("the --html page");
    assert!(html.contains("<html") && html.contains("uPlot"));
    let charts = chart_data(&html);
    let written = charts
        .iter()
        .find(|c| c["id"] == "experiment-written")
        .expect("the bytes-written bars");
    for (i, v) in doc["variants"].as_array().unwrap().iter().enumerate() {
        assert_eq!(written["chart"]["categories"][i], v["name"]);
        let bar = written["chart"]["series"][0]["values"][i].as_f64().unwrap();
        let kept = v["server"]["write_bytes_per_request"].as_f64().unwrap();
        assert!((bar - kept).abs() < 0.001, "bar {bar}, file {kept}");
    }
    let verdict_line = format!("log=--access-log={} against log=: ", log.display());
    assert!(html.contains(&verdict_line), "the verdict is on the page");
    let text = std::fs::read_to_string(&log).expect("the access log");
    let lines = text.lines().count();
    assert!(lines > 100, "{lines} lines");
    let mean_line = text.len() as f64 / lines as f64;
    let bytes = verdict(&doc, "write_bytes_per_request");
    let change = bytes["change"].as_f64().unwrap();
    assert!(
        (change - mean_line).abs() <= 0.05 * mean_line,
        "bytes written per request +{change:.1}, a log line {mean_line:.1} B"
    );
    // Without the log the server writes next to nothing (a wake-up's 8-byte
    // eventfd write now and then; a socket's send(2) is not a write call).
    let off = doc["variants"][0]["server"]["write_bytes_per_request"]
        .as_f64()
        .unwrap();
    assert!(off < 1.0, "{off} B per request without the log");
}

#[test]
fn experiment_refuses_a_template_and_varies_that_do_not_match() {
    let _machine = shared_machine();
    let url = "http://127.0.0.1:9/";
    for (template, vary, says) in [
        (
            "srv {threads} {log}",
            "threads=1,2",
            "has {log} but no --vary log=...",
        ),
        (
            "srv {threads}",
            "workers=1,2",
            "--vary workers: the server template has no {workers}",
        ),
    ] {
        let output = stampede(&[
            "experiment",
            "--server",
            template,
            "--vary",
            vary,
            "--",
            "run",
            url,
        ]);
        assert_eq!(output.status.code(), Some(2));
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn experiment_marks_a_server_that_fails_and_goes_on() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-fails");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    // `serve --threads 0` refuses to start: that variant fails, the other runs.
    let template = serve_template(port, "--threads {threads}");
    let (output, doc) = experiment(
        &dir,
        &[
            "--server",
            &template,
            "--vary",
            "threads=0,1",
            "--repeat",
            "2",
            "--settle",
            "0s",
            "--order",
            "grouped",
        ],
        &["run", &url, "-c", "2", "-t", "1", "-d", "300ms"],
    );
    // Grouped: A A B B, failed runs included.
    assert_eq!(doc["order"], serde_json::json!([0, 0, 1, 1]));
    assert_eq!(doc["order_kind"], "grouped");
    let failed = &doc["variants"][0];
    assert_eq!(failed["runs"].as_array().unwrap().len(), 0);
    let failure = &failed["failures"][0];
    assert!(
        failure["reason"]
            .as_str()
            .unwrap()
            .contains("exited before accepting"),
        "{failure}"
    );
    assert!(
        failure["stderr"]
            .to_string()
            .contains("threads must be 1..=1024"),
        "{failure}"
    );
    assert_eq!(
        doc["variants"][1]["runs"].as_array().unwrap().len(),
        2,
        "order {}, interrupted {}, failures {}, stderr {}",
        doc["order"],
        doc["interrupted"],
        doc["variants"][1]["failures"],
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout(&output).contains("threads=0 round 1: failed"));
}

#[test]
fn experiment_sweeps_each_variant_and_compares_capacity() {
    let _machine = shared_machine();
    let dir = temp_dir("experiment-sweep");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let template = serve_template(port, "--threads {threads}");
    let page = dir.join("experiment.html");
    let (output, doc) = experiment(
        &dir,
        &[
            "--server",
            &template,
            "--vary",
            "threads=1,2",
            "--repeat",
            "2",
            "--settle",
            "0s",
            "--html",
            page.to_str().unwrap(),
        ],
        &["sweep", &url, "-c", "1,8", "--step", "1s", "-t", "1"],
    );
    assert_eq!(doc["order"], serde_json::json!([0, 1, 0, 1]));
    assert_eq!(doc["common_load"], serde_json::json!({"connections": 8}));
    for v in doc["variants"].as_array().unwrap() {
        // Each round is a whole sweep, each step with the server's cost.
        let sweeps = v["sweeps"].as_array().unwrap();
        assert_eq!(sweeps.len(), 2, "{}", v["failures"]);
        for round in sweeps {
            assert!(round["analysis"]["capacity"]["goodput"].as_f64().unwrap() > 0.0);
            let loads: Vec<&serde_json::Value> = round["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| &s["load"]["connections"])
                .collect();
            assert_eq!(loads, [1, 8]);
            for step in round["steps"].as_array().unwrap() {
                let cpu = step["cost"]["cpu_us_per_request"].as_f64().unwrap();
                assert!(cpu > 0.0, "{step}");
            }
        }
        // The step summaries cover the ladder; `runs` is each round's step
        // at the common load.
        assert_eq!(v["steps"].as_array().unwrap().len(), 2);
        assert_eq!(v["runs"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["runs"][1]["goodput"],
            v["sweeps"][1]["steps"][1]["result"]["goodput"]
        );
        let capacity = v["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["metric"] == "capacity")
            .expect("a capacity estimate");
        assert_eq!(capacity["rounds"], 2);
    }
    let capacity = verdict(&doc, "capacity");
    assert_eq!(
        (capacity["a"].as_str(), capacity["b"].as_str()),
        (Some("threads=1"), Some("threads=2"))
    );
    assert!(capacity["ci_low_pct"].is_number() && capacity["same"].is_boolean());
    let text = stdout(&output);
    assert!(text.starts_with("variant "), "{text}");
    assert!(text.contains("capacity req/s (95% CI)"), "{text}");
    assert!(
        text.contains("threads=2: 8 connections: goodput "),
        "{text}"
    );
    assert!(
        text.contains("at the common load, 8 connections (the highest step every round reached):"),
        "{text}"
    );
    // Each variant's knee in words, or that there was none.
    for name in ["threads=1", "threads=2"] {
        assert!(
            text.contains(&format!("{name}: knee at "))
                || text.contains(&format!("{name}: no knee")),
            "{text}"
        );
    }
    // The page overlays each variant's goodput curve on the same axes, with
    // the figures of the file.
    let html = std::fs::read_to_string(&page).expect("the --html page");
    let charts = chart_data(&html);
    let throughput = charts
        .iter()
        .find(|c| c["id"] == "experiment-throughput")
        .expect("the throughput chart");
    assert_eq!(throughput["chart"]["xs"], serde_json::json!([1.0, 8.0]));
    for (i, v) in doc["variants"].as_array().unwrap().iter().enumerate() {
        let series = &throughput["chart"]["series"][i];
        assert_eq!(series["name"], v["name"]);
        let drawn: Vec<f64> = series["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let kept: Vec<f64> = v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["goodput"].as_f64().unwrap())
            .collect();
        assert!(
            drawn.iter().zip(&kept).all(|(a, b)| (a - b).abs() < 0.001),
            "{drawn:?} {kept:?}"
        );
    }
    let json = dir.join("experiment.json");
    let again = dir.join("again.html");
    let report = stampede(&[
        "report",
        json.to_str().unwrap(),
        "--html",
        again.to_str().unwrap(),
    ]);
    stampede_testkit::assert_succeeded(&report);
    assert_eq!(stdout(&report), text);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);
    // What the experiment does itself is refused in the sweep's words.
    let refused = stampede(&[
        "experiment",
        "--server",
        &template,
        "--vary",
        "threads=1",
        "--",
        "sweep",
        &url,
        "-c",
        "1",
        "--spawn",
        "x",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--spawn after --"));
}

/// The charts' data a stampede HTML page embeds.
fn chart_data(html: &str) -> Vec<serde_json::Value> {
    let data = html
        .split("<script type=\"application/json\" id=\"chart-data\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the charts' data");
    serde_json::from_str(data).expect("the charts' data is JSON")
}

/// TcpExt ListenOverflows as the kernel counts it (this network namespace).
fn listen_overflows() -> u64 {
    tcp_ext("ListenOverflows")
}

/// A TcpExt counter of /proc/net/netstat, by name.
fn tcp_ext(counter: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/net/netstat").expect("/proc/net/netstat");
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let names = lines.next().unwrap().split_whitespace();
    let values = lines.next().unwrap().split_whitespace();
    let (_, value) = names
        .zip(values)
        .find(|(name, _)| *name == counter)
        .unwrap_or_else(|| panic!("{counter}"));
    value.parse().unwrap()
}

#[test]
fn experiment_names_an_overflowing_accept_queue() {
    let _machine = machine_alone();
    let dir = temp_dir("experiment-backlog");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let template = serve_template(port, "--threads 1 --backlog {backlog}");
    let before = listen_overflows();
    let syn_before = tcp_ext("TCPSynRetrans");
    let (output, doc) = experiment(
        &dir,
        &[
            "--server",
            &template,
            "--vary",
            "backlog=8",
            "--repeat",
            "1",
            "--settle",
            "0s",
        ],
        &[
            "run",
            &url,
            "-c",
            "2000",
            "-t",
            "1",
            "--no-keepalive",
            "-d",
            "1s",
        ],
    );
    let kernel = listen_overflows() - before;
    let bottleneck = &doc["variants"][0]["server"]["bottleneck"][0];
    assert_eq!(
        bottleneck["evidence"][0]["counter"],
        "TcpExt.ListenOverflows"
    );
    let cited = bottleneck["evidence"][0]["value"].as_f64().unwrap() as u64;
    // The kernel's count is the machine's: another process may add to it.
    assert!(
        cited > 0 && cited <= kernel,
        "cited {cited}, the kernel counted {kernel}"
    );
    // SYNs dropped by the full queue are retransmitted: the count cited is
    // the kernel's (the machine's: others may add to it), with its cause.
    let syn_kernel = tcp_ext("TCPSynRetrans") - syn_before;
    let server = &doc["variants"][0]["server"];
    let syns = server["syn_retransmits"].as_f64().unwrap() as u64;
    assert!(
        syns <= syn_kernel,
        "cited {syns}, the kernel counted {syn_kernel}"
    );
    let causes = server["bottleneck"].to_string();
    if syns > 0 {
        assert!(causes.contains("TcpExt.TCPSynRetrans"), "{causes}");
        assert!(
            causes.contains(&format!("{syns} SYNs retransmitted")),
            "{causes}"
        );
    } else {
        assert!(!causes.contains("TCPSynRetrans"), "{causes}");
    }
    assert!(server["run_queue_wait_pct"].as_f64().unwrap() >= 0.0);
    assert!(server["softirq_cpu_pct"].as_f64().unwrap() >= 0.0);
    let line = format!("backlog=8: bottleneck: the accept queue overflowed {cited} times");
    assert!(stdout(&output).contains(&line), "{}", stdout(&output));
}
