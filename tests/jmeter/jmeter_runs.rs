//! `stampede jmeter` runs: .jmx plans written the way JMeter 5 writes them
//! (crates/stampede-jmeter/testdata/session.jmx: two thread groups, a CSV
//! data set, assertions, a JSON extractor, timers, -J properties, header
//! managers, a raw JSON POST, a disabled sampler) against `stampede serve`
//! and nginx, the JTL checked against what the servers logged.

use stampede_testkit::jmeter as support;

use stampede_testkit::{temp_dir, text};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{jmeter, refused, testdata};

/// A JTL line, column name to value.
type Row = HashMap<String, String>;

/// `stampede jmeter -n -t PLAN -l JTL ARGS...`, asserted to exit 0: its
/// stdout and the JTL's rows.
fn run_plan(plan: &str, jtl: &Path, args: &[&str]) -> (String, Vec<Row>) {
    let (out, rows) = run_plan_output(plan, jtl, args);
    (text(&out.stdout), rows)
}

/// [`run_plan`] with the whole output, stderr's notes included.
fn run_plan_output(plan: &str, jtl: &Path, args: &[&str]) -> (std::process::Output, Vec<Row>) {
    let jtl_arg = jtl.display().to_string();
    let mut words = vec!["-n", "-t", plan, "-l", &jtl_arg];
    words.extend_from_slice(args);
    let out = jmeter(&words);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{words:?}\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let rows = jtl_rows(&std::fs::read_to_string(jtl).unwrap());
    (out, rows)
}

/// A server that answers every request `200 ok` and keeps each request's
/// line (`GET /p HTTP/1.1`) in the order it arrived.
fn recording_server() -> (stampede_testkit::RawServer, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    let server = stampede_testkit::RawServer::start(move |mut stream| {
        while let Some(line) = stampede_testkit::read_request_line(&mut stream) {
            seen.lock().unwrap().push(line);
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if stream.write_all(reply).is_err() {
                return;
            }
        }
    });
    (server, lines)
}

/// `xml` written as `dir/name`; the plan's path.
fn plan_file(dir: &Path, name: &str, xml: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, xml).unwrap();
    path.display().to_string()
}

/// session.jmx changed by `edit` (which must change it), written to
/// `dir/name` beside a copy of its users.csv; the plan's path.
fn edited_plan(dir: &Path, name: &str, edit: impl FnOnce(&str) -> String) -> String {
    std::fs::copy(testdata("users.csv"), dir.join("users.csv")).unwrap();
    let session = std::fs::read_to_string(testdata("session.jmx")).unwrap();
    let plan = edit(&session);
    assert_ne!(plan, session, "{name}: the edit changed nothing");
    let path = dir.join(name);
    std::fs::write(&path, plan).unwrap();
    path.display().to_string()
}

