//! wrk scripts over HTTP/2 (`stampede run --http2 --script`): the bytes
//! `request()` returns are read as HTTP/1.1 requests and each is sent as a
//! stream of its own; `response()` sees every response, its header names
//! found as wrk scripts write them (HTTP/2 sends them in lowercase); what
//! the built-in target served (its access log) is what the script asked
//! for. `--http3` with a script is still refused in one line that names
//! the script, before the script runs or anything connects.

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, read_json, temp_dir};
use std::net::TcpListener;
use support::{lines_with, per_path, script, LoggedTarget};

/// `stampede run URL --http2 ARGS --script FILE`, asserted to exit 0: its stdout.
fn run_h2(url: &str, args: &[&str], file: &std::path::Path) -> String {
    let mut words = vec!["run", url, "--http2", "-t", "1"];
    words.extend(args);
    words.extend(["--script", file.to_str().unwrap()]);
    let (code, stdout, stderr) = support::run(binary(), &words);
    assert_eq!(code, Some(0), "{words:?}: {stderr}");
    stdout
}

#[test]
fn a_pipelining_counter_script_sends_each_request_as_a_stream() {
    // The closed model, and the open one (each arrival one call of
    // request(), its batch sent on the arrival's stream slot).
    for model in [&[][..], &["-r", "200"][..]] {
        pipelining_counter_script(model);
    }
}

fn pipelining_counter_script(model: &[&str]) {
    let target = LoggedTarget::start();
    let file = script(
        "h2-pipeline.lua",
        r#"counter = 0
request = function()
   counter = counter + 1
   wrk.headers["X-Counter"] = counter
   local r = {}
   r[1] = wrk.format(nil, "/json?" .. counter)
   r[2] = wrk.format("POST", "/json?b" .. counter, nil, "body-" .. counter)
   r[3] = wrk.format(nil, "/?" .. counter)
   return table.concat(r)
end
"#,
    );
    let json = temp_dir("wrk-lua-h2").join("r.json");
    let url = target.url("/");
    let mut args = vec![
        "-c",
        "1",
        "--streams",
        "1",
        "-n",
        "60",
        "--json",
        json.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(model);
    run_h2(&url, &args, &file);
    let log = std::fs::read_to_string(&target.log).unwrap();
    let served = target.served();
    assert_eq!(served.len(), 60, "{model:?}: -n 60, exactly: {served:?}");
    assert!(
        log.lines().all(|l| l.contains("HTTP/2.0")),
        "every request came over HTTP/2: {log}"
    );
    // Each call's batch, in the script's order, one stream at a time. In
    // the open model arrivals waiting in the backlog have claimed their
    // request from -n already, so a late batch may be cut to what is left
    // (count_batch, as over HTTP/1.1): its first requests, still in order.
    let sent: Vec<String> = served.iter().map(|(m, p, _)| format!("{m} {p}")).collect();
    let mut at = 0;
    let mut k = 0;
    while at < sent.len() {
        k += 1;
        let whole = [
            format!("GET /json?{k}"),
            format!("POST /json?b{k}"),
            format!("GET /?{k}"),
        ];
        let mut taken = 0;
        while taken < 3 && sent.get(at + taken) == Some(&whole[taken]) {
            taken += 1;
        }
        let complete = model.is_empty();
        assert!(
            taken == 3 || (!complete && taken >= 1),
            "{model:?}: call {k}'s batch, in the script's order: {:?}",
            &sent[at..sent.len().min(at + 3)]
        );
        at += taken;
    }
    let result = read_json(&json);
    assert_eq!(
        result["requests"]["completed"].as_u64(),
        Some(60),
        "{result}"
    );
    assert_eq!(result["requests"]["errors"].as_u64(), Some(0), "{result}");
}

#[test]
fn a_login_token_taken_from_a_header_is_sent_on_later_streams() {
    let target = LoggedTarget::start();
    // wrk's auth.lua style: the header's name as a wrk script writes it,
    // though HTTP/2 delivers `set-cookie`.
    let file = support::auth_script("h2-auth.lua", 25);
    let url = target.url("/");
    let stdout = run_h2(&url, &["-c", "1", "--streams", "1", "-d", "10s"], &file);
    assert!(
        stdout.contains("login 200 {\"token\":\"tok-"),
        "response() saw the body: {stdout}"
    );
    assert_eq!(lines_with(&stdout, "me 200").len(), 1, "{stdout}");
    let served = target.served();
    assert_eq!(served[0].1, "/login", "{served:?}");
    let me: Vec<_> = served.iter().filter(|(_, p, _)| p == "/me").collect();
    assert_eq!(me.len(), 25, "thread:stop() after 25: {served:?}");
    assert!(
        me.iter().all(|(_, _, status)| *status == 200),
        "the cookie was sent: {me:?}"
    );
}

#[test]
fn response_counts_match_what_the_server_served_over_many_streams() {
    let target = LoggedTarget::start();
    let counting = script(
        "h2-count-print.lua",
        r#"local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) responses = 0 end
function response(status) if status == 200 then responses = responses + 1 end end
function done(summary)
   local total = 0
   for _, t in ipairs(threads) do total = total + t:get("responses") end
   print(("responses %d requests %d"):format(total, summary.requests))
end
"#,
    );
    let url = target.url("/");
    let stdout = run_h2(
        &url,
        &["-t", "2", "-c", "2", "--streams", "4", "-n", "400", "-q"],
        &counting,
    );
    let served = per_path(&target.served());
    assert_eq!(served.get("/").copied(), Some(400), "{served:?}");
    assert!(
        stdout.contains("responses 400 requests 400"),
        "response() saw every stream's answer: {stdout}"
    );
}

#[test]
fn http3_with_a_script_is_refused_in_one_line_naming_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let file = script(
        "h3.lua",
        "print('top level ran')\nfunction request() return wrk.format() end\n",
    );
    let file = file.to_str().unwrap();
    let url = format!("https://{addr}/");
    let (code, stdout, stderr) = support::run(
        binary(),
        &["run", &url, "-d", "1s", "--http3", "--script", file],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "--script {file}: HTTP/3 scripts are not supported yet"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("drop --http3"), "{stderr}");
    assert!(!stdout.contains("top level ran"), "{stdout}");
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(listener.accept().is_err(), "nothing connected");
}
