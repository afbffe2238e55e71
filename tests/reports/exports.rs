//! The exports of a run, parsed back: ab's -e CSV, the per-second CSV,
//! ab's -g gnuplot TSV (with sampling), the per-request log (one line per
//! finished request on every protocol and event loop), and `stampede
//! report` re-rendering a saved result.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, one_thread, run_on_loop, run_stampede, spawn_target, temp_dir, Run, TargetConfig,
    EVENT_LOOPS,
};
use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn csv_exports_parse_back_and_agree_with_the_result() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("csv");
    let (csv, series) = (dir.join("p.csv"), dir.join("ts.csv"));
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "3000",
            "-c",
            "4",
            "-t",
            "1",
            "--csv",
            csv.to_str().unwrap(),
            "--csv-timeseries",
            series.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let text = read(&csv);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Percentage served,Time in ms"));
    let rows: Vec<(u32, f64)> = lines
        .map(|line| {
            let (percent, ms) = line.split_once(',').expect("two columns");
            (percent.parse().unwrap(), ms.parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 101, "0 through 100");
    assert!(rows.iter().enumerate().all(|(i, (p, _))| *p == i as u32));
    assert!(
        rows.windows(2).all(|w| w[0].1 <= w[1].1),
        "times never fall"
    );
    let max_ms = run.count("/latency_us/max") as f64 / 1000.0;
    assert!((rows[100].1 - max_ms).abs() < 0.002, "100% is the max");
    let p50_ms = run.count("/latency_us/p50") as f64 / 1000.0;
    assert!((rows[50].1 - p50_ms).abs() < 0.002, "50% is the p50");

    let text = read(&series);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "second");
    let completed_col = header.iter().position(|h| *h == "completed").unwrap();
    let completed: u64 = lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), header.len());
            cells[completed_col].parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(completed, 3000, "every response is in some second");
}

#[test]
fn gnuplot_and_request_log_hold_every_request_or_count_it() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("per-request");
    let (gnuplot, log) = (dir.join("g.tsv"), dir.join("requests.log"));
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "2000",
            "-c",
            "4",
            "-t",
            "2",
            "--gnuplot",
            gnuplot.to_str().unwrap(),
            "--gnuplot-sample",
            "10",
            "--log-requests",
            log.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let written = run.count("/request_log/written");
    let dropped = run.count("/request_log/dropped");
    assert_eq!(written + dropped, 2000, "each request written or counted");
    // 2,000 lines fit the writer's buffers (16 batches of 512 per worker,
    // request_log.rs) before it writes one: nothing here can be dropped, so
    // every request sent is a line.
    assert_eq!(dropped, 0, "{}", run.result());
    assert_eq!(written, run.count("/requests/sent"));

    let text = read(&log);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("# t_s status latency_us bytes error target vu check")
    );
    let mut logged = 0u64;
    let mut bytes = 0u64;
    let elapsed = run.result()["elapsed_s"].as_f64().unwrap();
    for line in lines {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 8, "{line}");
        let t: f64 = fields[0].parse().unwrap();
        assert!((0.0..=elapsed).contains(&t), "{line}: within the run");
        assert_eq!(fields[1], "200");
        let latency: u64 = fields[2].parse().unwrap();
        assert!(latency > 0 && latency < 10_000_000);
        assert!(
            fields[3].parse::<u64>().unwrap() > 500,
            "a 515-byte page and its head"
        );
        bytes += fields[3].parse::<u64>().unwrap();
        assert_eq!(fields[4], "-");
        assert_eq!(fields[5], url);
        assert!(
            fields[6].parse::<u64>().unwrap() < 4,
            "one of the 4 connections"
        );
        assert_eq!(fields[7], "-", "nothing was checked");
        logged += 1;
    }
    assert_eq!(logged, written);
    assert_eq!(logged, 2000, "one line for each request sent");
    assert_eq!(
        bytes,
        run.count("/bytes/received"),
        "each line its own bytes"
    );
    assert_eq!(
        target.stats().requests_total,
        logged,
        "as the server counted"
    );

    let text = read(&gnuplot);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("starttime\tseconds\tctime\tdtime\tttime\twait")
    );
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    // Every 10th of what the writer saw, per writer.
    assert_eq!(rows.len() as u64, written.div_ceil(10));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for row in &rows {
        assert_eq!(row.len(), 6);
        assert_eq!(row[0].split(' ').count(), 5, "ctime layout: {}", row[0]);
        let seconds: u64 = row[1].parse().unwrap();
        assert!(seconds <= now && seconds + 120 > now);
        let [ctime, dtime, ttime, wait]: [u64; 4] =
            std::array::from_fn(|i| row[i + 2].parse().unwrap());
        // Each column is rounded on its own, as ab does: off by one at most.
        assert!(
            (ctime + dtime).abs_diff(ttime) <= 1,
            "dtime = ttime - ctime: {row:?}"
        );
        assert!(wait <= ttime + 1);
    }
}