/// Waits (up to 20 s) until something listens on `port`.
fn wait_listening(port: u16, what: &str) {
    let ready = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            ready.elapsed() < Duration::from_secs(20),
            "{what} never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child process killed when dropped, also when an assertion fails.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `stampede serve` on a free port with its access log, stopped (SIGTERM,
/// so the log is flushed) when dropped.
struct Serve {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Serve {
    fn start(dir: &Path) -> Serve {
        let port = stampede_testkit::free_port();
        let log = dir.join("access.log");
        let child = std::process::Command::new(stampede_testkit::binary())
            .args(["serve", "-t", "1", "-p", &port.to_string(), "--access-log"])
            .arg(&log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("stampede serve starts");
        wait_listening(port, "serve");
        Serve { child, port, log }
    }

    /// Stops the server and returns its access log's request lines.
    fn requests(mut self) -> Vec<String> {
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.split('"').nth(1).map(str::to_string))
            .collect()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// JTL lines as column maps, by the header's names.
fn jtl_rows(text: &str) -> Vec<Row> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

#[test]
fn a_two_group_plan_runs_and_the_jtl_says_what_the_server_received() {
    let dir = temp_dir("jmeter-run");
    let serve = Serve::start(&dir);
    let jtl = dir.join("results.jtl");
    let port = format!("-Jport={}", serve.port);
    let (stdout, rows) = run_plan(
        &testdata("session.jmx"),
        &jtl,
        &[
            &port,
            "-Jenv=ci-run",
            "-Jthreads=2",
            "-Jloops=3",
            "-Jduration=1",
        ],
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("summary = "))
        .unwrap_or_default();
    assert!(summary.contains(" in 00:00:0"), "{stdout}");
    let text_jtl = std::fs::read_to_string(&jtl).unwrap();
    assert_eq!(
        text_jtl.lines().next(),
        Some(
            "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,\
             failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect"
        )
    );
    let shoppers: Vec<_> = rows
        .iter()
        .filter(|r| r["threadName"].starts_with("Shoppers 1-"))
        .collect();
    // 2 threads × 3 loops × 3 samplers (the disabled one is not sent).
    assert_eq!(shoppers.len(), 18, "{text_jtl}");
    for label in ["login", "me", "echo"] {
        assert_eq!(
            shoppers.iter().filter(|r| r["label"] == label).count(),
            6,
            "{label}"
        );
    }
    for row in &shoppers {
        // /me answers 200 only to the token extracted from /login; /echo's
        // assertion sees the -J header value the server echoed.
        assert_eq!(
            (row["responseCode"].as_str(), row["success"].as_str()),
            ("200", "true"),
            "{row:?}"
        );
        assert_eq!(
            (row["grpThreads"].as_str(), row["allThreads"].as_str()),
            ("2", "3")
        );
        let elapsed: u64 = row["elapsed"].parse().unwrap();
        let latency: u64 = row["Latency"].parse().unwrap();
        assert!(latency <= elapsed, "{row:?}");
        assert!(row["timeStamp"].parse::<u64>().unwrap() > 1_600_000_000_000);
    }
    let polls: Vec<_> = rows.iter().filter(|r| r["label"] == "poll").collect();
    assert!(!polls.is_empty() && polls.iter().all(|r| r["threadName"] == "Pollers 2-1"));
    // The Uniform Random Timer (20 ms + up to 20 ms) paces the one poller.
    let mut starts: Vec<u64> = polls
        .iter()
        .map(|r| r["timeStamp"].parse().unwrap())
        .collect();
    starts.sort_unstable();
    for pair in starts.windows(2) {
        assert!(
            pair[1] - pair[0] >= 19,
            "polls {} ms apart ({} polls in all)",
            pair[1] - pair[0],
            starts.len()
        );
    }
    for poll in &polls {
        assert_eq!(
            poll["success"], "false",
            "the plan asserts a body /json does not have"
        );
        assert_eq!(
            poll["failureMessage"], "Test failed: text expected to contain /items/",
            "JMeter's words"
        );
    }
    let requests = serve.requests();
    let count = |prefix: &str| requests.iter().filter(|r| r.starts_with(prefix)).count();
    assert_eq!(count("POST /login "), 6, "{requests:?}");
    assert_eq!(count("GET /me "), 6);
    assert_eq!(count("GET /echo?u="), 6);
    // The poller runs for a second: a poll in flight when its time is up
    // is left unfinished, not sampled, though the server may have answered
    // it (CI once saw 36 served and 35 sampled).
    let served = count("GET /json ");
    assert!(
        served == polls.len() || served == polls.len() + 1,
        "{served} served, {} sampled",
        polls.len()
    );
    assert_eq!(count("GET /never"), 0, "disabled elements are skipped");
    for user in ["ann", "bob", "cid"] {
        assert!(
            requests
                .iter()
                .any(|r| r.starts_with(&format!("GET /echo?u={user}&n="))),
            "{requests:?}"
        );
    }
    // The URL column is the URL sent, variables substituted (JMeter's
    // SampleResult.getUrlAsString of the sampled URL,
    // HTTPSamplerBase.getUrl after substitution), not the template.
    for echo in shoppers.iter().filter(|r| r["label"] == "echo") {
        let url = echo["URL"].as_str();
        assert!(!url.contains("{{"), "{echo:?}");
        let target = url
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]));
        let target = target.unwrap_or_else(|| panic!("{echo:?}"));
        assert!(target.starts_with("/echo?u="), "{echo:?}");
        assert!(
            requests
                .iter()
                .any(|r| r.starts_with(&format!("GET {target} "))),
            "{target} was not sent: {requests:?}"
        );
    }
    assert_eq!(
        rows.len(),
        requests.len(),
        "one JTL line per request the server saw"
    );
}

#[test]
fn reports_results_and_an_existing_jtl_are_handled_as_jmeter_does() {
    let dir = temp_dir("jmeter-outputs");
    let serve = Serve::start(&dir);
    let port = format!("-Jport={}", serve.port);
    let report = dir.join("report");
    std::fs::create_dir_all(&report).unwrap();
    std::fs::write(report.join("old.html"), "old").unwrap();
    let report_arg = report.display().to_string();
    let plan = testdata("session.jmx");
    let small = ["-Jthreads=1", "-Jloops=1", "-Jduration=1"];
    let mut args = vec!["-n", "-t", &plan, &port, "-e", "-o", &report_arg];
    args.extend(small);
    assert!(refused(&args).contains("the folder is not empty (-f empties it)"));
    let jtl = dir.join("results.jtl");
    let earlier = "timeStamp,elapsed,label\n1,2,earlier\n";
    std::fs::write(&jtl, earlier).unwrap();
    let jtl_arg = jtl.display().to_string();
    let json = dir.join("out.json").display().to_string();
    args.extend(["-f", "--stampede-json", &json]);
    let forced = jmeter(&args);
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    assert!(!report.join("old.html").exists(), "-f emptied the folder");
    for n in [1, 2] {
        assert!(
            report.join(format!("group-{n}.html")).is_file(),
            "group {n}'s report"
        );
        let result = stampede_testkit::read_json(&dir.join(format!("out.group-{n}.json")));
        assert_eq!(result["schema"], "stampede.result/1");
        // Each group's page is titled by the TestPlan and the group, not
        // by its first sampler's URL.
        let group = ["Shoppers", "Pollers"][n - 1];
        assert_eq!(result["plan"]["name"], format!("Session plan · {group}"));
        let page = std::fs::read_to_string(report.join(format!("group-{n}.html"))).unwrap();
        assert!(
            page.contains(&format!("<title>Session plan · {group} · ")),
            "{}",
            &page[..page.len().min(400)]
        );
    }
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(index.contains("<title>Session plan</title>"), "{index}");
    // Without -f an existing JTL is appended to, without a second header.
    let mut append = vec!["-n", "-t", &plan, &port, "-l", &jtl_arg];
    append.extend(small);
    let out = jmeter(&append);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let after = std::fs::read_to_string(&jtl).unwrap();
    assert!(after.starts_with(earlier), "{after}");
    assert!(
        after.lines().skip(2).all(|l| !l.starts_with("timeStamp")),
        "{after}"
    );
    assert!(
        after.lines().count() > 2 + 3,
        "the new samples follow: {after}"
    );
    drop(serve);
}

/// A JMeter 5 style plan for nginx: a CSV-fed POST with a raw JSON body
/// and a GET with the user in the query, under a plan-level header manager.
fn nginx_plan(dir: &Path, port: u16) -> String {
    // The session plan without its /me sampler (nginx hands out no token)
    // and without the extractor that reads one.
    edited_plan(dir, "nginx.jmx", |session| {
        let start = session.find("<HTTPSamplerProxy guiclass=\"HttpTestSampleGui\" testclass=\"HTTPSamplerProxy\" testname=\"me\">").unwrap();
        let end = session.find("<HTTPSamplerProxy guiclass=\"HttpTestSampleGui\" testclass=\"HTTPSamplerProxy\" testname=\"echo\">").unwrap();
        let plan = format!("{}{}", &session[..start], &session[end..])
            .replace(
                "<stringProp name=\"JSONPostProcessor.referenceNames\">token</stringProp>",
                "<stringProp name=\"JSONPostProcessor.referenceNames\">ok</stringProp>",
            )
            .replace(
                "<stringProp name=\"JSONPostProcessor.jsonPathExprs\">$.token</stringProp>",
                "<stringProp name=\"JSONPostProcessor.jsonPathExprs\">$.ok</stringProp>",
            )
            .replace("X-Plan: ${__P(env,local)}", "nginx")
            .replace(
                "<stringProp name=\"ThreadGroup.duration\">${__P(duration,1)}</stringProp>",
                "<stringProp name=\"ThreadGroup.duration\">1</stringProp>",
            );
        plan.replace("${__P(port,3000)}", &port.to_string())
    })
}

#[test]
fn the_plan_runs_against_nginx_and_its_log_shows_the_requests() {
    let nginx = stampede_testkit::require_tool!("nginx");
    let dir = temp_dir("jmeter-nginx");
    let port = stampede_testkit::free_port();
    let log = dir.join("access.log");
    let d = dir.display();
    let conf = format!(
        "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
           fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
           log_format plan '$request|$http_x_plan|$content_type';\n\
           server {{\n    listen 127.0.0.1:{port};\n    access_log {log} plan;\n\
             location /login {{ default_type application/json; return 200 '{{\"ok\":true}}'; }}\n\
             location / {{ default_type text/plain; return 200 'nginx $request_uri'; }}\n  }}\n}}\n",
        log = log.display(),
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let server = Killed(
        std::process::Command::new(nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&conf_path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_listening(port, "nginx");
    let plan = nginx_plan(&dir, port);
    let jtl = dir.join("nginx.jtl");
    let (_, rows) = run_plan(
        &plan,
        &jtl,
        &["-Jenv=nginx-run", "-Jthreads=2", "-Jloops=2"],
    );
    // nginx writes a request's line after its response has gone out, so
    // on a loaded machine the last line can land just after the client
    // has finished: wait for it (bounded) before nginx is stopped.
    let logged = || {
        std::fs::read_to_string(&log)
            .map(|text| text.lines().count())
            .unwrap_or(0)
    };
    let waited = Instant::now();
    while logged() < rows.len() && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(server);
    let shoppers: Vec<_> = rows
        .iter()
        .filter(|r| r["threadName"].starts_with("Shoppers"))
        .collect();
    assert_eq!(shoppers.len(), 2 * 2 * 2, "{rows:?}");
    assert!(
        shoppers
            .iter()
            .all(|r| r["success"] == "true" && r["responseCode"] == "200"),
        "{rows:?}"
    );
    let lines = std::fs::read_to_string(&log).unwrap();
    let posts: Vec<&str> = lines
        .lines()
        .filter(|l| l.starts_with("POST /login "))
        .collect();
    assert_eq!(posts.len(), 4, "{lines}");
    assert!(
        posts
            .iter()
            .all(|l| l.ends_with("|nginx-run|application/json")),
        "{lines}"
    );
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.starts_with("GET /echo?u="))
            .count(),
        4,
        "{lines}"
    );
    assert_eq!(
        lines.lines().count(),
        rows.len(),
        "one JTL line per request nginx logged"
    );
}

