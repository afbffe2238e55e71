//! `stampede sweep` end to end : a step never reports more
//! goodput than it offered, even when its warm-up left a backlog, nor much
//! less where the server keeps up; the knee is found at the step where a
//! server's fixed concurrency limit stops the scaling; and the text table's
//! columns line up whatever the width of the numbers.

use stampede_testkit::{
    binary, free_port, read_request_head, run_stampede, spawn_target, RawServer, TargetConfig,
};
use std::io::Write;
use std::time::{Duration, Instant};

/// Share by which a step's goodput may exceed its offered rate: the window
/// is measured a hair longer or shorter than `--step`, never by more.
const TOLERANCE: f64 = 0.02;

/// Every step of a sweep file: (offered rate, goodput, efficiency against
/// the offered rate).
fn rate_steps(sweep: &serde_json::Value) -> Vec<(f64, f64)> {
    sweep["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["rate"].as_f64().expect("a rate step"),
                s["goodput"].as_f64().expect("goodput"),
            )
        })
        .collect()
}

fn assert_within_offered(sweep: &serde_json::Value) {
    let steps = rate_steps(sweep);
    assert!(!steps.is_empty());
    for (rate, goodput) in steps {
        assert!(
            goodput <= rate * (1.0 + TOLERANCE),
            "goodput {goodput:.1} req/s exceeds the offered {rate} req/s: {sweep:#}"
        );
    }
    for step in sweep["steps"].as_array().expect("steps") {
        let requests = &step["result"]["requests"];
        let window = step["result"]["elapsed_s"].as_f64().expect("elapsed_s");
        let rate = step["rate"].as_f64().expect("rate");
        // The window's intended instants are rate × window; nothing more may
        // be counted as sent in it.
        let sent = requests["sent"].as_f64().expect("sent");
        let count = |key: &str| requests[key].as_f64().expect(key);
        assert_eq!(
            sent,
            count("success") + count("failed_status") + count("errors") + count("unfinished"),
            "every request of the window balances: {requests}"
        );
        assert!(
            sent <= rate * window * (1.0 + TOLERANCE) + 2.0,
            "{sent} sent in a {window} s window at {rate} req/s"
        );
        let efficiency = step["throughput_change_pct"]
            .as_f64()
            .zip(step["load_change_pct"].as_f64())
            .map(|(dx, dl)| dx / dl);
        if let Some(e) = efficiency {
            assert!(e <= 1.0 + 0.1, "efficiency {e:.2} > 1: {step:#}");
        }
    }
}

/// The floor under every step: goodput at least `share` of the offered
/// rate, and the window's sent requests at least that share of its intended
/// instants. Without it a sweep that delivered nothing would pass the
/// ceilings above.
fn assert_delivers_at_least(sweep: &serde_json::Value, share: f64) {
    for step in sweep["steps"].as_array().expect("steps") {
        let rate = step["rate"].as_f64().expect("rate");
        let goodput = step["goodput"].as_f64().expect("goodput");
        assert!(
            goodput >= rate * share,
            "goodput {goodput:.1} req/s is under {share} of the offered {rate} req/s: {step:#}"
        );
        let window = step["result"]["elapsed_s"].as_f64().expect("elapsed_s");
        let sent = step["result"]["requests"]["sent"].as_f64().expect("sent");
        assert!(
            sent >= rate * window * share,
            "{sent} sent in a {window} s window at {rate} req/s"
        );
    }
}

/// What a sweep file may claim: a ceiling only on two plateau steps, a
/// stable range of healthy steps only, no "add connections" at a step whose
/// server was saturated.
fn assert_claims_have_evidence(sweep: &serde_json::Value) {
    let steps = sweep["steps"].as_array().expect("steps");
    if !sweep["ceiling"].is_null() {
        assert!(sweep["ceiling_range"]["steps"].as_u64().expect("range") >= 2);
        assert!(sweep["ceiling_at_least"].is_null());
    }
    if let Some(to) = sweep["stable_range"]["to"]["rate"].as_f64() {
        for step in steps.iter().take_while(|s| s["rate"].as_f64() <= Some(to)) {
            assert_eq!(step["class"], "healthy", "{step:#}");
        }
    }
    for step in steps {
        let note = step["little"]["note"].as_str().unwrap_or("");
        if !step["server_saturation"].is_null() {
            assert!(!note.contains("add connections"), "{step:#}");
        }
    }
}

