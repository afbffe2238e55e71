//! Defects of the HTTP/2 path a new user's trial found, end to end against
//! the built-in target (and nginx); a `delay()` of 0 being no pause is
//! workload/session.rs's table test (a timed run here would be a timed
//! assertion). A graceful GOAWAY (the server closing
//! an idle connection, nginx's `keepalive_requests`) is neither an error
//! nor lost — a request the server never processed goes again, once, on a
//! new connection, which counts as a reconnect; and a script's request
//! line in absolute form, `OPTIONS *` and `CONNECT` reach HTTP/2 as what
//! they mean (or are refused in one clear error).

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{
    binary, free_port, one_thread, read_json, require_tool, run_ok, spawn_target, temp_dir, Run,
    TargetConfig,
};
use std::time::Duration;
use support::{script, LoggedTarget};

/// `stampede run URL --http2 -t 1 ARGS --script FILE` (with `--json`), exit 0.
fn run_script(url: &str, args: &[&str], file: &std::path::Path) -> Run {
    let mut words = vec!["run", url, "--http2", "-t", "1"];
    words.extend(args);
    words.extend(["--script", file.to_str().unwrap()]);
    run_ok(&words)
}

#[test]
fn a_script_request_line_keeps_its_form_over_http2() {
    let target = LoggedTarget::start();
    let file = script(
        "h2-forms.lua",
        r#"n = 0
request = function()
   n = n + 1
   if n % 3 == 1 then return wrk.format(nil, "http://abs.example/echo?abs") end
   if n % 3 == 2 then return wrk.format("OPTIONS", "*") end
   return wrk.format("CONNECT", "abs.example:443")
end
"#,
    );
    let json = temp_dir("h2-forms").join("r.json");
    let words = [
        "run",
        &target.url("/"),
        "--http2",
        "-t",
        "1",
        "-c",
        "1",
        "--streams",
        "1",
        "-n",
        "6",
        "--script",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = support::run(binary(), &words);
    assert_eq!(code, Some(0), "{stderr}");
    let served = target.served();
    let lines: Vec<String> = served.iter().map(|(m, p, _)| format!("{m} {p}")).collect();
    assert_eq!(
        lines,
        ["GET /echo?abs", "OPTIONS *", "GET /echo?abs", "OPTIONS *"],
        "absolute form as its path, OPTIONS * as *, CONNECT never sent"
    );
    let result = read_json(&json);
    assert_eq!(result["requests"]["sent"], 6);
    assert_eq!(
        result["errors"],
        serde_json::json!({"other": 2}),
        "the two CONNECTs"
    );
    assert!(
        stdout.contains("other: HTTP/2 request: CONNECT is not supported over HTTP/2 scripts"),
        "{stdout}"
    );
}

/// The built-in target closing connections idle for 200 ms (a GOAWAY with
/// NO_ERROR, then the close), and users who pause 400 ms between requests:
/// each request after the first finds its connection gone.
#[test]
fn an_idle_close_is_a_reconnect_not_an_error() {
    let log = temp_dir("h2-idle-close").join("access.log");
    let server = spawn_target(TargetConfig {
        access_log: Some(stampede_target::AccessLogDest::File(log.clone())),
        idle_timeout: Duration::from_millis(200),
        ..one_thread()
    });
    let url = format!("http://{}/", server.local_addr());
    let file = script("h2-delay-400.lua", "function delay() return 400 end\n");
    let run = run_script(&url, &["-c", "2", "-n", "8"], &file);
    server.shutdown().unwrap();
    let served = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(
        run.count("/requests/sent"),
        8,
        "a retried request is one request"
    );
    assert_eq!(
        run.count("/requests/success"),
        8,
        "{}",
        run.result()["errors"]
    );
    assert_eq!(run.count("/requests/errors"), 0);
    assert_eq!(served, 8, "the server processed each request once");
    assert!(
        run.count("/connections/reconnects") >= 4,
        "{}",
        run.result()["connections"]
    );
}

/// nginx over h2c closing each connection after 5 requests
/// (`keepalive_requests`): its GOAWAY refuses the streams already sent
/// past the fifth; they go again on the next connection.
#[test]
fn nginx_keepalive_requests_goaway_is_no_error() {
    let program = require_tool!("nginx");
    let dir = temp_dir("h2-goaway-nginx");
    let h2c = free_port();
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{h2c} http2")],
        log_format: "$connection $connection_requests",
        http_extra: "keepalive_requests 5;",
        netns: None,
    };
    let nginx = Nginx::start(&program, &dir, &setup, || {
        listening(&format!("127.0.0.1:{h2c}"))
    });
    let url = format!("http://127.0.0.1:{h2c}/");
    for (streams, script_file) in [
        ("3", None),
        (
            "3",
            Some(script("h2-nginx.lua", "function init(args) end\n")),
        ),
        // Batches of three (a script's pipelined requests, each a stream):
        // a batch cut by the GOAWAY goes on from its first unprocessed
        // request on the next connection.
        (
            "1",
            Some(script(
                "h2-nginx-batch.lua",
                "request = function()\n   return wrk.format(nil, \"/a\") .. wrk.format(nil, \"/b\") .. wrk.format(nil, \"/c\")\nend\n",
            )),
        ),
    ] {
        let mut words = vec!["run", &url, "--http2", "-t", "1", "-c", "2"];
        words.extend(["--streams", streams, "-n", "120"]);
        if let Some(file) = &script_file {
            words.extend(["--script", file.to_str().unwrap()]);
        }
        let run = run_ok(&words);
        let what = format!("--streams {streams}, script: {script_file:?}");
        let logged = nginx.take_lines().len();
        assert_eq!(run.count("/requests/sent"), 120, "{what}");
        assert_eq!(
            run.count("/requests/errors"),
            0,
            "{what}: {}",
            run.result()["errors"]
        );
        assert_eq!(logged, 120, "{what}: nginx served each request once");
        assert!(
            run.count("/connections/reconnects") >= 20,
            "{what}: {}",
            run.result()["connections"]
        );
    }
}