#[test]
fn a_setup_thread_group_runs_before_the_others() {
    let dir = temp_dir("jmeter-setup");
    let serve = Serve::start(&dir);
    let plan = edited_plan(&dir, "setup.jmx", |session| {
        session
            .replace(
                "<ThreadGroup guiclass=\"ThreadGroupGui\" testclass=\"ThreadGroup\" testname=\"Pollers\">",
                "<SetupThreadGroup guiclass=\"SetupThreadGroupGui\" testclass=\"SetupThreadGroup\" testname=\"Pollers\">",
            )
            .replacen(
                "</ThreadGroup>\n      <hashTree>\n        <UniformRandomTimer",
                "</SetupThreadGroup>\n      <hashTree>\n        <UniformRandomTimer",
                1,
            )
    });
    let port = format!("-Jport={}", serve.port);
    let (_, rows) = run_plan(&plan, &dir.join("setup.jtl"), &[&port]);
    let ends = |label: &str| {
        rows.iter()
            .filter(|r| r["label"] == label)
            .map(|r| r["timeStamp"].parse::<u64>().unwrap() + r["elapsed"].parse::<u64>().unwrap())
            .collect::<Vec<_>>()
    };
    let setup_done = ends("poll").into_iter().max().expect("the setUp group ran");
    let first_login = rows
        .iter()
        .filter(|r| r["label"] == "login")
        .map(|r| r["timeStamp"].parse::<u64>().unwrap())
        .min()
        .expect("the main group ran");
    assert!(
        setup_done <= first_login,
        "setUp ended at {setup_done}, login began at {first_login}"
    );
    drop(serve);
}

/// session.jmx with /me authenticated by the login's `sid` cookie instead
/// of the bearer token, with or without an HTTP Cookie Manager.
fn cookie_plan(dir: &Path, with_manager: bool) -> String {
    edited_plan(dir, &format!("cookies-{with_manager}.jmx"), |session| {
        let bearer = session.find("<HeaderManager guiclass=\"HeaderPanel\" testclass=\"HeaderManager\" testname=\"Bearer\">").unwrap();
        let after = bearer + session[bearer..].find("<hashTree/>").unwrap() + "<hashTree/>".len();
        let mut plan = format!("{}{}", &session[..bearer], &session[after..]);
        if with_manager {
            let manager = r#"<CookieManager guiclass="CookiePanel" testclass="CookieManager" testname="HTTP Cookie Manager">
          <collectionProp name="CookieManager.cookies"/>
          <boolProp name="CookieManager.clearEachIteration">false</boolProp>
        </CookieManager>
        <hashTree/>
        <CSVDataSet"#;
            plan = plan.replacen("<CSVDataSet", manager, 1);
        }
        plan
    })
}

