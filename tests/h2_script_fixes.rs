//! Three defects of the HTTP/2 path a new user's trial found, end to end
//! against the built-in target (and nginx): a script's `delay()` returning
//! 0 costs no timer tick per request; a graceful GOAWAY (the server closing
//! an idle connection, nginx's `keepalive_requests`) is neither an error
//! nor lost — a request the server never processed goes again, once, on a
//! new connection, which counts as a reconnect; and a script's request
//! line in absolute form, `OPTIONS *` and `CONNECT` reach HTTP/2 as what
//! they mean (or are refused in one clear error).

#[path = "lua_support/mod.rs"]
mod support;

use stampede_testkit::{run_ok, Run};
use support::{script, LoggedTarget};

/// `stampede run URL --http2 -t 1 ARGS --script FILE` (with `--json`), exit 0.
fn run_script(url: &str, args: &[&str], file: &std::path::Path) -> Run {
    let mut words = vec!["run", url, "--http2", "-t", "1"];
    words.extend(args);
    words.extend(["--script", file.to_str().unwrap()]);
    run_ok(&words)
}

#[test]
fn a_delay_of_zero_costs_no_timer_tick_per_request() {
    let target = LoggedTarget::start();
    let url = target.url("/");
    // The same script with and without a delay() that returns 0: over
    // HTTP/2 the first waited a timer tick (1 ms) per request.
    let plain = script("h2-no-delay.lua", "function init(args) end\n");
    let zero = script(
        "h2-delay-0.lua",
        "function init(args) end\nfunction delay() return 0 end\n",
    );
    let args = ["-c", "2", "-d", "1s"];
    let without = run_script(&url, &args, &plain).count("/requests/completed");
    let with_zero = run_script(&url, &args, &zero).count("/requests/completed");
    assert!(
        with_zero * 2 >= without,
        "delay() = 0: {with_zero} requests in 1 s, without delay(): {without}"
    );
    // A delay of 20 ms still paces each user: 2 users × ~50 a second.
    let twenty = script("h2-delay-20.lua", "function delay() return 20 end\n");
    let paced = run_script(&url, &args, &twenty).count("/requests/completed");
    assert!((40..=110).contains(&paced), "delay() = 20: {paced} in 1 s");
}
