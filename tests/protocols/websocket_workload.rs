//! Workloads over WebSocket: feeder columns and extracted values rendered
//! into `--ws-message` (by the workload's one renderer), replies judged by
//! `--check` and read by `--extract` on tokio, epoll and io_uring; scenario
//! steps (send, check, extract, think, close) against `stampede serve`'s
//! `/ws/echo`, counted against its `/stats`; replies paired by
//! `--ws-match-id` past the pushes of Python's `websockets` (a server
//! nobody here wrote, which counts what it saw), and the cookie jar and
//! `--cookie` carried in each upgrade it records; bad input refused in one
//! line.

use crate::websocket_client::{python_with_websockets, stats};
use stampede_testkit::{binary, run_ok, run_on_loop, run_stampede, temp_dir, ServeProcess};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A `websockets` server that answers each JSON message `{"id": …}` with a
/// push (`{"note": …}`) first, then its reply (`{"id": …, "seen": …}`); it
/// sets `sid=sN` on the Nth upgrade's answer and records each upgrade's
/// `Cookie` header. After `argv[1]` connections have ended it prints what
/// it counted.
const PUSHING_SERVER: &str = r#"
import asyncio, json, sys
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

expected = int(sys.argv[1])
counts = {"in": 0, "replies": 0, "pushes": 0, "cookies": []}
ended = 0
upgrades = 0

def on_request(connection, request):
    counts["cookies"].append(request.headers.get("Cookie"))

def on_response(connection, request, response):
    global upgrades
    upgrades += 1
    response.headers["Set-Cookie"] = f"sid=s{upgrades}; Path=/"

async def handler(ws):
    global ended
    # A connection that ends while its replies are still being sent (the
    # client's close behind messages it paired with pushes) raises out of
    # send(): it has ended all the same, or the counts would never come.
    try:
        async for message in ws:
            counts["in"] += 1
            try:
                id = json.loads(message)["id"]
            except Exception:
                id = None
            await ws.send(json.dumps({"note": "pushed before the reply"}))
            counts["pushes"] += 1
            await ws.send(json.dumps({"id": id, "seen": message}))
            counts["replies"] += 1
    except ConnectionClosed:
        pass
    finally:
        ended += 1
        if ended == expected:
            done.set()

async def main():
    global done
    done = asyncio.Event()
    async with serve(handler, "127.0.0.1", 0, process_request=on_request,
                     process_response=on_response) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await done.wait()
    print(json.dumps(counts), flush=True)

asyncio.run(main())
"#;