#[test]
fn a_cookie_manager_keeps_each_users_cookies() {
    let dir = temp_dir("jmeter-cookies");
    let serve = Serve::start(&dir);
    let port = format!("-Jport={}", serve.port);
    let me_codes = |with_manager: bool| {
        let plan = cookie_plan(&dir, with_manager);
        let jtl = dir.join(format!("cookies-{with_manager}.jtl"));
        let (_, rows) = run_plan(&plan, &jtl, &[&port, "-Jduration=1"]);
        rows.into_iter()
            .filter(|r| r["label"] == "me")
            .map(|r| r["responseCode"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        me_codes(false),
        vec!["401"; 6],
        "no cookie sent without the manager"
    );
    assert_eq!(
        me_codes(true),
        vec!["200"; 6],
        "the login's sid cookie is sent back"
    );
    drop(serve);
}

#[test]
fn a_scheduler_delay_holds_the_group_back() {
    let dir = temp_dir("jmeter-delay");
    let serve = Serve::start(&dir);
    let plan = edited_plan(&dir, "delay.jmx", |session| {
        session.replace(
            "<stringProp name=\"ThreadGroup.delay\">0</stringProp>",
            "<stringProp name=\"ThreadGroup.delay\">1</stringProp>",
        )
    });
    let port = format!("-Jport={}", serve.port);
    let (stdout, rows) = run_plan(&plan, &dir.join("delay.jtl"), &[&port]);
    // "Starting the test @ 2026-12-01T14:20:04.402Z (1796134804402)"
    let started: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Starting the test @ "))
        .and_then(|l| {
            l.rsplit_once('(')
                .map(|(_, ms)| ms.trim_end_matches(')').to_string())
        })
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("no start line: {stdout}"));
    let first_poll = rows
        .iter()
        .filter(|r| r["label"] == "poll")
        .map(|r| r["timeStamp"].parse::<u64>().unwrap())
        .min()
        .expect("the delayed group ran");
    assert!(
        first_poll >= started + 1000,
        "started {started}, first poll {first_poll}"
    );
    drop(serve);
}

// A Constant Throughput Timer with a loop count sends exactly threads ×
// loops × samplers samples, paced by the timer. In JMeter the timer only
// delays each sample (src/components/src/main/java/org/apache/jmeter/
// timers/ConstantThroughputTimer.java, `delay()`: the wait until the
// thread's next scheduled time) while the thread group's loop controller
// counts the passes (src/core/src/main/java/org/apache/jmeter/control/
// LoopController.java, `next()`/`endOfLoop()`): 4 threads × 10 loops at
// 1000/min over all active threads (16.667/s) is 40 samples, in about
// 2.4 s. The count was once turned into a duration rounded up to whole
// seconds (3 s at 16.667/s: 50 samples, 25% more than the plan).
mod throughput_timer_loop_count {
    use stampede_testkit::{temp_dir, text};

    const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="counted"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Paced">
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">10</stringProp>
          <boolProp name="LoopController.continue_forever">false</boolProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">4</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
        <boolProp name="ThreadGroup.scheduler">false</boolProp>
      </ThreadGroup>
      <hashTree>
        <ConstantThroughputTimer guiclass="TestBeanGUI" testclass="ConstantThroughputTimer" testname="1000 per minute">
          <intProp name="calcMode">1</intProp>
          <doubleProp><name>throughput</name><value>1000.0</value><savedValue>0.0</savedValue></doubleProp>
        </ConstantThroughputTimer>
        <hashTree/>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="get">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">/</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
          <boolProp name="HTTPSampler.use_keepalive">true</boolProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

    #[test]
    fn a_loop_count_under_a_throughput_timer_is_a_count() {
        let (server, served) = crate::jmeter_runs::recording_server();
        let dir = temp_dir("jmeter-ctt-loop-count");
        let plan = crate::jmeter_runs::plan_file(&dir, "counted.jmx", PLAN);
        let port = format!("-Jport={}", server.addr().port());
        let started = std::time::Instant::now();
        let (out, rows) =
            crate::jmeter_runs::run_plan_output(&plan, &dir.join("counted.jtl"), &[&port]);
        let took = started.elapsed();
        let stderr = text(&out.stderr);
        assert_eq!(rows.len(), 40, "4 threads × 10 loops:\n{rows:?}");
        assert_eq!(served.lock().unwrap().len(), 40, "the server's count");
        // Paced by the timer: the 40th is due at 39/16.667 s = 2.34 s.
        assert!(
            took.as_secs_f64() >= 2.2,
            "40 samples at 16.667/s took {took:?}"
        );
        assert!(!stderr.contains("the group runs for"), "{stderr}");
    }
}

// Names resolve as JMeter resolves them: before the test starts,
// PreCompiler.java (`addNode` → ValueReplacer.replaceValues) replaces
// `${...}` in every element's properties, its name included, so a thread
// group named `${threadGroupName}` (a User Defined Variable of value
// `${__P(threadGroupName,Default)}`) run with `-JthreadGroupName=TG` has
// threads named `TG 1-1` (AbstractThreadGroup.java, `makeThread`: group
// name, group number, thread number + 1), and a sampler labelled
// `${__P(label,x)} ${page}` (a property, a User Defined Variable) is
// reported under the resolved label. `${__threadNum}` is the number after
// the last `-` of that thread name (ThreadNumber.java): 1 for the first
// thread, not 0.
mod resolved_names {
    use crate::jmeter_runs::support::jmeter;
    use stampede_testkit::{temp_dir, text, RawServer};
    use std::path::Path;

    const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="names">
      <elementProp name="TestPlan.user_defined_variables" elementType="Arguments" guiclass="ArgumentsPanel" testclass="Arguments" testname="User Defined Variables">
        <collectionProp name="Arguments.arguments">
          <elementProp name="threadGroupName" elementType="Argument">
            <stringProp name="Argument.name">threadGroupName</stringProp>
            <stringProp name="Argument.value">${__P(threadGroupName,Default)}</stringProp>
            <stringProp name="Argument.metadata">=</stringProp>
          </elementProp>
          <elementProp name="page" elementType="Argument">
            <stringProp name="Argument.name">page</stringProp>
            <stringProp name="Argument.value">home</stringProp>
            <stringProp name="Argument.metadata">=</stringProp>
          </elementProp>
        </collectionProp>
      </elementProp>
    </TestPlan>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="${threadGroupName}">
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">1</stringProp>
          <boolProp name="LoopController.continue_forever">false</boolProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="${__P(label,x)} ${page}">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">/thread/${__threadNum}</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

    /// `jmx` written as `plan` and run with the server's port and no JTL;
    /// its stderr.
    fn run_without_jtl(plan: &Path, jmx: &str, server: &RawServer) -> String {
        std::fs::write(plan, jmx).unwrap();
        let port = format!("-Jport={}", server.addr().port());
        let plan_arg = plan.display().to_string();
        let out = jmeter(&["-n", "-t", &plan_arg, &port]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        stderr
    }

    #[test]
    fn thread_group_and_sampler_names_resolve_and_thread_numbers_count_from_one() {
        let (server, lines) = crate::jmeter_runs::recording_server();
        let dir = temp_dir("jmeter-names");
        let plan = crate::jmeter_runs::plan_file(&dir, "names.jmx", PLAN);
        let jtl = dir.join("names.jtl");
        let port = format!("-Jport={}", server.addr().port());
        let words = [port.as_str(), "-JthreadGroupName=TG", "-Jlabel=GET"];
        let (out, samples) = crate::jmeter_runs::run_plan_output(&plan, &jtl, &words);
        let stderr = text(&out.stderr);
        let body = std::fs::read_to_string(&jtl).unwrap();
        assert_eq!(samples.len(), 1, "{body}");
        assert_eq!(samples[0]["threadName"], "TG 1-1", "{body}");
        assert_eq!(samples[0]["label"], "GET home", "{body}");
        assert!(!body.contains("${"), "{body}");
        assert!(!stderr.contains("${threadGroupName}"), "{stderr}");
        assert_eq!(*lines.lock().unwrap(), ["GET /thread/1 HTTP/1.1"]);
    }

    /// Each group's run is built in memory from the mapped scenario: no
    /// scenario file is written (and read back) on the way, so a temporary
    /// folder that cannot be written to changes nothing.
    #[test]
    fn a_run_writes_no_scenario_file() {
        let (server, lines) = crate::jmeter_runs::recording_server();
        let dir = temp_dir("jmeter-no-scenario-file");
        let plan = crate::jmeter_runs::plan_file(&dir, "names.jmx", PLAN);
        let jtl = dir.join("names.jtl").display().to_string();
        let port = format!("-Jport={}", server.addr().port());
        let out = std::process::Command::new(stampede_testkit::binary())
            .args(["jmeter", "-n", "-t", &plan, "-l", &jtl, &port])
            .env("TMPDIR", dir.join("no-such-folder"))
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(*lines.lock().unwrap(), ["GET /thread/1 HTTP/1.1"]);
    }

    /// A Counter per user from 0 by 1 (CounterConfig.iterationStart) and a
    /// Random Variable from 3 to 5 (RandomVariableConfig.iterationStart:
    /// minimum + nextInt(max - min + 1)) reach the server as {{iter}} and
    /// {{rand_int 3 5}}: three iterations of one user send n=0, 1, 2.
    #[test]
    fn counter_and_random_variable_values_reach_the_server() {
        let (server, lines) = crate::jmeter_runs::recording_server();
        let plan = temp_dir("jmeter-counter").join("counter.jmx");
        let configs = r#"<CounterConfig guiclass="CounterConfigGui" testclass="CounterConfig" testname="n">
          <stringProp name="CounterConfig.start">0</stringProp>
          <stringProp name="CounterConfig.end"></stringProp>
          <stringProp name="CounterConfig.incr">1</stringProp>
          <stringProp name="CounterConfig.name">n</stringProp>
          <stringProp name="CounterConfig.format"></stringProp>
          <boolProp name="CounterConfig.per_user">true</boolProp>
        </CounterConfig>
        <hashTree/>
        <RandomVariableConfig guiclass="TestBeanGUI" testclass="RandomVariableConfig" testname="r">
          <stringProp name="variableName">r</stringProp>
          <stringProp name="outputFormat"></stringProp>
          <stringProp name="minimumValue">3</stringProp>
          <stringProp name="maximumValue">5</stringProp>
          <stringProp name="randomSeed"></stringProp>
          <boolProp name="perThread">false</boolProp>
        </RandomVariableConfig>
        <hashTree/>
        <HTTPSamplerProxy"#;
        let jmx = PLAN
            .replacen("<HTTPSamplerProxy", configs, 1)
            .replace("/thread/${__threadNum}", "/c?n=${n}&amp;r=${r}")
            .replace(
                "<stringProp name=\"LoopController.loops\">1<",
                "<stringProp name=\"LoopController.loops\">3<",
            );
        run_without_jtl(&plan, &jmx, &server);
        let seen = lines.lock().unwrap().clone();
        assert_eq!(seen.len(), 3, "{seen:?}");
        for (i, line) in seen.iter().enumerate() {
            let prefix = format!("GET /c?n={i}&r=");
            let r = line
                .strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(" HTTP/1.1"))
                .unwrap_or_else(|| panic!("{line}"));
            assert!(["3", "4", "5"].contains(&r), "{line}");
        }
    }

    /// A Counter as real plans write it (start 1, incr 1, format `000`, per
    /// user) in a sampler's path, beside `${__counter(TRUE,)}` and
    /// `${__counter(FALSE,)}`: two users, three loops each. JMeter's
    /// values: CounterConfig.java, iterationStart (per user: the current
    /// value formatted by formatNumber's DecimalFormat, then `+ incr`) gives
    /// each user 001, 002, 003; IterationCounter.java, execute (per thread:
    /// `perThreadInt.get().addAndGet(1)`; else `globalCounter.addAndGet(1)`)
    /// gives each user 1, 2, 3 and the two users together 1 to 6.
    #[test]
    fn counters_send_jmeters_values() {
        let (server, lines) = crate::jmeter_runs::recording_server();
        let plan = temp_dir("jmeter-counters").join("counters.jmx");
        let counter = r#"<CounterConfig guiclass="CounterConfigGui" testclass="CounterConfig" testname="Item counter">
          <stringProp name="CounterConfig.start">1</stringProp>
          <stringProp name="CounterConfig.end"></stringProp>
          <stringProp name="CounterConfig.incr">1</stringProp>
          <stringProp name="CounterConfig.name">item</stringProp>
          <stringProp name="CounterConfig.format">000</stringProp>
          <boolProp name="CounterConfig.per_user">true</boolProp>
          <boolProp name="CounterConfig.reset_on_tg_iteration">false</boolProp>
        </CounterConfig>
        <hashTree/>
        <HTTPSamplerProxy"#;
        let jmx = PLAN
            .replacen("<HTTPSamplerProxy", counter, 1)
            .replace(
                "/thread/${__threadNum}",
                "/u${__threadNum}/item/${item}?c=${__counter(TRUE,)}&amp;g=${__counter(FALSE,)}",
            )
            .replace(
                "<stringProp name=\"LoopController.loops\">1<",
                "<stringProp name=\"LoopController.loops\">3<",
            )
            .replace(
                "<stringProp name=\"ThreadGroup.num_threads\">1<",
                "<stringProp name=\"ThreadGroup.num_threads\">2<",
            );
        run_without_jtl(&plan, &jmx, &server);
        let seen = lines.lock().unwrap().clone();
        assert_eq!(seen.len(), 6, "{seen:?}");
        let mut shared = Vec::new();
        for user in ["/u1/", "/u2/"] {
            let own: Vec<&str> = seen
                .iter()
                .filter_map(|line| line.strip_prefix("GET "))
                .filter_map(|line| line.strip_suffix(" HTTP/1.1"))
                .filter(|path| path.starts_with(user))
                .collect();
            let (per_user, global): (Vec<String>, Vec<&str>) = own
                .iter()
                .map(|path| {
                    let (start, g) = path.split_once("&g=").unwrap();
                    (start.to_string(), g)
                })
                .unzip();
            let expected: Vec<String> =
                (1..=3).map(|i| format!("{user}item/00{i}?c={i}")).collect();
            assert_eq!(per_user, expected, "{seen:?}");
            shared.extend(global.iter().map(|g| g.parse::<u32>().unwrap()));
        }
        shared.sort_unstable();
        assert_eq!(shared, [1, 2, 3, 4, 5, 6], "{seen:?}");
    }

    /// DNSCacheManager.resolve: a static host's addresses are used for it
    /// (fromStaticHost), so the plan's `api.test` reaches the loopback
    /// server through the `--resolve` it maps to.
    #[test]
    fn a_dns_cache_managers_static_host_is_resolved_as_listed() {
        let (server, lines) = crate::jmeter_runs::recording_server();
        let plan = temp_dir("jmeter-dns").join("dns.jmx");
        let manager = r#"<DNSCacheManager guiclass="DNSCachePanel" testclass="DNSCacheManager" testname="dns">
          <collectionProp name="DNSCacheManager.servers"/>
          <collectionProp name="DNSCacheManager.hosts">
            <elementProp name="api.test" elementType="StaticHost">
              <stringProp name="StaticHost.Name">api.test</stringProp>
              <stringProp name="StaticHost.Address">127.0.0.1</stringProp>
            </elementProp>
          </collectionProp>
          <boolProp name="DNSCacheManager.clearEachIteration">false</boolProp>
          <boolProp name="DNSCacheManager.isCustomResolver">true</boolProp>
        </DNSCacheManager>
        <hashTree/>
        <HTTPSamplerProxy"#;
        let jmx = PLAN.replacen("<HTTPSamplerProxy", manager, 1).replace(
            "<stringProp name=\"HTTPSampler.domain\">127.0.0.1<",
            "<stringProp name=\"HTTPSampler.domain\">api.test<",
        );
        assert!(jmx.contains("api.test<"), "the plan names api.test");
        let stderr = run_without_jtl(&plan, &jmx, &server);
        assert!(
            stderr.contains("its static hosts are run as --resolve api.test:"),
            "{stderr}"
        );
        assert_eq!(*lines.lock().unwrap(), ["GET /thread/1 HTTP/1.1"]);
    }
}

/// A one-user plan: `first` (under its own header manager and
/// `extractors`) then `second` (GET `second_path`), both to /echo.
fn two_step_plan(header: &str, extractors: &str, second_path: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="Extract plan"/>
    <hashTree>
      <ConfigTestElement guiclass="HttpDefaultsGui" testclass="ConfigTestElement" testname="HTTP Request Defaults">
        <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
        <stringProp name="HTTPSampler.port">${{__P(port)}}</stringProp>
        <stringProp name="HTTPSampler.protocol">http</stringProp>
      </ConfigTestElement>
      <hashTree/>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="TG">
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">1</stringProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="first">
          <stringProp name="HTTPSampler.path">/echo</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree>
          <HeaderManager guiclass="HeaderPanel" testclass="HeaderManager" testname="data">
            <collectionProp name="HeaderManager.headers">
              <elementProp name="" elementType="Header">
                <stringProp name="Header.name">X-Data</stringProp>
                <stringProp name="Header.value">{header}</stringProp>
              </elementProp>
            </collectionProp>
          </HeaderManager>
          <hashTree/>
          {extractors}
        </hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="second">
          <stringProp name="HTTPSampler.path">{second_path}</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#
    )
}

