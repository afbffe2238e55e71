//! `--redirects N` over HTTP/2 to another origin: a hop there goes on an
//! HTTP/2 connection to that origin (h2c prior knowledge, or ALPN h2 over
//! TLS), kept for the stream's later hops, while hops home stay streams of
//! the run's own connection. The rulebook is HTTP/1.1's: the same counts,
//! the limit across origins, the whole chain one request. Two built-in
//! targets, exact counts on both, in the closed and the open model; an
//! origin that does not speak HTTP/2 is `goaway` with a sample saying so.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, one_thread, redirect_to, run_stampede, spawn_target, ServerHandle, TargetConfig,
};

/// Requests and HTTP/2 streams a target served.
fn served(target: &ServerHandle) -> (u64, u64) {
    let stats = target.stats();
    (stats.requests_total, stats.h2_streams_total)
}

/// What a target served since `before`.
fn since(target: &ServerHandle, before: (u64, u64)) -> (u64, u64) {
    let now = served(target);
    (now.0 - before.0, now.1 - before.1)
}

/// The closed and the open model, as extra arguments.
const MODELS: [(&str, &[&str]); 2] = [("closed", &[]), ("open", &["-r", "200"])];

#[test]
fn a_hop_to_another_origin_goes_there_over_http2_in_both_models() {
    let a = spawn_target(one_thread());
    let b = spawn_target(one_thread());
    // A's 302 to B's /redirect/1, which B answers with a relative hop to
    // its own /redirect/0: one request to A, two to B per first request.
    let url = redirect_to(
        &format!("http://{}", a.local_addr()),
        &format!("http://{}/redirect/1", b.local_addr()),
    );
    for (model, extra) in MODELS {
        let (before_a, before_b) = (served(&a), served(&b));
        let connections_b = b.stats().h2_connections;
        let mut args = vec![
            url.as_str(),
            "--http2",
            "--redirects",
            "5",
            "-n",
            "20",
            "-c",
            "2",
            "--streams",
            "2",
            "-t",
            "1",
        ];
        args.extend_from_slice(extra);
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "{model}: {}", run.stderr());
        assert_eq!(run.count("/requests/sent"), 20, "{model}");
        assert_eq!(run.count("/status/200"), 20, "{model}: {}", run.result());
        assert_eq!(run.count("/redirects/followed"), 40, "{model}");
        assert_eq!(run.count("/redirects/offsite"), 0, "{model}");
        run.assert_accounted(model);
        assert_eq!(
            since(&a, before_a),
            (20, 20),
            "{model}: A saw each first request"
        );
        assert_eq!(
            since(&b, before_b),
            (40, 40),
            "{model}: B saw both hops, as streams"
        );
        // At most one side connection per stream slot, each kept for its
        // later hops (4 stream slots: 20 chains on at most 4 connections).
        let to_b = b.stats().h2_connections - connections_b;
        assert!((1..=4).contains(&to_b), "{model}: {to_b} connections to B");
    }
}

