//! `--hlog`: the HdrHistogram interval log of a real run against the
//! built-in target. Its intervals add up to the run's whole histogram
//! bucket for bucket, for a run, each sweep step, each experiment round
//! and the jmeter front-end; `stampede report` reads it back (a time range,
//! a tag, faults by line, a file cut mid-line, windows and logs it refuses);
//! `stampede merge` merges logs per interval exactly and refuses logs of
//! different intervals or one file twice; and an independent reader, the `hdrhistogram`
//! package from PyPI (HdrHistogram_py, the format's Python implementation),
//! decodes every interval to the same counts and percentiles. The result
//! JSON's per-second histograms add up to the run too, merge exactly when
//! one run's seconds are dealt to three files, and give `compare
//! --from/--to` its window (service time too); a server that stalls
//! shows as a band in the report's heatmap cells and, drawn by headless
//! Chromium, in its pixels.

use stampede_metrics::{decode_histogram, read_hlog, HlogFile, LatencyHistogram};
use stampede_testkit::{assert_succeeded, read_json, skip_or_fail, spawn_target, stampede, text};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The version .ci/run installs: the one this test was written against.
const HDRHISTOGRAM_PY: &str = "hdrhistogram==0.10.8";

/// (value, count) of every bucket that holds a count.
fn buckets(histogram: &LatencyHistogram) -> Vec<(u64, u64)> {
    histogram
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

fn sum_of(file: &HlogFile, tag: &str) -> LatencyHistogram {
    let mut total = stampede_metrics::new_latency_histogram();
    for interval in file.intervals.iter().filter(|i| i.tag == tag) {
        total.add(&interval.histogram).unwrap();
    }
    total
}

/// A 2-second run, 2 workers, 100 ms intervals: the log and the result.
fn run_with_hlog(dir: &Path, interval: &str) -> (PathBuf, serde_json::Value) {
    let target = spawn_target(stampede_testkit::one_thread());
    let url = format!("http://{}/", target.local_addr());
    let hlog = dir.join("run.hlog");
    let json = dir.join("run.json");
    let output = stampede(&[
        "run",
        &url,
        "-c",
        "4",
        "-t",
        "2",
        "-d",
        "2s",
        "-q",
        "--hlog",
        hlog.to_str().unwrap(),
        "--hlog-interval",
        interval,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    (hlog, read_json(&json))
}

#[test]
fn intervals_sum_to_the_whole_run_bucket_for_bucket() {
    let dir = stampede_testkit::temp_dir("hlog-sum");
    let (hlog, result) = run_with_hlog(&dir, "100ms");
    let file = read_hlog(&std::fs::read(&hlog).unwrap()).unwrap();
    assert_eq!(file.tags(), ["latency", "service", "ttfb", "connect"]);
    let latency: Vec<_> = file
        .intervals
        .iter()
        .filter(|i| i.tag == "latency")
        .collect();
    assert!(
        latency.len() >= 19,
        "2 s in 100 ms intervals: {}",
        latency.len()
    );
    for (n, interval) in latency.iter().enumerate() {
        let start_ms = interval.start.as_millis();
        assert_eq!(start_ms, 100 * n as u128, "intervals follow each other");
        if n + 1 < latency.len() {
            assert_eq!(interval.length.as_millis(), 100);
        }
    }
    let whole = decode_histogram(result["histogram"].as_str().unwrap()).unwrap();
    let summed = sum_of(&file, "latency");
    assert!(
        summed.len() > 1000,
        "the run measured {} responses",
        summed.len()
    );
    assert_eq!(
        summed.len(),
        result["requests"]["completed"].as_u64().unwrap()
    );
    assert_eq!(buckets(&summed), buckets(&whole));
    let service = decode_histogram(result["service_histogram"].as_str().unwrap()).unwrap();
    assert_eq!(buckets(&sum_of(&file, "service")), buckets(&service));
    let text = std::fs::read_to_string(&hlog).unwrap();
    assert!(text.contains("\n#[Histogram log format version 1.3]\n"));
    assert!(text.contains("\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"));
}

#[test]
fn report_reads_a_range_and_names_the_line_of_a_fault() {
    let dir = stampede_testkit::temp_dir("hlog-report");
    let (hlog, result) = run_with_hlog(&dir, "250ms");
    let path = hlog.to_str().unwrap();
    let output = stampede(&["report", path, "-o", "json"]);
    assert_succeeded(&output);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let completed = result["requests"]["completed"].as_u64().unwrap();
    assert_eq!(report["tags"]["latency"]["count"].as_u64(), Some(completed));
    assert_eq!(
        report["tags"]["latency"]["p99_us"], result["latency_us"]["p99"],
        "the same histogram, the same p99"
    );
    // A range: the intervals that start in [0.5 s, 1 s), two of 250 ms.
    let file = read_hlog(&std::fs::read(&hlog).unwrap()).unwrap();
    let in_range: u64 = (file.intervals.iter())
        .filter(|i| i.tag == "latency" && i.start.as_millis() >= 500 && i.start.as_millis() < 1000)
        .map(|i| i.histogram.len())
        .sum();
    let output = stampede(&[
        "report", path, "--from", "500ms", "--to", "1s", "--tag", "latency", "-o", "json",
    ]);
    assert_succeeded(&output);
    let ranged: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(ranged["tags"]["latency"]["count"].as_u64(), Some(in_range));
    assert_eq!(ranged["tags"]["latency"]["intervals"].as_u64(), Some(2));
    // Each interval of the range on its own: its count and percentiles.
    let each = ranged["tags"]["latency"]["per_interval"]
        .as_array()
        .expect("per_interval");
    let kept: Vec<_> = (file.intervals.iter())
        .filter(|i| i.tag == "latency" && i.start.as_millis() >= 500 && i.start.as_millis() < 1000)
        .collect();
    assert_eq!(each.len(), kept.len());
    for (row, interval) in each.iter().zip(&kept) {
        assert_eq!(row["start_s"].as_f64(), Some(interval.start.as_secs_f64()));
        assert_eq!(row["count"].as_u64(), Some(interval.histogram.len()));
        assert_eq!(
            row["p99_us"].as_u64(),
            Some(interval.histogram.value_at_percentile(99.0))
        );
        assert_eq!(row["max_us"].as_u64(), Some(interval.histogram.max()));
    }
    assert!(
        ranged["tags"].get("service").is_none(),
        "--tag keeps one tag"
    );
    // The same intervals as text, a row each: start, length, count, p99.
    let output = stampede(&[
        "report",
        path,
        "--from",
        "500ms",
        "--to",
        "1s",
        "--tag",
        "latency",
        "--per-interval",
    ]);
    assert_succeeded(&output);
    let printed = text(&output.stdout);
    let rows: Vec<Vec<&str>> = printed
        .lines()
        .skip_while(|l| !l.contains("latency per interval"))
        .skip(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), kept.len(), "{printed}");
    for (row, interval) in rows.iter().zip(&kept) {
        assert_eq!(row[0], format!("{:.3}", interval.start.as_secs_f64()));
        assert_eq!(row[1], format!("{:.3}", interval.length.as_secs_f64()));
        assert_eq!(row[2], interval.histogram.len().to_string());
        let p99_ms = interval.histogram.value_at_percentile(99.0) as f64 / 1000.0;
        assert_eq!(row[5], format!("{p99_ms:.3}"), "{printed}");
    }
    let output = stampede(&["report", path, "--tag", "latency"]);
    assert!(
        !text(&output.stdout).contains("per interval"),
        "without --per-interval, the totals only"
    );

    // A corrupt line: exit 2, one line naming it.
    let original = std::fs::read_to_string(&hlog).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    let first = lines.iter().position(|l| l.starts_with("Tag=")).unwrap();
    let corrupt = |line: &str| {
        let mut copy: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        copy[first + 2] = line.to_string();
        let bad = dir.join("bad.hlog");
        std::fs::write(&bad, copy.join("\n") + "\n").unwrap();
        let output = stampede(&["report", bad.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
        let stderr = text(&output.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(&format!("line {}", first + 3)), "{stderr}");
        stderr
    };
    assert!(corrupt("Tag=ttfb,0.000,0.250,0.001,%%%notbase64").contains("base64"));
    assert!(corrupt("Tag=ttfb,0.000,0.250,0.001,aGVsbG8gd29ybGQ=").contains("does not decode"));
    assert!(corrupt("Tag=ttfb,0.000,0.2").contains("not an interval"));
    // The second latency interval moved to before the first.
    let second_latency = lines
        .iter()
        .rposition(|l| l.starts_with("Tag=latency,0.250,"))
        .unwrap();
    let mut swapped: Vec<&str> = lines.clone();
    swapped.swap(first, second_latency);
    let bad = dir.join("order.hlog");
    std::fs::write(&bad, swapped.join("\n") + "\n").unwrap();
    let output = stampede(&["report", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains(&format!("line {}", second_latency + 1)));

    // Cut mid-line: read to the last complete interval, and said so.
    let cut = dir.join("cut.hlog");
    std::fs::write(&cut, &original.as_bytes()[..original.len() - 20]).unwrap();
    let output = stampede(&["report", cut.to_str().unwrap(), "-o", "json"]);
    assert_succeeded(&output);
    assert!(
        text(&output.stderr).contains("ends inside line"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_failed_run_still_writes_its_log() {
    let dir = stampede_testkit::temp_dir("hlog-failed");
    let hlog = dir.join("failed.hlog");
    // Nothing listens: the run gives up, and the log is there all the same.
    let port = stampede_testkit::free_port();
    let output = stampede(&[
        "run",
        &format!("http://127.0.0.1:{port}/"),
        "-c",
        "1",
        "-d",
        "1s",
        "-q",
        "--hlog",
        hlog.to_str().unwrap(),
    ]);
    assert_ne!(output.status.code(), Some(0), "nothing answered");
    let file = read_hlog(&std::fs::read(&hlog).expect("the log is written")).unwrap();
    assert!(file.start_time.is_some(), "its headers are there");
    assert_eq!(sum_of(&file, "latency").len(), 0);
}

#[test]
fn three_split_logs_merge_to_the_single_runs_intervals() {
    use stampede_metrics::HlogWriter;
    let dir = stampede_testkit::temp_dir("hlog-merge");
    let (hlog, _) = run_with_hlog(&dir, "250ms");
    let single = read_hlog(&std::fs::read(&hlog).unwrap()).unwrap();
    let started = single.start_time.unwrap();
    // Each interval's samples dealt out three ways, as three agents would
    // have measured them.
    let parts: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("agent{i}.hlog"))).collect();
    let mut writers: Vec<HlogWriter<Vec<u8>>> = (0..3)
        .map(|_| HlogWriter::begin(Vec::new(), started, "test").unwrap())
        .collect();
    for interval in &single.intervals {
        let mut shares: Vec<LatencyHistogram> = (0..3)
            .map(|_| stampede_metrics::new_latency_histogram())
            .collect();
        let mut next = 0;
        for value in interval.histogram.iter_recorded() {
            for _ in 0..value.count_at_value() {
                shares[next % 3].record(value.value_iterated_to()).unwrap();
                next += 1;
            }
        }
        for (writer, share) in writers.iter_mut().zip(&shares) {
            writer
                .write(&interval.tag, interval.start, interval.length, share)
                .unwrap();
        }
    }
    for (writer, path) in writers.into_iter().zip(&parts) {
        std::fs::write(path, writer.finish().unwrap()).unwrap();
    }
    let merged_path = dir.join("merged.hlog");
    let mut args = vec!["merge"];
    args.extend(parts.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--hlog", merged_path.to_str().unwrap()]);
    assert_succeeded(&stampede(&args));
    let merged = read_hlog(&std::fs::read(&merged_path).unwrap()).unwrap();
    assert_eq!(merged.intervals.len(), single.intervals.len());
    for (m, s) in merged.intervals.iter().zip(&single.intervals) {
        assert_eq!((&m.tag, m.start, m.length), (&s.tag, s.start, s.length));
        assert_eq!(
            m.histogram.len(),
            s.histogram.len(),
            "{} at {:?}",
            s.tag,
            s.start
        );
        if !s.histogram.is_empty() {
            assert_eq!(
                m.histogram.value_at_quantile(0.99),
                s.histogram.value_at_quantile(0.99),
                "p99 of {} at {:?}",
                s.tag,
                s.start
            );
        }
        assert_eq!(buckets(&m.histogram), buckets(&s.histogram));
    }
    // Different tag sets: one line, exit 2.
    let other = dir.join("other.hlog");
    let mut writer = HlogWriter::begin(Vec::new(), started, "test").unwrap();
    let empty = stampede_metrics::new_latency_histogram();
    writer
        .write(
            "elsewhere",
            std::time::Duration::ZERO,
            std::time::Duration::from_secs(1),
            &empty,
        )
        .unwrap();
    std::fs::write(&other, writer.finish().unwrap()).unwrap();
    let output = stampede(&[
        "merge",
        parts[0].to_str().unwrap(),
        other.to_str().unwrap(),
        "--hlog",
        dir.join("no.hlog").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("has tags elsewhere"),
        "{}",
        text(&output.stderr)
    );
}

/// Two values are the same within HDR's precision at 3 significant digits.
fn within_precision(a: u64, b: u64) -> bool {
    a.abs_diff(b) <= a.max(b) / 1000 + 1
}

/// The value at `percentile` as HdrHistogram_py ranks it
/// (hdrh/histogram.py, `get_target_count_at_percentile`: the count
/// `int(p × total / 100 + 0.5)`, at least 1, where Rust's crate takes the
/// ceiling): the highest value equivalent to the first bucket whose
/// running count reaches it. The ranks differ by one at most; with a
/// sparse tail, one sample can be a bucket a millisecond apart.
fn value_at_python_rank(histogram: &LatencyHistogram, percentile: f64) -> u64 {
    let total = histogram.len() as f64;
    let rank = ((percentile * total / 100.0 + 0.5) as u64).max(1);
    let mut running = 0;
    for value in histogram.iter_recorded() {
        running += value.count_at_value();
        if running >= rank {
            return histogram.highest_equivalent(value.value_iterated_to());
        }
    }
    0
}

#[test]
fn python_hdrhistogram_reads_every_interval_alike() {
    let python = stampede_testkit::require_tool!("python3");
    let probe = Command::new(&python)
        .args(["-c", "import hdrh.log"])
        .output()
        .expect("python3 runs");
    if !probe.status.success() {
        skip_or_fail(
            &format!(
                "{} cannot import hdrh (PyPI: hdrhistogram)",
                python.display()
            ),
            &format!("pip install '{HDRHISTOGRAM_PY}' (into the python3 on PATH)"),
        );
        return;
    }
    let dir = stampede_testkit::temp_dir("hlog-python");
    let (hlog, _) = run_with_hlog(&dir, "100ms");
    let ours = read_hlog(&std::fs::read(&hlog).unwrap()).unwrap();
    let reader =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interval_log_support/read_hlog.py");
    let output = Command::new(&python)
        .arg(&reader)
        .arg(&hlog)
        .output()
        .expect("the Python reader runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let theirs: Vec<serde_json::Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(theirs.len(), ours.intervals.len(), "every interval decoded");
    let mut seen = 0;
    for (mine, read) in ours.intervals.iter().zip(&theirs) {
        assert_eq!(read["tag"].as_str(), Some(mine.tag.as_str()));
        assert_eq!(
            read["start_ms"].as_u64(),
            Some(mine.start.as_millis() as u64)
        );
        let count = read["count"].as_u64().unwrap();
        assert_eq!(
            count,
            mine.histogram.len(),
            "{} at {:?}",
            mine.tag,
            mine.start
        );
        if count == 0 {
            continue;
        }
        seen += count;
        for (key, percentile) in [("p50", 50.0), ("p99", 99.0), ("max", 100.0)] {
            let python = read[key].as_u64().unwrap();
            let rust = value_at_python_rank(&mine.histogram, percentile);
            assert!(
                within_precision(python, rust),
                "{key} of {} at {:?}: Python {python}, stampede {rust}",
                mine.tag,
                mine.start
            );
        }
    }
    assert!(seen > 1000, "the intervals held {seen} samples");
}

#[test]
fn an_interrupted_run_writes_every_interval_it_measured() {
    let dir = stampede_testkit::temp_dir("hlog-interrupt");
    let target = spawn_target(stampede_testkit::one_thread());
    let hlog = dir.join("stopped.hlog");
    let json = dir.join("stopped.json");
    let child = Command::new(stampede_testkit::binary())
        .args(["run", &format!("http://{}/", target.local_addr())])
        .args([
            "-c",
            "2",
            "-t",
            "2",
            "-d",
            "30s",
            "-q",
            "--hlog-interval",
            "250ms",
        ])
        .arg("--hlog")
        .arg(&hlog)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1300));
    // Ctrl-C, as the terminal sends it.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(130), "an interrupted run exits 130");
    let file = read_hlog(&std::fs::read(&hlog).unwrap()).unwrap();
    let latency: Vec<_> = file
        .intervals
        .iter()
        .filter(|i| i.tag == "latency")
        .collect();
    assert!(
        latency.len() >= 4,
        "1.3 s in 250 ms intervals: {}",
        latency.len()
    );
    for (n, interval) in latency.iter().enumerate() {
        assert_eq!(interval.start.as_millis(), 250 * n as u128);
    }
    let result = read_json(&json);
    assert_eq!(
        sum_of(&file, "latency").len(),
        result["requests"]["completed"].as_u64().unwrap(),
        "every response measured before the stop is in the log"
    );
}

#[test]
fn the_html_report_draws_the_latency_heatmap_from_the_intervals() {
    let chromium = stampede_testkit::require_tool!("chromium");
    let dir = stampede_testkit::temp_dir("hlog-heatmap");
    let target = spawn_target(stampede_testkit::one_thread());
    let hlog = dir.join("run.hlog");
    let html = dir.join("run.html");
    let output = stampede(&[
        "run",
        &format!("http://{}/", target.local_addr()),
        "-c",
        "2",
        "-d",
        "1s",
        "-q",
        "--hlog",
        hlog.to_str().unwrap(),
        "--hlog-interval",
        "100ms",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"latency-heatmap\""));
    let mut browser =
        stampede_testkit::Browser::open(&chromium, &format!("file://{}", html.display()));
    // heatmap.js draws when it runs, after the canvas is parsed: wait for it.
    let drawn = browser.wait_until(
        "!!document.getElementById('latency-heatmap') && !!window.stampedeHeatmap",
        std::time::Duration::from_secs(20),
    );
    assert!(drawn, "the page has the heatmap and its script ran");
    let inked = browser.eval(
        "(function () { var c = document.getElementById('latency-heatmap'); \
         var p = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0; \
         for (var i = 3; i < p.length; i += 4) if (p[i] > 0) n++; return n; })()",
    );
    assert!(inked.as_u64() > Some(100), "cells drawn: {inked}");
    let tip = browser.eval(
        "(function () { var c = document.getElementById('latency-heatmap'), b = c.getBoundingClientRect(); \
         c.dispatchEvent(new MouseEvent('mousemove', {clientX: b.left + 5, clientY: b.top + 5})); \
         return document.getElementById('latency-heatmap-tip').textContent; })()",
    );
    let tip = tip.as_str().unwrap_or_default().to_string();
    assert!(
        tip.starts_with("0.000 s +0.100 s: ") && tip.contains("p99"),
        "{tip}"
    );
}

/// A JMeter plan of one thread group: 5 threads, 1 s, a GET of `/`.
const JMX: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="hlog"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Users">
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <intProp name="LoopController.loops">-1</intProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">5</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
        <boolProp name="ThreadGroup.scheduler">true</boolProp>
        <stringProp name="ThreadGroup.duration">1</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="home">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.path">/</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

#[test]
fn the_jmeter_front_end_writes_the_log_of_its_run() {
    let dir = stampede_testkit::temp_dir("hlog-jmeter");
    let target = spawn_target(stampede_testkit::one_thread());
    let plan = dir.join("plan.jmx");
    std::fs::write(&plan, JMX).unwrap();
    let hlog = dir.join("plan.hlog");
    let json = dir.join("plan.json");
    let port = format!("-Jport={}", target.local_addr().port());
    let output = stampede(&[
        "jmeter",
        "-n",
        "-t",
        plan.to_str().unwrap(),
        &port,
        "--hlog",
        hlog.to_str().unwrap(),
        "--hlog-interval",
        "100ms",
        "--stampede-json",
        json.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    let file = read_hlog(&std::fs::read(&hlog).unwrap()).unwrap();
    let completed = read_json(&json)["requests"]["completed"].as_u64().unwrap();
    assert!(completed > 0);
    assert_eq!(sum_of(&file, "latency").len(), completed);
    // --hlog-interval is the front-end's too: every interval but the
    // run's last is 100 ms long.
    let latency: Vec<_> = (file.intervals.iter())
        .filter(|i| i.tag == "latency")
        .collect();
    let (_, whole) = latency.split_last().expect("an interval");
    assert!(
        whole.iter().all(|i| i.length.as_millis() == 100),
        "{:?}",
        latency.iter().map(|i| i.length).collect::<Vec<_>>()
    );
}

/// Each check has a tag holding the latency of the responses that failed
/// it: its intervals add up to exactly the check's `failed` count.
#[test]
fn each_check_tag_holds_exactly_the_responses_that_failed_it() {
    let dir = stampede_testkit::temp_dir("hlog-checks");
    let target = spawn_target(stampede_testkit::one_thread());
    let url = format!("http://{}/", target.local_addr());
    let hlog = dir.join("checks.hlog");
    let json = dir.join("checks.json");
    let output = stampede(&[
        "run",
        &url,
        "-c",
        "2",
        "-t",
        "2",
        "-n",
        "3000",
        "-q",
        "--check",
        "status == 200",
        "--check",
        "status == 201",
        "--check",
        "time < 150us",
        "--hlog",
        hlog.to_str().unwrap(),
        "--hlog-interval",
        "100ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    let result = read_json(&json);
    let file = read_hlog(&std::fs::read(&hlog).unwrap()).unwrap();
    let tags = [
        "latency:check:status%20==%20200",
        "latency:check:status%20==%20201",
        "latency:check:time%20<%20150us",
    ];
    assert_eq!(&file.tags()[4..], tags);
    for (n, tag) in tags.iter().enumerate() {
        let failed = result["checks"][n]["failed"].as_u64().unwrap();
        assert_eq!(sum_of(&file, tag).len(), failed, "{tag}");
    }
    assert_eq!(result["checks"][0]["failed"], 0);
    let completed = result["requests"]["completed"].as_u64().unwrap();
    assert_eq!(completed, 3000);
    assert_eq!(result["checks"][1]["failed"], completed);
    // The failing responses' latencies, not any others: every one that
    // failed `time < 150us` took at least that long.
    let slow = sum_of(&file, tags[2]);
    if !slow.is_empty() {
        assert!(slow.highest_equivalent(slow.min()) >= 150, "{}", slow.min());
    }
}

/// Each second's `latency` histogram of a result file, decoded.
fn json_seconds(result: &serde_json::Value) -> Vec<LatencyHistogram> {
    json_seconds_of(result, "latency")
}

/// Each second's histogram of `tag` in a result file, decoded.
fn json_seconds_of(result: &serde_json::Value, tag: &str) -> Vec<LatencyHistogram> {
    result["timeseries"]
        .as_array()
        .expect("a timeseries")
        .iter()
        .map(|point| {
            let text = point["histograms"][tag]
                .as_str()
                .unwrap_or_else(|| panic!("a {tag} histogram in {point}"));
            decode_histogram(text).unwrap()
        })
        .collect()
}

/// A histogram's values dealt out one by one to three, in turn.
fn dealt_three_ways(histogram: &LatencyHistogram) -> Vec<LatencyHistogram> {
    let mut dealt: Vec<LatencyHistogram> = (0..3)
        .map(|_| stampede_metrics::new_latency_histogram())
        .collect();
    let mut next = 0;
    for value in histogram.iter_recorded() {
        for _ in 0..value.count_at_value() {
            dealt[next % 3].record(value.value_iterated_to()).unwrap();
            next += 1;
        }
    }
    dealt
}

#[test]
fn json_seconds_sum_to_the_run_and_a_three_way_split_merges_back_exactly() {
    let dir = stampede_testkit::temp_dir("json-seconds");
    let (_, result) = run_with_hlog(&dir, "1s");
    let seconds = json_seconds(&result);
    // Exact by construction: the seconds add up to the whole, bucket for bucket.
    let mut summed = stampede_metrics::new_latency_histogram();
    for second in &seconds {
        summed.add(second).unwrap();
    }
    let whole = decode_histogram(result["histogram"].as_str().unwrap()).unwrap();
    assert!(whole.len() > 1000, "the run measured {}", whole.len());
    assert_eq!(buckets(&summed), buckets(&whole));
    // Service time too: each second keeps it, and the seconds add up to
    // the run's `service_histogram`.
    let service_seconds = json_seconds_of(&result, "service");
    let mut service_summed = stampede_metrics::new_latency_histogram();
    for second in &service_seconds {
        service_summed.add(second).unwrap();
    }
    let service = decode_histogram(result["service_histogram"].as_str().unwrap()).unwrap();
    assert_eq!(service.len(), whole.len());
    assert_eq!(buckets(&service_summed), buckets(&service));
    // Each second's samples dealt out three ways, as three agents would have
    // measured them; each agent's file otherwise the run's own.
    let parts: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("agent{i}.json"))).collect();
    let mut shares = [result.clone(), result.clone(), result.clone()];
    for (n, (second, service)) in seconds.iter().zip(&service_seconds).enumerate() {
        let dealt = dealt_three_ways(second);
        let served = dealt_three_ways(service);
        for ((share, histogram), service) in shares.iter_mut().zip(&dealt).zip(&served) {
            let point = &mut share["timeseries"][n];
            point["histograms"]["latency"] = stampede_metrics::encode_histogram(histogram).into();
            point["histograms"]["service"] = stampede_metrics::encode_histogram(service).into();
            point["completed"] = histogram.len().into();
            point["success"] = histogram.len().into();
        }
    }
    for (share, path) in shares.iter().zip(&parts) {
        std::fs::write(path, serde_json::to_string(share).unwrap()).unwrap();
    }
    let merged_path = dir.join("merged.json");
    let mut args = vec!["merge"];
    args.extend(parts.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--json", merged_path.to_str().unwrap()]);
    assert_succeeded(&stampede(&args));
    let merged = read_json(&merged_path);
    let merged_seconds = json_seconds(&merged);
    assert_eq!(merged_seconds.len(), seconds.len());
    let merged_service = json_seconds_of(&merged, "service");
    for (n, (m, s)) in merged_service.iter().zip(&service_seconds).enumerate() {
        assert_eq!(buckets(m), buckets(s), "service time, second {n}");
    }
    for (n, (m, s)) in merged_seconds.iter().zip(&seconds).enumerate() {
        let point = &merged["timeseries"][n];
        assert_eq!(point["completed"].as_u64(), Some(s.len()), "second {n}");
        assert_eq!(buckets(m), buckets(s), "second {n}");
        if !s.is_empty() {
            assert_eq!(
                point["p99_us"].as_u64(),
                Some(s.value_at_quantile(0.99)),
                "p99 of second {n}"
            );
            assert_eq!(point["max_us"].as_u64(), Some(s.max()), "second {n}");
        }
    }
    let notices = merged["notices"].to_string();
    assert!(!notices.contains("per-second histograms"), "{notices}");
    // A file from before: the old rule, said in a notice.
    let mut old = shares[2].clone();
    for point in old["timeseries"].as_array_mut().unwrap() {
        point.as_object_mut().unwrap().remove("histograms");
    }
    std::fs::write(&parts[2], serde_json::to_string(&old).unwrap()).unwrap();
    assert_succeeded(&stampede(&args));
    let fallback = read_json(&merged_path);
    let notices = fallback["notices"].to_string();
    assert!(
        notices.contains("input 2 has no per-second histograms")
            && notices.contains("an upper bound"),
        "{notices}"
    );
    assert!(fallback["timeseries"][0].get("histograms").is_none());
}

#[test]
fn compare_takes_the_same_window_of_both_runs() {
    let dir = stampede_testkit::temp_dir("compare-window");
    let (_, result) = run_with_hlog(&dir, "1s");
    let path = dir.join("run.json");
    let seconds = json_seconds(&result);
    assert!(seconds.len() >= 2, "a 2 s run has two seconds");
    let mut later = stampede_metrics::new_latency_histogram();
    for second in &seconds[1..] {
        later.add(second).unwrap();
    }
    let out = dir.join("cmp.json");
    let output = stampede(&[
        "compare",
        path.to_str().unwrap(),
        path.to_str().unwrap(),
        "--from",
        "1s",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    assert!(
        text(&output.stdout).starts_with("Window: the seconds from 1 s to the end of each run"),
        "{}",
        text(&output.stdout)
    );
    let comparison = read_json(&out);
    assert_eq!(comparison["window"], "from 1 s to the end");
    let row = |name: &str| {
        comparison["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("a {name} row"))
            .clone()
    };
    let p99_ms = later.value_at_quantile(0.99) as f64 / 1000.0;
    assert_eq!(row("p99")["values"][0].as_f64(), Some(p99_ms));
    assert_eq!(row("p99")["values"][1].as_f64(), Some(p99_ms));
    let elapsed: f64 = result["timeseries"].as_array().unwrap()[1..]
        .iter()
        .map(|p| p["duration_s"].as_f64().unwrap())
        .sum();
    let rps = row("rps")["values"][0].as_f64().unwrap();
    assert!(
        (rps - later.len() as f64 / elapsed).abs() < 1e-6,
        "{rps} vs {} over {elapsed} s",
        later.len()
    );
    // A file without per-second histograms: one line naming it, exit 2.
    let mut old = result.clone();
    for point in old["timeseries"].as_array_mut().unwrap() {
        point.as_object_mut().unwrap().remove("histograms");
    }
    let old_path = dir.join("old.json");
    std::fs::write(&old_path, serde_json::to_string(&old).unwrap()).unwrap();
    let refused = stampede(&[
        "compare",
        path.to_str().unwrap(),
        old_path.to_str().unwrap(),
        "--from",
        "1s",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("old.json: it has no per-second histograms") && stderr.lines().count() == 1,
        "{stderr}"
    );
    // Without --from/--to the old file compares as before.
    assert_succeeded(&stampede(&[
        "compare",
        path.to_str().unwrap(),
        old_path.to_str().unwrap(),
    ]));
    for window in [
        ["--from", "2s", "--to", "1s"],
        ["--from", "1.5s", "--to", "2s"],
    ] {
        let mut args = vec!["compare", path.to_str().unwrap(), path.to_str().unwrap()];
        args.extend(window);
        let output = stampede(&args);
        assert_eq!(output.status.code(), Some(2), "{window:?}");
    }
}

/// A keep-alive HTTP/1.1 server that answers `ok` at once, except from
/// 1.5 s to 2.5 s after it started: every request then waits for the
/// stall's end (a stop-the-world pause). Its address.
fn stalling_server() -> std::net::SocketAddr {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let started = Instant::now();
    let (from, to) = (Duration::from_millis(1_500), Duration::from_millis(2_500));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut pending = Vec::new();
                let mut buffer = [0u8; 4096];
                loop {
                    let Ok(n) = stream.read(&mut buffer) else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    pending.extend_from_slice(&buffer[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        let now = started.elapsed();
                        if now >= from && now < to {
                            std::thread::sleep(to - now);
                        }
                        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if stream.write_all(answer).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    address
}

#[test]
fn a_stall_is_a_band_in_the_reports_heatmap() {
    let dir = stampede_testkit::temp_dir("heatmap-stall");
    let address = stalling_server();
    let html = dir.join("run.html");
    let output = stampede(&[
        "run",
        &format!("http://{address}/"),
        "-r",
        "200",
        "-c",
        "4",
        "-t",
        "1",
        "-d",
        "4s",
        "-q",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    let page = std::fs::read_to_string(&html).unwrap();
    let data = page
        .split("<script type=\"application/json\" id=\"latency-heatmap-data\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the report has the heatmap's cells");
    let cells: serde_json::Value = serde_json::from_str(data).unwrap();
    let first_row = cells["first_row"].as_u64().unwrap();
    let per_decade = cells["per_decade"].as_f64().unwrap();
    // Row r holds latencies from 10^(r / per_decade) µs: 100 ms is row 40.
    let slow_row = (5.0 * per_decade) as u64;
    let ten_ms_row = (4.0 * per_decade) as u64;
    // Per column: responses at 100 ms or more, and rows above 10 ms with any.
    let columns: Vec<(u64, usize)> = cells["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|column| {
            let counts = column[7].as_array().unwrap();
            let row = |i: usize| first_row + i as u64;
            let slow = (counts.iter().enumerate())
                .filter(|(i, _)| row(*i) >= slow_row)
                .map(|(_, n)| n.as_u64().unwrap())
                .sum();
            let band = (counts.iter().enumerate())
                .filter(|(i, n)| row(*i) >= ten_ms_row && n.as_u64() > Some(0))
                .count();
            (slow, band)
        })
        .collect();
    let (stall, &(slow, band)) = columns
        .iter()
        .enumerate()
        .max_by_key(|(_, c)| c.0)
        .expect("columns");
    // The pause holds about 200 intended sends whose latency runs from
    // 0 to 1 s: a column with a tall band of many rows.
    assert!(slow >= 50, "the stall's column: {columns:?}");
    assert!(band >= 6, "a band over several rows: {columns:?}");
    // Elsewhere, next to nothing that slow: the band is the stall's alone
    // (it may straddle two seconds).
    let elsewhere: u64 = (columns.iter().enumerate())
        .filter(|(i, _)| i.abs_diff(stall) > 1)
        .map(|(_, c)| c.0)
        .sum();
    assert!(
        columns.len() >= 4 && elsewhere * 10 < slow,
        "slow responses outside the stall: {columns:?}"
    );
    // Drawn in a browser, the band is ink above the 100 ms row in the
    // stall's column, and a quiet column far from it has next to none.
    let Some(chromium) = stampede_testkit::tool_or_skip("chromium") else {
        return;
    };
    let quiet = (0..columns.len())
        .rev()
        .find(|i| i.abs_diff(stall) > 1)
        .expect("a column away from the stall");
    let mut browser =
        stampede_testkit::Browser::open(&chromium, &format!("file://{}", html.display()));
    // Drawn once some pixel has ink (the page's script has run).
    let drawn = browser.wait_until(
        "(function () { var c = document.getElementById('latency-heatmap'); \
         if (!c) return false; var p = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; \
         for (var i = 3; i < p.length; i += 4) if (p[i] > 0) return true; return false; })()",
        std::time::Duration::from_secs(20),
    );
    assert!(drawn, "the page draws the heatmap");
    // Inked pixels in a column's right half (the axis labels are at the
    // left edge) above the 100 ms row.
    let mut ink_above_100_ms = |column: usize| {
        let script = format!(
            "(function () {{ var c = document.getElementById('latency-heatmap'), \
             d = JSON.parse(document.getElementById('latency-heatmap-data').textContent), \
             w = c.width / d.columns.length, h = c.height / d.rows, \
             x0 = Math.ceil(({column} + 0.5) * w), x1 = Math.floor(({column} + 1) * w), \
             y1 = Math.floor(c.height - ({slow_row} - d.first_row) * h), \
             p = c.getContext('2d').getImageData(x0, 0, x1 - x0, y1).data, n = 0; \
             for (var i = 3; i < p.length; i += 4) if (p[i] > 0) n++; return n; }})()"
        );
        browser.eval(&script).as_u64().expect("a pixel count")
    };
    let (band_ink, quiet_ink) = (ink_above_100_ms(stall), ink_above_100_ms(quiet));
    assert!(
        band_ink > 1_000 && quiet_ink * 10 < band_ink,
        "inked pixels above 100 ms: {band_ink} in the stall's column {stall}, \
         {quiet_ink} in column {quiet}"
    );
}

/// What cannot be reported is refused in one line, exit 2: a window that
/// ends before it starts or that no interval starts in, and a log with
/// only its headers (a run stopped before its first interval ended). The
/// text says which span the counted intervals cover.
#[test]
fn report_refuses_an_empty_window_and_a_log_without_intervals() {
    let dir = stampede_testkit::temp_dir("hlog-report-window");
    let (hlog, _) = run_with_hlog(&dir, "250ms");
    let path = hlog.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let output = stampede(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&output.stdout)
        );
        let stderr = text(&output.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    refused(
        &["report", path, "--from", "2s", "--to", "1s"],
        "--to must be after --from",
    );
    refused(
        &["report", path, "--from", "30s"],
        "no interval starts in the window 30.000 s to the end",
    );
    let original = std::fs::read_to_string(&hlog).unwrap();
    let headers: Vec<&str> = (original.lines())
        .take_while(|l| !l.starts_with("Tag="))
        .collect();
    let empty = dir.join("headers-only.hlog");
    std::fs::write(&empty, headers.join("\n") + "\n").unwrap();
    refused(
        &["report", empty.to_str().unwrap()],
        "the log has no complete interval",
    );
    // From 0.1 s: the intervals starting at 0.25 s and after are counted,
    // and the text says so.
    let output = stampede(&["report", path, "--from", "100ms", "--tag", "latency"]);
    assert_succeeded(&output);
    let printed = text(&output.stdout);
    assert!(printed.contains("covering 0.250 s to"), "{printed}");
}

/// Logs that cannot be merged interval by interval are refused in one
/// line, exit 2: different interval lengths, and one file given twice
/// under two spellings (it would count twice).
#[test]
fn merge_refuses_different_intervals_and_one_file_twice() {
    let dir = stampede_testkit::temp_dir("hlog-merge-refusals");
    let quarter = dir.join("quarter");
    let half = dir.join("half");
    std::fs::create_dir_all(&quarter).unwrap();
    std::fs::create_dir_all(&half).unwrap();
    let (a, _) = run_with_hlog(&quarter, "250ms");
    let (b, _) = run_with_hlog(&half, "500ms");
    let merged = dir.join("merged.hlog");
    let refused = |inputs: [&str; 2], says: &str| {
        let output = stampede(&[
            "merge",
            inputs[0],
            inputs[1],
            "--hlog",
            merged.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(2), "{inputs:?}");
        let stderr = text(&output.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(says), "{inputs:?}: {stderr}");
        assert!(!merged.exists(), "nothing written");
    };
    refused(
        [a.to_str().unwrap(), b.to_str().unwrap()],
        "intervals of 0.500 s but",
    );
    let spelled = quarter.join(".").join("run.hlog");
    refused(
        [a.to_str().unwrap(), spelled.to_str().unwrap()],
        "are the same file",
    );
}

/// `experiment --hlog`: each variant's round writes its own log, named by
/// variant and round, whose intervals add up to that run; `--hlog` after
/// `-- run` is the experiment's to give, and refused there.
#[test]
fn an_experiment_writes_a_log_per_variant_and_round() {
    let dir = stampede_testkit::temp_dir("hlog-experiment");
    let port = stampede_testkit::free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let template = format!(
        "{} serve --port {port} --threads {{threads}}",
        stampede_testkit::binary().display()
    );
    let hlog = dir.join("exp.hlog");
    let json = dir.join("exp.json");
    let output = stampede(&[
        "experiment",
        "-q",
        "--server",
        &template,
        "--vary",
        "threads=1,2",
        "--repeat",
        "1",
        "--settle",
        "0s",
        "--json",
        json.to_str().unwrap(),
        "--hlog",
        hlog.to_str().unwrap(),
        "--hlog-interval",
        "500ms",
        "--",
        "run",
        &url,
        "-c",
        "2",
        "-d",
        "1s",
    ]);
    assert_succeeded(&output);
    let doc = read_json(&json);
    let variants = doc["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    for (index, variant) in variants.iter().enumerate() {
        let path = dir.join(format!("exp.v{}.round1.hlog", index + 1));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = read_hlog(&bytes).unwrap();
        let completed = variant["runs"][0]["requests"]["completed"]
            .as_u64()
            .unwrap();
        assert!(completed > 0);
        assert_eq!(
            sum_of(&file, "latency").len(),
            completed,
            "{}",
            path.display()
        );
    }
    assert!(!hlog.exists(), "one log per run, none under the bare name");
    let output = stampede(&[
        "experiment",
        "--server",
        &template,
        "--vary",
        "threads=1,2",
        "--",
        "run",
        &url,
        "--hlog",
        dir.join("x.hlog").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("--hlog after --"), "{stderr}");
    assert!(
        stderr.contains("its own --repeat, --json, --html and --hlog"),
        "{stderr}"
    );
}

/// `sweep --hlog`: each step writes its own log (`.step1`, `.step2`),
/// whose intervals add up to that step's run.
#[test]
fn a_sweep_writes_a_log_per_step() {
    let dir = stampede_testkit::temp_dir("hlog-sweep");
    let target = spawn_target(stampede_testkit::one_thread());
    let url = format!("http://{}/", target.local_addr());
    let hlog = dir.join("sw.hlog");
    let json = dir.join("sw.json");
    let output = stampede(&[
        "sweep",
        &url,
        "-c",
        "1,2",
        "--step",
        "1s",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--hlog",
        hlog.to_str().unwrap(),
    ]);
    assert_succeeded(&output);
    let doc = read_json(&json);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for (index, step) in steps.iter().enumerate() {
        let path = dir.join(format!("sw.step{}.hlog", index + 1));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = read_hlog(&bytes).unwrap();
        let completed = step["result"]["requests"]["completed"].as_u64().unwrap();
        assert!(completed > 0);
        assert_eq!(
            sum_of(&file, "latency").len(),
            completed,
            "{}",
            path.display()
        );
    }
    assert!(!hlog.exists(), "one log per step, none under the bare name");
}