/// The second request carries what the first response held, taken as
/// JMeter takes it: RegexExtractor.java (match number 2, template
/// `$2$-$1$`, the default when nothing matches) and BoundaryExtractor.java
/// (extract: the next left boundary is searched from just after the last
/// one, so `[x[y]z]`'s second match is `y`) and HtmlExtractor.java with
/// JSoupExtractor.java (the second `a.n`'s href).
#[test]
fn extracted_values_reach_the_second_request_as_jmeter_takes_them() {
    let dir = temp_dir("jmeter-extract");
    let serve = Serve::start(&dir);
    let extractors = r#"
          <RegexExtractor guiclass="RegexExtractorGui" testclass="RegexExtractor" testname="ids">
            <stringProp name="RegexExtractor.useHeaders">false</stringProp>
            <stringProp name="RegexExtractor.refname">re</stringProp>
            <stringProp name="RegexExtractor.regex">id=(\d+):(\w+)</stringProp>
            <stringProp name="RegexExtractor.template">$2$-$1$</stringProp>
            <stringProp name="RegexExtractor.default">none</stringProp>
            <stringProp name="RegexExtractor.match_number">2</stringProp>
          </RegexExtractor>
          <hashTree/>
          <RegexExtractor guiclass="RegexExtractorGui" testclass="RegexExtractor" testname="absent">
            <stringProp name="RegexExtractor.useHeaders">false</stringProp>
            <stringProp name="RegexExtractor.refname">gone</stringProp>
            <stringProp name="RegexExtractor.regex">nothing=(\d+)</stringProp>
            <stringProp name="RegexExtractor.template">$1$</stringProp>
            <stringProp name="RegexExtractor.default">NONE</stringProp>
            <stringProp name="RegexExtractor.match_number">1</stringProp>
          </RegexExtractor>
          <hashTree/>
          <BoundaryExtractor guiclass="BoundaryExtractorGui" testclass="BoundaryExtractor" testname="brackets">
            <stringProp name="BoundaryExtractor.useHeaders">false</stringProp>
            <stringProp name="BoundaryExtractor.refname">bd</stringProp>
            <stringProp name="BoundaryExtractor.lboundary">[</stringProp>
            <stringProp name="BoundaryExtractor.rboundary">]</stringProp>
            <stringProp name="BoundaryExtractor.match_number">2</stringProp>
          </BoundaryExtractor>
          <hashTree/>
          <BoundaryExtractor guiclass="BoundaryExtractorGui" testclass="BoundaryExtractor" testname="sid">
            <stringProp name="BoundaryExtractor.useHeaders">false</stringProp>
            <stringProp name="BoundaryExtractor.refname">sid</stringProp>
            <stringProp name="BoundaryExtractor.lboundary">sid=&quot;</stringProp>
            <stringProp name="BoundaryExtractor.rboundary">&quot;</stringProp>
            <stringProp name="BoundaryExtractor.match_number">2</stringProp>
          </BoundaryExtractor>
          <hashTree/>
          <HtmlExtractor guiclass="HtmlExtractorGui" testclass="HtmlExtractor" testname="link">
            <stringProp name="HtmlExtractor.refname">next</stringProp>
            <stringProp name="HtmlExtractor.expr">a.n</stringProp>
            <stringProp name="HtmlExtractor.attribute">href</stringProp>
            <stringProp name="HtmlExtractor.default"></stringProp>
            <stringProp name="HtmlExtractor.match_number">2</stringProp>
            <stringProp name="HtmlExtractor.extractor_impl"></stringProp>
          </HtmlExtractor>
          <hashTree/>"#;
    let plan = dir.join("extract.jmx");
    std::fs::write(
        &plan,
        two_step_plan(
            "id=11:aa id=22:bb [x[y]z] sid=&quot;S1&quot; sid=&quot;S2&quot; \
             &lt;a class=&quot;n&quot; href=&quot;/p1&quot;&gt;one&lt;/a&gt;\
             &lt;a class=&quot;n&quot; href=&quot;/p2&quot;&gt;two&lt;/a&gt;",
            extractors,
            "/echo?r=${re}&amp;b=${bd}&amp;s=${sid}&amp;d=${gone}&amp;c=${next}",
        ),
    )
    .unwrap();
    let port = format!("-Jport={}", serve.port);
    let (stdout, rows) = run_plan(&plan.display().to_string(), &dir.join("x.jtl"), &[&port]);
    assert_eq!(rows.len(), 2, "{stdout}");
    let requests = serve.requests();
    assert_eq!(
        requests.last().map(String::as_str),
        Some("GET /echo?r=bb-22&b=y&s=S2&d=NONE&c=/p2 HTTP/1.1"),
        "{requests:?}"
    );
}

