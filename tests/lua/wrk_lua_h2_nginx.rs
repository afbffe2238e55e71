//! A wrk script over HTTP/2 as a real server sees it: nginx, serving h2c
//! (prior knowledge), logs each request's protocol, method, URI, the
//! script's `X-Counter` header, so the log shows every
//! request `request()` returned (two per call, pipelined over HTTP/1.1)
//! arriving as an HTTP/2 stream of its own, in the script's order.

use stampede_testkit::nginx as nginx_support;

use stampede_testkit::wrk_scripts as support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{binary, free_port, require_tool, temp_dir};
use support::script;

#[test]
fn nginx_logs_each_scripted_request_as_an_http2_stream() {
    let program = require_tool!("nginx");
    let dir = temp_dir("wrk-lua-h2-nginx");
    let port = free_port();
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{port} http2")],
        log_format: "$server_protocol $request_method $request_uri $http_x_counter",
        http_extra: "",
        netns: None,
    };
    let addr = format!("127.0.0.1:{port}");
    let nginx = Nginx::start(&program, &dir, &setup, || listening(&addr));
    let file = script(
        "h2-nginx.lua",
        r#"counter = 0
request = function()
   counter = counter + 1
   wrk.headers["X-Counter"] = counter
   return wrk.format(nil, "/get?" .. counter)
       .. wrk.format("POST", "/post?" .. counter, nil, "twelve bytes")
end
"#,
    );
    let url = format!("http://{addr}/");
    let (code, _, stderr) = support::run(
        binary(),
        &[
            "run",
            &url,
            "--http2",
            "-c",
            "1",
            "-t",
            "1",
            "-n",
            "20",
            "--script",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let lines = nginx.take_lines();
    assert_eq!(lines.len(), 20, "-n 20: 10 calls × 2 requests: {lines:?}");
    for (k, pair) in lines.chunks(2).enumerate() {
        let k = k + 1;
        assert_eq!(
            pair[0][..4],
            ["HTTP/2.0", "GET", &format!("/get?{k}"), &k.to_string()]
        );
        assert_eq!(
            pair[1][..4],
            ["HTTP/2.0", "POST", &format!("/post?{k}"), &k.to_string()]
        );
    }
}