#[test]
fn gnuplot_alone_is_sampled_by_the_engine() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("gnuplot");
    let gnuplot = dir.join("g.tsv");
    let url = format!("http://{}/", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "1000",
            "-c",
            "2",
            "-t",
            "1",
            "--gnuplot",
            gnuplot.to_str().unwrap(),
            "--gnuplot-sample",
            "100",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/request_log/sample_every"), 100);
    let rows = read(&gnuplot).lines().count() - 1;
    assert_eq!(rows, 10, "every 100th of 1000");
}

#[test]
fn report_rerenders_a_saved_result() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("report");
    let json = dir.join("r.json");
    let url = format!("http://{}/", target.local_addr());
    let output = std::process::Command::new(binary())
        .args([&url, "-n", "500", "-c", "2", "-t", "1", "-q", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(output.status.success());
    let (html, csv) = (dir.join("r.html"), dir.join("r.csv"));
    let output = std::process::Command::new(binary())
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    stampede_testkit::assert_succeeded(&output);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Requests/sec"), "the text summary: {text}");
    assert_eq!(read(&csv).lines().count(), 102);
    let page = read(&html);
    assert!(page.starts_with("<!doctype html>"));
    assert!(
        !page.contains("<script src") && !page.contains("<link"),
        "no external scripts or styles: the page works offline"
    );
    assert!(page.contains("data-chart=\"spectrum\""));

    let output = std::process::Command::new(binary())
        .arg("report")
        .arg(dir.join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_mix_logs_each_request_under_its_own_target_and_tables_them_in_html() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("mix");
    let base = format!("http://{}", target.local_addr());
    let targets = dir.join("targets.txt");
    std::fs::write(
        &targets,
        format!("GET {base}/\nweight=3\n\nGET {base}/1k.html\n"),
    )
    .unwrap();
    let (log, html) = (dir.join("requests.log"), dir.join("mix.html"));
    let run = run_stampede(
        binary(),
        &[
            "--targets",
            targets.to_str().unwrap(),
            "-n",
            "800",
            "-c",
            "4",
            "-t",
            "1",
            "--log-requests",
            log.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let text = read(&log);
    let mut per_target = std::collections::BTreeMap::<String, (u64, u64)>::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split(' ').collect();
        let bytes: u64 = fields[3].parse().unwrap();
        let entry = per_target.entry(fields[5].to_string()).or_default();
        entry.0 += 1;
        entry.1 = entry.1.max(bytes);
    }
    let root = &per_target[&format!("{base}/")];
    let page = &per_target[&format!("{base}/1k.html")];
    assert_eq!(root.0 + page.0, 800);
    assert!(
        page.1 > root.1,
        "the 1 KiB page's lines carry its bigger size"
    );
    let report = read(&html);
    assert!(report.contains("<h2>Targets</h2>"), "the per-target table");
    assert!(report.contains(&format!("GET {base}/1k.html")));
}

/// The lines of a `--log-requests` file after its header, split into
/// their columns; there must be one for each request the run finished
/// (`requests.completed + requests.errors`: complete responses and errors
/// alike, docs/result-schema.md), and none dropped. `code`: the run's exit
/// code (2 when no connection could be opened).
fn one_line_per_finished_request(run: &Run, code: i32, log: &Path, leg: &str) -> Vec<Vec<String>> {
    assert_eq!(run.code(), Some(code), "{leg}: {}", run.stderr());
    let finished = run.count("/requests/completed") + run.count("/requests/errors");
    assert!(finished > 0, "{leg}: {}", run.result());
    assert_eq!(run.count("/request_log/dropped"), 0, "{leg}");
    let text = read(log);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("# t_s status latency_us bytes error target vu check"),
        "{leg}"
    );
    let lines: Vec<Vec<String>> = lines
        .map(|line| line.split(' ').map(str::to_string).collect())
        .collect();
    assert_eq!(lines.len() as u64, finished, "{leg}: a line per request");
    assert_eq!(run.count("/request_log/written"), finished, "{leg}");
    lines
}

/// A complete 200 as the log shows it: every column filled.
fn assert_answered(line: &[String], url: &str, users: u64, leg: &str) {
    assert_eq!(line.len(), 8, "{leg}: {line:?}");
    assert!(line[0].parse::<f64>().unwrap() >= 0.0, "{leg}: {line:?}");
    assert_eq!(line[1], "200", "{leg}: {line:?}");
    assert!(line[2].parse::<u64>().unwrap() > 0, "{leg}: {line:?}");
    assert!(line[3].parse::<u64>().unwrap() > 0, "{leg}: {line:?}");
    assert_eq!(line[4], "-", "{leg}: {line:?}");
    assert_eq!(line[5], url, "{leg}: {line:?}");
    assert!(line[6].parse::<u64>().unwrap() < users, "{leg}: {line:?}");
    assert_eq!(line[7], "-", "{leg}: {line:?}");
}

#[test]
fn the_request_log_has_a_line_per_finished_request_on_every_http1_loop() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("log-loops");
    let url = format!("http://{}/", target.local_addr());
    for io in EVENT_LOOPS {
        let log = dir.join(format!("{io}.log"));
        let args = [
            url.as_str(),
            "-n",
            "200",
            "-c",
            "4",
            "-t",
            "2",
            "--log-requests",
            log.to_str().unwrap(),
        ];
        let Some(run) = run_on_loop(io, &args) else {
            continue;
        };
        assert_eq!(run.result()["plan"]["io"], io);
        let lines = one_line_per_finished_request(&run, 0, &log, io);
        assert_eq!(lines.len(), 200, "--io {io}");
        for line in &lines {
            assert_answered(line, &url, 4, io);
        }
    }
}

#[test]
fn the_request_log_has_a_line_per_finished_request_over_http2() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("log-h2");
    let url = format!("http://{}/", target.local_addr());
    // Fixed requests: h2c with prior knowledge on the plain port, 2
    // connections of 3 streams (6 virtual users); ab's gnuplot rows too,
    // one per complete response.
    let (log, gnuplot) = (dir.join("fixed.log"), dir.join("fixed.tsv"));
    let args = [
        url.as_str(),
        "--http2",
        // CI runs this file again with STAMPEDE_IO=epoll; HTTP/2 is tokio's.
        "--io",
        "auto",
        "-n",
        "200",
        "-c",
        "2",
        "--streams",
        "3",
        "-t",
        "2",
        "--log-requests",
        log.to_str().unwrap(),
        "--gnuplot",
        gnuplot.to_str().unwrap(),
    ];
    let run = run_stampede(binary(), &args);
    let lines = one_line_per_finished_request(&run, 0, &log, "h2 fixed");
    assert_eq!(lines.len(), 200);
    for line in &lines {
        assert_answered(line, &url, 6, "h2 fixed");
    }
    assert_eq!(
        read(&gnuplot).lines().count(),
        1 + 200,
        "a header and 200 rows"
    );

    // The open model (-r) for a duration: whatever is still in flight at
    // the end is unfinished and has no line; every other request has one.
    let log = dir.join("open.log");
    let args = [
        url.as_str(),
        "--http2",
        "--io",
        "auto",
        "-r",
        "400",
        "-d",
        "1s",
        "-c",
        "2",
        "--streams",
        "3",
        "-t",
        "2",
        "--log-requests",
        log.to_str().unwrap(),
    ];
    let run = run_stampede(binary(), &args);
    let lines = one_line_per_finished_request(&run, 0, &log, "h2 open");
    // Every request sent has its line but those still in flight at the
    // end (at most one per stream: 2 threads x 1 connection x 3 streams).
    let unfinished = run.count("/requests/unfinished");
    assert!(unfinished <= 6, "h2 open: {}", run.result()["requests"]);
    assert_eq!(
        lines.len() as u64 + unfinished,
        run.count("/requests/sent"),
        "h2 open: {}",
        run.result()["requests"]
    );
    for line in &lines {
        assert_answered(line, &url, 6, "h2 open");
    }

    // A workload (a template, judged by a check): each stream a user.
    let log = dir.join("workload.log");
    let templated = format!("{url}?id={{{{seq}}}}");
    let args = [
        templated.as_str(),
        "--http2",
        "--io",
        "auto",
        "-n",
        "120",
        "-c",
        "2",
        "--streams",
        "2",
        "-t",
        "2",
        "--check",
        "status == 200",
        "--log-requests",
        log.to_str().unwrap(),
    ];
    let run = run_stampede(binary(), &args);
    let lines = one_line_per_finished_request(&run, 0, &log, "h2 workload");
    assert_eq!(lines.len(), 120);
    for line in &lines {
        assert_answered(line, &templated, 4, "h2 workload");
    }

    // A dead port: every request is a failed connect, and a line (the run
    // exits 2: no connection could be opened).
    let dead = format!("http://127.0.0.1:{}/", stampede_testkit::free_port());
    let log = dir.join("dead.log");
    let args = [
        dead.as_str(),
        "--http2",
        "--io",
        "auto",
        "-n",
        "3",
        "-c",
        "1",
        "-t",
        "1",
        "--log-requests",
        log.to_str().unwrap(),
    ];
    let run = run_stampede(binary(), &args);
    let lines = one_line_per_finished_request(&run, 2, &log, "h2 refused");
    assert_eq!(lines.len(), 3);
    assert!(
        lines.iter().all(|line| line[4] == "connect_refused"),
        "{lines:?}"
    );
}

#[test]
fn the_request_log_has_a_line_per_finished_request_over_http3() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        http3: true,
        ..TargetConfig::default()
    });
    let dir = temp_dir("log-h3");
    let url = format!("https://127.0.0.1:{}/", target.local_addr().port());
    for (model, extra) in [("closed", &[][..]), ("open", &["-r", "400"][..])] {
        let log = dir.join(format!("{model}.log"));
        let mut args = vec![
            url.as_str(),
            "--http3",
            // As over HTTP/2: not the epoll default of CI's second pass.
            "--io",
            "auto",
            "--insecure",
            "-n",
            "200",
            "-c",
            "2",
            "--streams",
            "2",
            "-t",
            "2",
            "--log-requests",
            log.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let run = run_stampede(binary(), &args);
        let leg = format!("h3 {model}");
        let lines = one_line_per_finished_request(&run, 0, &log, &leg);
        assert_eq!(lines.len(), 200, "{leg}");
        for line in &lines {
            assert_answered(line, &url, 4, &leg);
        }
    }
}
