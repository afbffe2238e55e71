//! The built-in target's `/redirect-to?url=URL` under
//! `--redirects`: a percent-encoded relative or absolute URL on the same
//! origin is followed (each hop counted, on both engine paths), another
//! origin that does not resolve is an `other` error, `status_code` picks the redirect, and
//! a request without `url` is a 400.

use stampede_testkit::{binary, one_thread, run_stampede, spawn_target, Run};

const EVENT_LOOPS: [&str; 2] = ["auto", "tokio"];

fn load(io: &str, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["--io", io, "-t", "1", "-c", "1"]);
    let run = run_stampede(binary(), &all);
    assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
    run
}

#[test]
fn relative_and_absolute_urls_are_followed() {
    let target = spawn_target(one_thread());
    let origin = format!("http://{}", target.local_addr());
    let relative = format!("{origin}/redirect-to?url=%2Fredirect%2F1");
    let absolute = format!(
        "{origin}/redirect-to?url={}",
        format!("{origin}/redirect/0")
            .replace(':', "%3A")
            .replace('/', "%2F")
    );
    for io in EVENT_LOOPS {
        let before = target.stats().requests_total;
        // /redirect-to → /redirect/1 → /redirect/0: two hops.
        let run = load(io, &[&relative, "--redirects", "3", "-n", "10"]);
        assert_eq!(run.count("/status/200"), 10, "--io {io}: {}", run.result());
        assert_eq!(run.count("/redirects/followed"), 20, "--io {io}");
        assert_eq!(target.stats().requests_total - before, 30, "--io {io}");
        let run = load(io, &[&absolute, "--redirects", "1", "-n", "10"]);
        assert_eq!(run.count("/status/200"), 10, "--io {io}: {}", run.result());
        assert_eq!(run.count("/redirects/followed"), 10, "--io {io}");
    }
}

#[test]
fn another_origin_and_the_status_code() {
    let target = spawn_target(one_thread());
    let origin = format!("http://{}", target.local_addr());
    // Another origin is followed (tests/protocols/redirect_origins.rs): one that
    // does not resolve fails the request, its reason sampled.
    let away = format!("{origin}/redirect-to?url=http%3A%2F%2Fexample.invalid%2F");
    let permanent = format!("{origin}/redirect-to?url=%2Fredirect%2F0&status_code=308");
    for io in EVENT_LOOPS {
        let mut args = vec![away.as_str(), "--redirects", "2", "-n", "5"];
        args.extend(["--io", io, "-t", "1", "-c", "1"]);
        let run = run_stampede(binary(), &args);
        assert_eq!(run.count("/errors/other"), 5, "--io {io}: {}", run.result());
        assert_eq!(run.count("/redirects/offsite"), 0, "--io {io}");
        let run = load(io, &[&permanent, "-n", "3"]);
        assert_eq!(
            run.count("/status/308"),
            3,
            "--io {io}: not followed unasked"
        );
        let run = load(io, &[&permanent, "--redirects", "1", "-n", "3"]);
        assert_eq!(run.count("/status/200"), 3, "--io {io}");
    }
}

#[test]
fn without_a_url_it_is_a_bad_request() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/redirect-to", target.local_addr());
    let run = load("auto", &[&url, "--redirects", "2", "-n", "2"]);
    assert_eq!(run.count("/status/400"), 2);
}