#[test]
fn a_side_connection_the_server_closed_idle_is_reopened_as_a_reconnect() {
    let a = spawn_target(one_thread());
    // B closes an HTTP/2 connection idle for 100 ms (a graceful GOAWAY);
    // the run's requests are 333 ms apart, so every hop after the first
    // finds the side connection to B closed by the server.
    let b = spawn_target(TargetConfig {
        idle_timeout: std::time::Duration::from_millis(100),
        ..one_thread()
    });
    let url = redirect_to(
        &format!("http://{}", a.local_addr()),
        &format!("http://{}/redirect/0", b.local_addr()),
    );
    let (before_b, connections_b) = (served(&b), b.stats().h2_connections);
    let run = run_stampede(
        binary(),
        &[
            url.as_str(),
            "--http2",
            "--redirects",
            "3",
            "-r",
            "3",
            "-n",
            "5",
            "-c",
            "1",
            "--streams",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/status/200"), 5, "{}", run.result());
    run.assert_accounted("idle side");
    assert_eq!(since(&b, before_b), (5, 5), "B saw every hop once");
    assert_eq!(
        b.stats().h2_connections - connections_b,
        5,
        "B closed each idle"
    );
    // The home connection to A stayed open: 1 + 5 opened, and the four to
    // B after the server closed the last are reconnects (as over HTTP/1.1).
    assert_eq!(run.count("/connections/opened"), 6, "{}", run.result());
    assert_eq!(run.count("/connections/reconnects"), 4, "{}", run.result());
}

#[test]
fn a_chain_out_and_back_home_and_the_limit_across_origins() {
    let a = spawn_target(one_thread());
    let b = spawn_target(one_thread());
    let home = format!("http://{}", a.local_addr());
    // A → B → A's /redirect/0 (200): two hops, A serves two, B one.
    let back = redirect_to(
        &home,
        &redirect_to(
            &format!("http://{}", b.local_addr()),
            &format!("{home}/redirect/0"),
        ),
    );
    let (before_a, before_b) = (served(&a), served(&b));
    let run = run_stampede(
        binary(),
        &[
            &back,
            "--http2",
            "--redirects",
            "2",
            "-n",
            "10",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/status/200"), 10, "{}", run.result());
    assert_eq!(run.count("/redirects/followed"), 20);
    assert_eq!(since(&a, before_a), (20, 20));
    assert_eq!(since(&b, before_b), (10, 10));
    // One hop fewer than the chain needs: the limit, with its sample.
    let (before_a, before_b) = (served(&a), served(&b));
    let run = run_stampede(
        binary(),
        &[
            &back,
            "--http2",
            "--redirects",
            "1",
            "-n",
            "10",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.count("/errors/redirect_limit"), 10, "{}", run.result());
    assert_eq!(run.count("/redirects/followed"), 10);
    let samples = run.result()["error_samples"]["redirect_limit"].to_string();
    assert!(samples.contains("more than 1 redirects"), "{samples}");
    assert_eq!(since(&a, before_a), (10, 10), "A's home hop was not sent");
    assert_eq!(since(&b, before_b), (10, 10));
}

#[test]
fn an_https_origin_is_reached_over_http2_by_alpn() {
    let a = spawn_target(one_thread());
    let b = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        ..TargetConfig::default()
    });
    let url = redirect_to(
        &format!("http://{}", a.local_addr()),
        &format!("https://localhost:{}/redirect/0", b.local_addr().port()),
    );
    let before_b = served(&b);
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "--insecure",
            "--redirects",
            "3",
            "-n",
            "10",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/status/200"), 10, "{}", run.result());
    assert_eq!(run.count("/redirects/followed"), 10);
    assert_eq!(since(&b, before_b), (10, 10), "every hop an HTTP/2 stream");
}

#[test]
fn an_origin_without_http2_is_goaway_with_a_sample_that_says_so() {
    let a = spawn_target(one_thread());
    let b = spawn_target(TargetConfig {
        h2c: false,
        ..one_thread()
    });
    let url = redirect_to(
        &format!("http://{}", a.local_addr()),
        &format!("http://{}/", b.local_addr()),
    );
    let before_a = served(&a);
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "--redirects",
            "3",
            "-n",
            "5",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), 5);
    assert_eq!(run.count("/errors/goaway"), 5, "{}", run.result());
    assert_eq!(run.count("/redirects/followed"), 5);
    run.assert_accounted("");
    let samples = run.result()["error_samples"]["goaway"].to_string();
    assert!(
        samples.contains(&format!("redirect to http://{}", b.local_addr()))
            && samples.contains("does the server speak HTTP/2?"),
        "{samples}"
    );
    assert_eq!(since(&a, before_a), (5, 5), "A's connection was unharmed");
}

/// The run's own server not speaking HTTP/2 gets the same word in its
/// sample as a redirect's origin does (it was a bare "frame with invalid
/// size"): a `goaway` of the `h2` crate on tokio, a `protocol` error of
/// the stampede-h2 codec on epoll (`--io auto`).
#[test]
fn a_target_without_http2_is_goaway_with_a_sample_that_says_so() {
    let b = spawn_target(TargetConfig {
        h2c: false,
        ..one_thread()
    });
    let url = format!("http://{}/", b.local_addr());
    for (io, class) in [("tokio", "goaway"), ("auto", "protocol")] {
        let run = run_stampede(
            binary(),
            &[&url, "--http2", "-n", "3", "-c", "1", "-t", "1", "--io", io],
        );
        let errors = format!("/errors/{class}");
        assert_eq!(run.count(&errors), 3, "{io}: {}", run.result());
        let samples = run.result()["error_samples"][class].to_string();
        assert!(
            samples.contains("does the server speak HTTP/2?"),
            "{io}: {samples}"
        );
    }
}

#[test]
fn a_workload_follows_hops_to_another_origin_and_judges_the_last_answer() {
    let a = spawn_target(one_thread());
    let b = spawn_target(one_thread());
    // A templated first request (a new id each time) hopping to B, which
    // hops once more on its own origin: the checks see B's last answer.
    let url = format!(
        "{}&id={{{{seq}}}}",
        redirect_to(
            &format!("http://{}", a.local_addr()),
            &format!("http://{}/redirect/1", b.local_addr()),
        )
    );
    for (model, extra) in MODELS {
        let (before_a, before_b) = (served(&a), served(&b));
        let mut args = vec![
            url.as_str(),
            "--http2",
            "--redirects",
            "5",
            "-n",
            "20",
            "-c",
            "2",
            "--streams",
            "2",
            "-t",
            "1",
            "--check",
            "status == 200",
        ];
        args.extend_from_slice(extra);
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "{model}: {}", run.stderr());
        assert_eq!(
            run.count("/requests/success"),
            20,
            "{model}: {}",
            run.result()
        );
        assert_eq!(run.count("/redirects/followed"), 40, "{model}");
        let checks = &run.result()["checks"][0];
        assert_eq!(checks["passed"], 20, "{model}: {checks}");
        assert_eq!(checks["failed"], 0, "{model}: {checks}");
        assert_eq!(since(&a, before_a), (20, 20), "{model}");
        assert_eq!(since(&b, before_b), (40, 40), "{model}");
    }
    // Without a hop to follow, the same check fails on the 302 itself.
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "-n",
            "5",
            "-c",
            "1",
            "-t",
            "1",
            "--check",
            "status == 200",
        ],
    );
    assert_eq!(run.count("/requests/check_failed"), 5, "{}", run.result());
}

#[test]
fn the_whole_chain_is_one_request_and_its_latency() {
    let a = spawn_target(one_thread());
    let b = spawn_target(one_thread());
    // B holds the hop's answer 300 ms: each request's latency holds it.
    let url = redirect_to(
        &format!("http://{}", a.local_addr()),
        &format!("http://{}/delay/300", b.local_addr()),
    );
    let log = stampede_testkit::temp_dir("h2-chain-log").join("requests.log");
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "--redirects",
            "1",
            "-n",
            "3",
            "-c",
            "1",
            "-t",
            "1",
            "--log-requests",
            log.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/completed"), 3, "{}", run.result());
    assert_eq!(run.count("/status/200"), 3);
    let min = run.result()["latency_us"]["min"].as_u64().unwrap_or(0);
    assert!(
        min >= 300_000,
        "the hop's 300 ms is in each latency: {min} us"
    );
    let text = std::fs::read_to_string(&log).expect("the request log");
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 3, "one line per request, not per hop: {text}");
}
