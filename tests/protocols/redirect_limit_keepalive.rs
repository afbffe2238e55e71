//! A redirect past `--redirects N` is read in
//! full, so its keep-alive connection stays for the next request (as a 404's
//! does), and a hop that fails (here its origin's certificate is not
//! trusted) is a failed request without backing off the slot's own
//! connection, on every HTTP/1.1 path.

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    free_port, one_thread, require_tool, run_on_one_loop, spawn_target, temp_dir, TargetConfig,
    EVENT_LOOPS,
};
use std::time::{Duration, Instant};

#[test]
fn the_redirect_limit_keeps_its_connection() {
    let target = spawn_target(one_thread());
    // /redirect/5 hops five times: with --redirects 2 every request ends in
    // redirect_limit after three responses on one connection.
    let url = format!("http://{}/redirect/5", target.local_addr());
    for io in EVENT_LOOPS {
        let before = target.stats().connections_accepted;
        let Some(run) = run_on_one_loop(io, &[&url, "--redirects", "2", "-n", "6", "-c", "1"])
        else {
            continue;
        };
        let at = format!("--io {io}: {}", run.result());
        assert_eq!(run.count("/errors/redirect_limit"), 6, "{at}");
        assert_eq!(run.count("/connections/opened"), 1, "{at}");
        assert_eq!(target.stats().connections_accepted - before, 1, "{at}");
    }
}

#[test]
fn nginx_sees_one_connection_for_a_redirect_loop() {
    // The trial's case: nginx `return 302 /loop`, `--redirects 2 -n 6 -c 1`;
    // nginx's `$connection` is the same for every request it logs.
    let program = require_tool!("nginx");
    let dir = temp_dir("loop");
    let (home, looping) = (free_port(), free_port());
    let extra =
        format!("server {{ listen 127.0.0.1:{looping}; location /loop {{ return 302 /loop; }} }}");
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{home}")],
        log_format: "$connection $status",
        http_extra: &extra,
        netns: None,
    };
    let addr = format!("127.0.0.1:{looping}");
    let nginx = Nginx::start(&program, &dir, &setup, || listening(&addr));
    let url = format!("http://{addr}/loop");
    for io in EVENT_LOOPS {
        let Some(run) = run_on_one_loop(io, &[&url, "--redirects", "2", "-n", "6", "-c", "1"])
        else {
            continue;
        };
        let at = format!("--io {io}: {}", run.result());
        assert_eq!(run.count("/errors/redirect_limit"), 6, "{at}");
        let lines = nginx.take_lines();
        // Three responses per request (the first and two hops), 302 each.
        assert_eq!(lines.len(), 18, "{at}: {lines:?}");
        let connections: std::collections::BTreeSet<_> =
            lines.iter().map(|fields| fields[0].clone()).collect();
        assert_eq!(connections.len(), 1, "--io {io}: {lines:?}");
    }
    drop(nginx);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_failed_tls_hop_is_a_failed_request_without_a_backoff() {
    let home = spawn_target(one_thread());
    let untrusted = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        ..TargetConfig::default()
    });
    let to = format!("https://127.0.0.1:{}/", untrusted.local_addr().port());
    let url = format!(
        "http://{}/redirect-to?url={}",
        home.local_addr(),
        to.replace(':', "%3A").replace('/', "%2F")
    );
    for io in EVENT_LOOPS {
        let started = Instant::now();
        let Some(run) = run_on_one_loop(io, &[&url, "--redirects", "2", "-n", "12", "-c", "1"])
        else {
            continue;
        };
        let took = started.elapsed();
        let at = format!("--io {io}: {took:?} {}", run.result());
        assert_eq!(run.count("/errors/tls"), 12, "{at}");
        // Twelve doubling backoffs from 10 ms add up to over 5 s; without
        // one the run is a few ms of loopback round trips. Bound generous.
        assert!(took < Duration::from_secs(3), "{at}");
        // The home connection served every first request.
        assert_eq!(run.count("/connections/reconnects"), 0, "{at}");
    }
}