/// [`PUSHING_SERVER`] expecting `connections`: the process, its URL and
/// its output's lines (the counts come once it is done).
fn pushing_server(
    python: &std::path::Path,
    connections: u32,
) -> (
    Child,
    String,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
) {
    let mut server = Command::new(python)
        .args(["-c", PUSHING_SERVER, &connections.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the websockets server starts");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let port = lines.next().expect("a port line").unwrap();
    (server, format!("ws://127.0.0.1:{port}/"), lines)
}

/// The server's counts, once its connections have ended.
fn counted(
    mut server: Child,
    mut lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
) -> serde_json::Value {
    let line = lines.next();
    let _ = server.kill();
    let _ = server.wait();
    let line = line.expect("the server's counts").unwrap();
    serde_json::from_str(&line).unwrap()
}

/// A check's `{passed, failed}` from the result, by its expression.
fn check_counts(run: &stampede_testkit::Run, check: &str) -> (u64, u64) {
    let checks = run.result()["checks"].as_array().expect("checks");
    let found = checks
        .iter()
        .find(|c| c["check"] == check)
        .unwrap_or_else(|| panic!("no check {check} in {checks:?}"));
    (
        found["passed"].as_u64().unwrap(),
        found["failed"].as_u64().unwrap(),
    )
}

#[test]
fn feeder_columns_and_extracted_values_render_into_messages_and_replies_are_judged_on_every_driver()
{
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let dir = temp_dir("ws-feed");
    let people = dir.join("people.csv");
    std::fs::write(&people, "name\nann\nbob\n").unwrap();
    let people = people.to_str().unwrap();
    for io in ["tokio", "epoll", "uring"] {
        let Some(run) = run_on_loop(
            io,
            &[
                "run",
                &url,
                "-t",
                "1",
                "-c",
                "1",
                "-n",
                "10",
                "--feed",
                people,
                "--ws-message",
                r#"{"n":"{{name}}","prev":"{{prev}}","seq":{{seq}}}"#,
                "--extract",
                "prev=json($.n)",
                "--check",
                r#"json($.n) == "ann""#,
                "--check",
                "json($.prev) ~ ^(ann|bob)$",
            ],
        ) else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        assert_eq!(run.result()["plan"]["io"], io, "--io {io}");
        run.assert_accounted(io);
        // The rows alternate: half the replies name bob.
        assert_eq!(check_counts(&run, r#"json($.n) == "ann""#), (5, 5), "{io}");
        // Only the first message went before any value was extracted.
        assert_eq!(
            check_counts(&run, "json($.prev) ~ ^(ann|bob)$"),
            (9, 1),
            "{io}"
        );
        assert_eq!(check_counts(&run, "extract prev"), (10, 0), "{io}");
        let failed = run.count("/requests/check_failed");
        assert!((5..=6).contains(&failed), "{io}: {failed}");
        assert_eq!(run.count("/requests/success"), 10 - failed, "{io}");
        assert_eq!(run.count("/websocket/messages_sent"), 10, "{io}");
        assert_eq!(run.count("/websocket/messages_received"), 10, "{io}");
    }
}

/// A scenario over `/ws/echo`: a message with a feeder column checked
/// and its id extracted, then one carrying the extracted id after a
/// think time, after whose reply the connection closes.
const CHAT: &str = r#"
[[group]]
name = "chat"
connections = 2
iterations = 3
feed = [{ file = "people.csv" }]

[[group.step]]
name = "hello"
url = "ws://127.0.0.1:PORT/ws/echo"
send = '{"id":"{{seq}}","name":"{{name}}"}'
check = ['json($.name) ~ ^(ann|bob)$']
extract = { echoed = "json($.id)" }

[[group.step]]
name = "again"
url = "ws://127.0.0.1:PORT/ws/echo"
think = "20ms"
send = 'again {{echoed}}'
check = ['body ~ ^again [0-9]+$']
close = true
"#;

#[test]
fn scenario_steps_send_check_extract_think_and_close_over_websocket() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("ws-scenario");
    std::fs::write(dir.join("people.csv"), "name\nann\nbob\n").unwrap();
    let file = dir.join("chat.toml");
    std::fs::write(&file, CHAT.replace("PORT", &serve.port.to_string())).unwrap();
    // --io auto takes tokio, the driver of WebSocket scenario steps.
    let run = run_ok(&["run", "--scenario", file.to_str().unwrap(), "-t", "1"]);
    run.assert_accounted("ws scenario");
    assert_eq!(run.result()["plan"]["io"], "tokio", "{}", run.stderr());
    // 2 users x 3 iterations x 2 steps; an empty {{echoed}} would fail
    // the second step's check.
    assert_eq!(run.count("/requests/sent"), 12);
    assert_eq!(run.count("/requests/success"), 12);
    assert_eq!(check_counts(&run, "body ~ ^again [0-9]+$"), (6, 0));
    assert_eq!(check_counts(&run, "extract echoed"), (6, 0));
    let ws = &run.result()["websocket"];
    assert_eq!(run.count("/websocket/messages_sent"), 12, "{ws}");
    assert_eq!(run.count("/websocket/messages_received"), 12, "{ws}");
    // Each iteration's last step closed its connection with 1000.
    assert_eq!(run.count("/websocket/connections"), 6, "{ws}");
    assert_eq!(ws["close_codes"], serde_json::json!({"1000": 6}), "{ws}");
    let targets = run.result()["targets"].as_array().unwrap();
    assert_eq!(targets[0]["name"], "hello");
    assert_eq!(targets[1]["name"], "again");
    let served = stats(serve.port);
    assert_eq!(served["ws_sessions"], 6, "{served}");
    assert_eq!(served["ws_messages_in"], 12, "{served}");
}

#[test]
fn replies_paired_by_an_extracted_id_pass_the_servers_pushes_on_every_driver() {
    let Some(python) = python_with_websockets() else {
        return;
    };
    let message = r#"{"id":"m{{seq}}"}"#;
    for io in ["tokio", "epoll", "uring"] {
        if !stampede_testkit::event_loop_or_skip(io) {
            continue;
        }
        let (server, url, lines) = pushing_server(&python, 2);
        let run = run_on_loop(
            io,
            &[
                "run",
                &url,
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "40",
                "--ws-message",
                message,
                "--ws-match-id",
                "json($.id)",
                "--check",
                "json($.seen) exists",
            ],
        )
        .expect("checked above");
        let counts = counted(server, lines);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        run.assert_accounted(io);
        // Every reply was paired with its message, none with a push.
        assert_eq!(run.count("/requests/success"), 40, "{io}");
        assert_eq!(check_counts(&run, "json($.seen) exists"), (40, 0), "{io}");
        assert_eq!(run.count("/websocket/rtt/count"), 40, "{io}");
        assert_eq!(run.count("/websocket/messages_sent"), 40, "{io}");
        // The pushes count as received, as pushes do.
        assert_eq!(run.count("/websocket/messages_received"), 80, "{io}");
        assert_eq!(counts["in"], 40, "{io}: {counts}");
        assert_eq!(counts["replies"], 40, "{io}: {counts}");
        assert_eq!(counts["pushes"], 40, "{io}: {counts}");
        // The result's plan says how replies were paired.
        let plan = &run.result()["plan"]["websocket"];
        assert_eq!(plan["match_id"], "json($.id)", "{io}: {plan}");
    }
    // Paired by order, a push is taken for a reply: the check sees it.
    let (server, url, lines) = pushing_server(&python, 1);
    let run = run_stampede(
        binary(),
        &[
            "run",
            &url,
            "--io",
            "tokio",
            "-c",
            "1",
            "-n",
            "10",
            "--ws-message",
            message,
            "--check",
            "json($.seen) exists",
        ],
    );
    let _ = counted(server, lines);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let (_, failed) = check_counts(&run, "json($.seen) exists");
    assert!(failed > 0, "no push was taken for a reply by order");
}

/// One user, three iterations of one step that closes its connection: three
/// upgrades, each carrying the jar's cookies.
const COOKIES: &str = r#"
[[group]]
name = "jar"
connections = 1
iterations = 3
cookies = true

[[group.step]]
name = "ping"
url = "URL"
send = '{"id":"{{seq}}"}'
check = ['json($.id) exists']
close = true
"#;

#[test]
fn the_cookie_jar_and_cookie_ride_each_upgrade() {
    let Some(python) = python_with_websockets() else {
        return;
    };
    let (server, url, lines) = pushing_server(&python, 3);
    let dir = temp_dir("ws-cookies");
    let file = dir.join("jar.toml");
    std::fs::write(&file, COOKIES.replace("URL", &url)).unwrap();
    let run = run_stampede(
        binary(),
        &[
            "run",
            "--scenario",
            file.to_str().unwrap(),
            "--cookie",
            "a=1",
            "--ws-match-id",
            "json($.id)",
        ],
    );
    let counts = counted(server, lines);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.assert_accounted("cookies");
    assert_eq!(run.count("/requests/success"), 3);
    // The first upgrade carries --cookie; each later one the sid the
    // upgrade before it was answered with.
    assert_eq!(
        counts["cookies"],
        serde_json::json!(["a=1", "a=1; sid=s1", "a=1; sid=s2"]),
        "{counts}"
    );
}

#[test]
fn bad_websocket_workloads_are_refused_in_one_line() {
    let dir = temp_dir("ws-bad");
    let scenario = |name: &str, body: &str| {
        let file = dir.join(name);
        std::fs::write(&file, body).unwrap();
        file.to_str().unwrap().to_string()
    };
    let ws_step = "[[group]]\nname = \"g\"\nconnections = 1\n\n[[group.step]]\nname = \"s\"\nurl = \"ws://127.0.0.1:9/\"\n";
    let misspelt = scenario("misspelt.toml", &format!("{ws_step}sned = 'x'\n"));
    let no_send = scenario("no-send.toml", ws_step);
    let sent = scenario("ok.toml", &format!("{ws_step}send = 'x'\n"));
    let templated_url = scenario(
        "templated-url.toml",
        &format!("{}send = 'x'\n", ws_step.replace(":9/", ":9/{{conn}}")),
    );
    let mixed = scenario(
        "mixed.toml",
        &format!(
            "{ws_step}send = 'x'\n\n[[group.step]]\nname = \"h\"\nurl = \"http://127.0.0.1:9/\"\n"
        ),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--scenario", &misspelt], "sned"),
        (vec!["--scenario", &no_send], "add send ="),
        (vec!["--scenario", &mixed], "all one or the other"),
        (vec!["--scenario", &sent, "--io", "epoll"], "run on tokio"),
        (vec!["--scenario", &sent, "--ws-rate", "5"], "think times"),
        (
            vec!["--scenario", &sent, "--ws-message", "hi"],
            "send their own",
        ),
        // The upgrade is not rendered: a template would reach the server
        // as typed.
        (
            vec!["--scenario", &templated_url],
            "not rendered in a WebSocket upgrade",
        ),
        (
            vec!["ws://127.0.0.1:9/{{conn}}"],
            "not rendered in a WebSocket upgrade",
        ),
        (
            vec!["ws://127.0.0.1:9/", "-H", "Authorization: Bearer {{tok}}"],
            "not rendered in a WebSocket upgrade",
        ),
        (
            vec!["ws://127.0.0.1:9/", "--check", "status == 101"],
            "has no status",
        ),
        (
            vec!["ws://127.0.0.1:9/", "--extract", "t=header(X-T)"],
            "no header",
        ),
        (
            vec![
                "ws://127.0.0.1:9/",
                "--ws-binary",
                "--check",
                "json($.a) exists",
            ],
            "not JSON text",
        ),
        (
            vec!["ws://127.0.0.1:9/", "--ws-match-id", "json($.id)"],
            "finds no id",
        ),
        (
            vec!["ws://127.0.0.1:9/", "--ws-match-id", "cookie(sid)"],
            "no header or cookie",
        ),
        (
            vec!["ws://127.0.0.1:9/", "--ws-message", "{{nobody}}"],
            "unknown variable",
        ),
    ];
    for (args, says) in cases {
        let mut all = vec!["run", "-n", "1"];
        all.extend(args.iter().copied());
        let out = stampede_testkit::stampede(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