// A Synchronizing Timer gathers its thread group's threads and releases
// them together (src/components/src/main/java/org/apache/jmeter/timers/
// SyncTimer.java, `delay()`: a CyclicBarrier of `groupSize` parties that
// every thread awaits before the sampler, reset for the next batch). 10
// threads ramped up over 1 s with groupSize 5 send in two batches of 5,
// each within a few milliseconds, where the ramp-up alone would spread
// the 10 requests 100 ms apart; the JSON result gives each batch's spread.
mod synchronizing_timer {
    use stampede_testkit::temp_dir;
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="rendezvous"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Buyers">
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">1</stringProp>
          <boolProp name="LoopController.continue_forever">false</boolProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">10</stringProp>
        <stringProp name="ThreadGroup.ramp_time">1</stringProp>
        <boolProp name="ThreadGroup.scheduler">false</boolProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="buy">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">/buy</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
          <boolProp name="HTTPSampler.use_keepalive">true</boolProp>
        </HTTPSamplerProxy>
        <hashTree>
          <SyncTimer guiclass="TestBeanGUI" testclass="SyncTimer" testname="rendezvous 5">
            <intProp name="groupSize">5</intProp>
            <longProp name="timeoutInMs">0</longProp>
          </SyncTimer>
          <hashTree/>
        </hashTree>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

