//! What a server receives from a plan shaped like a real one
//! (crates/stampede-jmeter/testdata/items.jmx): a PUT whose body is one
//! unnamed JSON argument, a GET with an encoded query argument and a POST
//! form, their paths `${path}` from a CSV whose rows are `/p1` and `p2`.
//! nginx logs each request's line, Content-Type and body. The expected
//! requests are JMeter 5.6's, read in apache/jmeter's
//! src/protocol/http/src/main/java/org/apache/jmeter/protocol/http/sampler/:
//! HTTPSamplerBase.java (getUrl: a `/` only before a path without one;
//! getQueryString; getSendParameterValuesAsPostBody: unnamed values are
//! the body as they are) and HTTPHC4Impl.java
//! (setupHttpEntityEnclosingRequestData: the body and its HttpClient
//! Content-Type).

use stampede_testkit::jmeter as support;

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{free_port, require_tool, temp_dir, text};
use support::{jmeter, testdata};

/// nginx's default log escaping (`"` is `\x22`) undone.
fn unescape(logged: &str) -> String {
    let mut out = Vec::new();
    let bytes = logged.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let hex = logged
            .get(i + 2..i + 4)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(byte) if bytes[i] == b'\\' && bytes[i + 1] == b'x' => {
                out.push(byte);
                i += 4;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn a_csv_fed_plan_sends_the_paths_and_bodies_jmeter_sends() {
    let program = require_tool!("nginx");
    let dir = temp_dir("jmeter-request-bodies");
    // The front server reads each body (it proxies) so that
    // $request_body is logged; the back one answers.
    let (front, back) = (free_port(), free_port());
    let extra = format!(
        "server {{ listen 127.0.0.1:{front}; location / {{ proxy_pass http://127.0.0.1:{back}; }} }}"
    );
    let nginx = Nginx::start(
        &program,
        &dir,
        &Setup {
            listens: vec![format!("127.0.0.1:{back}")],
            log_format: "$server_port|$request|$content_type|$request_body",
            http_extra: &extra,
            netns: None,
        },
        || listening(&format!("127.0.0.1:{front}")) && listening(&format!("127.0.0.1:{back}")),
    );
    std::fs::copy(testdata("items.jmx"), dir.join("items.jmx")).unwrap();
    std::fs::copy(testdata("items.csv"), dir.join("items.csv")).unwrap();
    let plan = dir.join("items.jmx").display().to_string();
    let jtl = dir.join("items.jtl").display().to_string();
    let port = format!("-Jport={front}");
    let out = jmeter(&["-n", "-t", &plan, "-l", &jtl, &port]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // nginx writes a line after its response: wait (bounded) for all six.
    let front_lines = || -> Vec<String> {
        std::fs::read_to_string(&nginx.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("{front}|")).map(unescape))
            .collect()
    };
    let waited = std::time::Instant::now();
    while front_lines().len() < 6 && waited.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let json = "text/plain; charset=UTF-8";
    let form = "application/x-www-form-urlencoded; charset=UTF-8";
    assert_eq!(
        front_lines(),
        [
            format!("PUT /p1 HTTP/1.1|{json}|{{\"name\": \"widget\", \"qty\": 2}}"),
            "GET /p1?q=widget+%26+co HTTP/1.1|-|-".to_string(),
            format!("POST /items/p1 HTTP/1.1|{form}|new+name=widget+2"),
            // `p2` has no `/`: JMeter adds one, to this path only.
            format!("PUT /p2 HTTP/1.1|{json}|{{\"name\": \"gadget\", \"qty\": 2}}"),
            "GET /p2?q=gadget+%26+co HTTP/1.1|-|-".to_string(),
            format!("POST /itemsp2 HTTP/1.1|{form}|new+name=gadget+2"),
        ]
    );
}