/// The brief's bounded sweep against the built-in target.
#[test]
fn sweep_goodput_never_exceeds_the_offered_rate() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            "sweep",
            &url,
            "-r",
            "500:1500:500",
            "--step",
            "1s",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sweep = run.result();
    assert_eq!(sweep["schema"], "stampede.sweep/1");
    assert_eq!(rate_steps(sweep).len(), 3);
    assert_within_offered(sweep);
    // "/" is a 515-byte page: one target thread serves 1,500 req/s with room
    // to spare (tens of thousands on this machine), so every step delivers
    // near its rate; half of it allows a machine busy with other tests.
    assert_delivers_at_least(sweep, 0.5);
    assert_claims_have_evidence(sweep);
    assert_table_aligned(&run.stdout());
}

/// The steps table of the text output: every row's cells end where the
/// header's labels end ("500 req/s" and "1,500 req/s" alike).
fn assert_table_aligned(stdout: &str) {
    let lines: Vec<Vec<char>> = stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| l.chars().collect())
        .collect();
    assert!(lines.len() >= 2, "no table in {stdout}");
    let header: String = lines[0].iter().collect();
    let mut ends = Vec::new();
    let mut from = 0;
    for label in [
        "load",
        "goodput/s",
        "rps",
        "p50",
        "p99",
        "errors",
        "class: rule",
    ] {
        let at = header[from..].find(label).expect("a header label") + from;
        let start = header[..at].chars().count();
        ends.push((start, start + label.chars().count()));
        from = at + label.len();
    }
    let (rule_start, _) = ends.pop().expect("the rule column");
    for line in &lines[1..] {
        let text: String = line.iter().collect();
        for &(_, end) in &ends {
            assert!(
                line[end - 1] != ' ' && line[end] == ' ',
                "a cell does not end at column {end}:\n{header}\n{text}"
            );
        }
        assert!(
            line[rule_start - 1] == ' ' && line[rule_start] != ' ',
            "{text}"
        );
    }
}

/// A server whose every connection stalls for its first 1.3 s, i.e. through
/// each step's 1 s warm-up: the warm-up's intended instants pile up behind
/// busy connections and are only sent, and answered, in the measured window.
fn stalling_server() -> RawServer {
    RawServer::start(|mut stream| {
        let accepted = Instant::now();
        let response = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        while read_request_head(&mut stream) {
            let stall_until = accepted + Duration::from_millis(1300);
            let now = Instant::now();
            if now < stall_until {
                std::thread::sleep(stall_until - now);
            }
            if stream.write_all(response).is_err() {
                return;
            }
        }
    })
}