    /// A server answering `200 ok` that keeps when each request arrived.
    fn timing_server() -> (stampede_testkit::RawServer, Arc<Mutex<Vec<Instant>>>) {
        let times = Arc::new(Mutex::new(Vec::new()));
        let seen = times.clone();
        let server = stampede_testkit::RawServer::start(move |mut stream| {
            while stampede_testkit::read_request_line(&mut stream).is_some() {
                seen.lock().unwrap().push(Instant::now());
                let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                if stream.write_all(reply).is_err() {
                    return;
                }
            }
        });
        (server, times)
    }

    #[test]
    fn ten_ramped_threads_send_in_two_batches_of_five() {
        let (server, times) = timing_server();
        let dir = temp_dir("jmeter-sync-timer");
        let plan = crate::jmeter_runs::plan_file(&dir, "rendezvous.jmx", PLAN);
        let port = format!("-Jport={}", server.addr().port());
        let json = dir.join("result.json").display().to_string();
        let args = [port.as_str(), "--stampede-json", &json];
        let (stdout, rows) =
            crate::jmeter_runs::run_plan(&plan, &dir.join("rendezvous.jtl"), &args);
        assert_eq!(rows.len(), 10, "{rows:?}");
        let mut times = times.lock().unwrap().clone();
        times.sort();
        assert_eq!(times.len(), 10, "the server's count");
        let spread = |batch: &[Instant]| batch[batch.len() - 1] - batch[0];
        let (first, second) = times.split_at(5);
        // Ramped 100 ms apart, the 5 threads of a batch arrive over 400 ms:
        // released together they send within a few ms (loose for CI).
        for batch in [first, second] {
            assert!(
                spread(batch) < Duration::from_millis(100),
                "a batch sent over {:?}: {times:?}",
                spread(batch)
            );
        }
        let gap = second[0] - first[4];
        assert!(
            gap >= Duration::from_millis(300),
            "the second batch waits for its last thread's start: {gap:?}"
        );
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let point = &result["rendezvous"][0];
        assert_eq!(point["step"], "buy", "{result}");
        assert_eq!(
            (point["users"].as_u64(), point["batches"].as_u64()),
            (Some(5), Some(2))
        );
        assert_eq!(point["timed_out"].as_u64(), Some(0));
        let sizes =
            |p: &serde_json::Value| [&p["sent"], &p["smallest"], &p["largest"]].map(|v| v.as_u64());
        assert_eq!(sizes(point), [Some(10), Some(5), Some(5)], "{result}");
        let max_us = point["spread_us"]["max"].as_u64().expect("a spread");
        assert!(max_us < 100_000, "spread max {max_us} us");
        assert!(
            stdout.contains("Synchronizing Timer Buyers / step buy: 2 batches of 5"),
            "{stdout}"
        );
    }

