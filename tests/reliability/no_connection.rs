//! A run that cannot open one connection gives up soon after the connect
//! timeout instead of spending its whole `-d` (bad input, exit
//! 2): a closed TCP port (refused) and a closed UDP
//! port under HTTP/3 (quinn ignores ICMP: every handshake times out). The
//! result is written, not interrupted, with `stop_reason: "no_connection"`.

use stampede_testkit::{binary, closed_udp_port, run_stampede};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn closed_tcp_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn gives_up(url: &str, extra: &[&str]) {
    let started = Instant::now();
    let mut args = vec![
        url,
        "-d",
        "30s",
        "-c",
        "2",
        "-t",
        "1",
        "--connect-timeout",
        "1s",
    ];
    args.extend_from_slice(extra);
    let run = run_stampede(binary(), &args);
    let took = started.elapsed();
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(took < Duration::from_secs(10), "gave up soon: {took:?}");
    assert!(
        took >= Duration::from_secs(1),
        "not before the timeout: {took:?}"
    );
    let result = run.result();
    assert_eq!(result["stop_reason"], "no_connection", "{result}");
    assert_eq!(result["interrupted"], false, "{result}");
    assert_eq!(run.count("/connections/opened"), 0);
    assert!(
        run.stderr().contains("no connection could be opened"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_closed_tcp_port_gives_up_after_the_connect_timeout() {
    let port = closed_tcp_port();
    gives_up(&format!("http://127.0.0.1:{port}/"), &[]);
}

#[test]
fn a_closed_udp_port_under_http3_gives_up_after_the_connect_timeout() {
    let port = closed_udp_port();
    gives_up(
        &format!("https://127.0.0.1:{port}/"),
        &["--http3", "--insecure"],
    );
}

#[test]
fn a_warmup_keeps_the_old_behaviour_of_running_its_duration() {
    // With --warmup, measurement starts with connections meant to be open:
    // the rule is off, so the run lasts its -d.
    let port = closed_tcp_port();
    let started = Instant::now();
    let url = format!("http://127.0.0.1:{port}/");
    let run = run_stampede(
        binary(),
        &[
            &url,
            "-d",
            "2s",
            "--warmup",
            "1s",
            "-c",
            "1",
            "--connect-timeout",
            "200ms",
        ],
    );
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{}",
        run.stderr()
    );
    assert_ne!(run.result()["stop_reason"], "no_connection");
}