/// The cause of "the 60,000 req/s step shows 62,617": requests intended
/// during the warm-up (a backlog behind busy connections, and those in flight
/// at its end) were counted as sent and completed in the step's window. A
/// window counts the requests intended in it, so a step's goodput cannot
/// exceed its offered rate.
#[test]
fn a_warmup_backlog_does_not_inflate_a_step() {
    let server = stalling_server();
    let url = server.url("/");
    let run = run_stampede(
        binary(),
        &[
            "sweep",
            &url,
            "-r",
            "400,800",
            "--step",
            "1s",
            "--warmup",
            "1s",
            "--max-connections",
            "40",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_within_offered(run.result());
    // Past their stall the 40 connections keep up (each step delivered 99%
    // of its rate here): half allows a busy machine, not a step that
    // delivered nothing.
    assert_delivers_at_least(run.result(), 0.5);
    assert_claims_have_evidence(run.result());
}

/// One server thread doing CPU work, offered far more than it can serve
/// through four connections (2000 req/s: four connections carry that only if
/// a request takes under 2 ms; this route took 4 ms on the CI machine, where
/// 200 req/s left the server idle a fifth of the time). Rate × latency
/// exceeds the connections, but the server is saturated (each request waits
/// for the three others at its one thread, so its response time is about
/// four times the first step's, however much CPU the shared machine lets it
/// have), so "add connections" would be wrong advice.
#[test]
fn a_saturated_server_is_not_told_to_get_more_connections() {
    let port = free_port();
    let spawn = format!("{} serve --port {port} --threads 1", binary().display());
    let url = format!("http://127.0.0.1:{port}/cpu/300000");
    let run = run_stampede(
        binary(),
        &[
            "sweep",
            &url,
            "-r",
            "5,2000",
            "--step",
            "2s",
            "--warmup",
            "500ms",
            "--max-connections",
            "4",
            "-t",
            "1",
            "--spawn",
            &spawn,
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sweep = run.result();
    let busy = &sweep["steps"][1];
    assert!(
        busy["server_saturation"].as_str().is_some(),
        "the CPU-bound server at 2000 req/s: {busy:#}"
    );
    assert!(busy["server_cpu"]["used_pct"].as_f64().is_some());
    assert_claims_have_evidence(sweep);
    assert!(
        !run.stdout().contains("add connections"),
        "{}",
        run.stdout()
    );
}

/// Requests served at once by [`limited_server`]; more wait for a slot.
const SLOTS: usize = 4;

/// How long a request holds its slot: at most SLOTS / SERVICE = 160 req/s.
const SERVICE: Duration = Duration::from_millis(25);

/// A server that serves at most [`SLOTS`] requests at a time, each for
/// [`SERVICE`]: throughput grows with connections up to SLOTS and is flat
/// beyond, so the knee of a doubling ladder is known by construction.
fn limited_server() -> RawServer {
    let busy = std::sync::Arc::new((std::sync::Mutex::new(0usize), std::sync::Condvar::new()));
    RawServer::start(move |mut stream| {
        let response = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let (count, freed) = &*busy;
        while read_request_head(&mut stream) {
            {
                let mut taken = count.lock().expect("slot count");
                while *taken >= SLOTS {
                    taken = freed.wait(taken).expect("slot count");
                }
                *taken += 1;
            }
            std::thread::sleep(SERVICE);
            *count.lock().expect("slot count") -= 1;
            freed.notify_one();
            if stream.write_all(response).is_err() {
                return;
            }
        }
    })
}

/// Connections 1, 2, 4 each double the throughput (40, 80, 160 req/s); 8
/// and 16 add nothing but waiting. The knee is the first step whose added
/// load bought under half of linear scaling: 8 connections, not before (each
/// step up to 4 doubles throughput, far above the 0.5 efficiency line, even
/// on a busy machine: the server sleeps, it does not compute) and not later.
#[test]
fn the_knee_is_where_a_fixed_concurrency_limit_stops_the_scaling() {
    let server = limited_server();
    let run = run_stampede(
        binary(),
        &[
            "sweep",
            &server.url("/"),
            "-c",
            "1,2,4,8,16",
            "--step",
            "1s",
            "--warmup",
            "300ms",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sweep = run.result();
    assert_eq!(sweep["knee"]["connections"], 8, "{sweep:#}");
    let classes: Vec<&str> = sweep["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["class"].as_str().expect("class"))
        .collect();
    assert_eq!(&classes[..3], ["healthy"; 3], "{sweep:#}");
    // The plateau is the limit's throughput: SLOTS / SERVICE = 160 req/s
    // (less what a busy machine's late wake-ups cost).
    let ceiling = SLOTS as f64 / SERVICE.as_secs_f64();
    let knee_goodput = sweep["knee"]["goodput"].as_f64().expect("knee goodput");
    assert!(
        (ceiling * 0.6..=ceiling * 1.05).contains(&knee_goodput),
        "{knee_goodput} req/s at the knee, limit {ceiling}: {sweep:#}"
    );
    assert_claims_have_evidence(sweep);
}