    /// groupSize 4 of 10 threads: two batches of 4, then the last 2 threads
    /// go when the 8 others have finished (in JMeter they would wait for
    /// good: docs/compat.md). The summary and the JSON give what was
    /// released, not only the 4 asked.
    #[test]
    fn batches_smaller_than_asked_are_reported_as_released() {
        let (server, times) = timing_server();
        let dir = temp_dir("jmeter-sync-timer-uneven");
        let plan = PLAN.replace(
            r#"<intProp name="groupSize">5</intProp>"#,
            r#"<intProp name="groupSize">4</intProp>"#,
        );
        let plan = crate::jmeter_runs::plan_file(&dir, "rendezvous.jmx", &plan);
        let port = format!("-Jport={}", server.addr().port());
        let json = dir.join("result.json").display().to_string();
        let args = [port.as_str(), "--stampede-json", &json];
        let (stdout, rows) =
            crate::jmeter_runs::run_plan(&plan, &dir.join("rendezvous.jtl"), &args);
        assert_eq!((rows.len(), times.lock().unwrap().len()), (10, 10));
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let point = &result["rendezvous"][0];
        let figures = [
            &point["users"],
            &point["batches"],
            &point["sent"],
            &point["smallest"],
            &point["largest"],
        ]
        .map(|v| v.as_u64());
        assert_eq!(figures, [4, 3, 10, 2, 4].map(Some), "{result}");
        assert!(
            stdout.contains("step buy: 3 batches of 2 to 4 users, 4 asked (10 sent), send spread"),
            "{stdout}"
        );
    }

    // JMeter releases the threads waiting at a SyncTimer when the test
    // ends (testEnded: the barrier is made anew; stopping threads
    // interrupts their await). Threads that loop for the scheduler's 2 s
    // behind a random timer are left waiting at a groupSize 0 barrier (all
    // 3 threads) when the time is up: the run ends on time all the same,
    // and what the held threads never sent is not in the JTL.
    #[test]
    fn threads_held_at_the_end_of_the_run_do_not_hold_it_up() {
        let (server, times) = timing_server();
        let dir = temp_dir("jmeter-sync-timer-end");
        let plan = PLAN
            .replace(
                r#"<stringProp name="LoopController.loops">1</stringProp>"#,
                r#"<stringProp name="LoopController.loops">-1</stringProp>"#,
            )
            .replace(
                r#"<stringProp name="ThreadGroup.num_threads">10</stringProp>"#,
                r#"<stringProp name="ThreadGroup.num_threads">3</stringProp>"#,
            )
            .replace(
                r#"<boolProp name="ThreadGroup.scheduler">false</boolProp>"#,
                r#"<boolProp name="ThreadGroup.scheduler">true</boolProp>
        <stringProp name="ThreadGroup.duration">2</stringProp>
        <stringProp name="ThreadGroup.delay">0</stringProp>"#,
            )
            .replace(
                r#"<intProp name="groupSize">5</intProp>"#,
                r#"<intProp name="groupSize">0</intProp>"#,
            )
            .replace("rendezvous 5", "rendezvous of all")
            .replace(
                "<hashTree/>
        </hashTree>",
                r#"<hashTree/>
          <UniformRandomTimer guiclass="UniformRandomTimerGui" testclass="UniformRandomTimer" testname="0 to 1.5 s">
            <stringProp name="ConstantTimer.delay">0</stringProp>
            <stringProp name="RandomTimer.range">1500</stringProp>
          </UniformRandomTimer>
          <hashTree/>
        </hashTree>"#,
            );
        assert!(
            plan.contains("UniformRandomTimer")
                && plan.contains("<stringProp name=\"ThreadGroup.duration\">2")
        );
        let plan = crate::jmeter_runs::plan_file(&dir, "held.jmx", &plan);
        let port = format!("-Jport={}", server.addr().port());
        let json = dir.join("result.json").display().to_string();
        let args = [port.as_str(), "--stampede-json", &json];
        let started = Instant::now();
        let (_, rows) = crate::jmeter_runs::run_plan(&plan, &dir.join("held.jtl"), &args);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(8), "the run took {took:?}");
        let served = times.lock().unwrap().len();
        assert!(
            served >= 3,
            "at least the first batch of 3 was sent: {served}"
        );
        // A batch released at the very end may be cut: what ended after the
        // deadline is not in the JTL, as in JMeter.
        assert!(rows.len() <= served, "{} rows, {served} served", rows.len());
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let point = &result["rendezvous"][0];
        assert_eq!(
            point["users"].as_u64(),
            Some(3),
            "groupSize 0: every thread"
        );
        let batches = point["batches"].as_u64().expect("batches") as usize;
        assert!(
            (1..=served.div_ceil(3)).contains(&batches),
            "{batches} for {served}: {result}"
        );
    }
}
