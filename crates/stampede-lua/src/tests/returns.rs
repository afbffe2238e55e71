//! What each hook returns, read as wrk reads it (wrk's src/script.c and
//! src/wrk.lua, github.com/wg/wrk): `delay()` through `lua_tonumber`
//! (script_delay), `request()` through `lua_tolstring` (script_request),
//! the return values of `setup`, `init`, `response` and `done` dropped
//! (`lua_call(L, n, 0)`), and wrk.lua's truth tests (`not headers.Host`).

use super::{next_request, prepared, respond, result};
use stampede_workload::Script;
use std::time::Duration;

/// The delay a script's `delay()` body gives, or its error.
fn delay_of(body: &str) -> Result<Duration, String> {
    let script = prepared(&format!("function delay() {body} end"), 1);
    let mut thread = script.thread(0).unwrap();
    thread.delay().map_err(|e| e.0)
}

/// script_delay: `uint64_t delay = lua_tonumber(L, -1)` after
/// `lua_call(L, 0, 1)`: no value, nil or a value that is not a number (or
/// a numeric string) is 0, and only the first value counts.
#[test]
fn delay_reads_its_value_as_lua_tonumber() {
    let ms = Duration::from_millis;
    assert_eq!(delay_of("if false then return 5 end"), Ok(ms(0)));
    assert_eq!(delay_of("return"), Ok(ms(0)));
    assert_eq!(delay_of("return nil"), Ok(ms(0)));
    assert_eq!(delay_of("return true"), Ok(ms(0)));
    assert_eq!(delay_of("return {}"), Ok(ms(0)));
    assert_eq!(delay_of("return 'soon'"), Ok(ms(0)));
    assert_eq!(delay_of("return '7'"), Ok(ms(7)));
    assert_eq!(delay_of("return ' 0x10 '"), Ok(ms(16)));
    // tonumber(5, 16) would read 5 in base 16; lua_tonumber reads 5.
    assert_eq!(delay_of("return 5, 16"), Ok(ms(5)));
    assert_eq!(delay_of("return 5, 1"), Ok(ms(5)));
    assert_eq!(delay_of("return 2.9"), Ok(ms(2)));
}

/// A delay() that returns nothing, again and again, is no error: the run
/// goes on and no failure is recorded (wrk ran 10,447 requests with it).
#[test]
fn a_delay_that_returns_nothing_is_no_failure() {
    let script = prepared("function delay() if false then return 5 end end", 1);
    let mut thread = script.thread(0).unwrap();
    for _ in 0..100 {
        assert_eq!(thread.delay().unwrap(), Duration::ZERO);
    }
    assert!(script.failure().is_none(), "{:?}", script.failure());
    assert!(!thread.stop_requested());
}

/// The error for the bytes `request()` gave, read as script_request reads
/// them.
fn request_error(body: &str) -> String {
    let script = prepared(&format!("function request() {body} end"), 1);
    let mut thread = script.thread(0).unwrap();
    let err = thread.request(&mut Vec::new()).unwrap_err().0;
    assert_eq!(script.failure(), Some(err.as_str()), "the run's failure");
    err
}

/// script_request: `lua_tolstring(L, -1, len)`: nil (or no value, or a
/// table) is no string, so no bytes, which script_verify_request refuses
/// as "incomplete request at 1:1"; a number is its text.
#[test]
fn request_reads_its_value_as_lua_tolstring() {
    for body in [
        "return nil",
        "return",
        "if false then return 'x' end",
        "return {}",
    ] {
        let err = request_error(body);
        assert!(
            err.starts_with("test.lua: request() returned an invalid HTTP request")
                && err.contains("incomplete request at 1:1: \"\""),
            "{body}: {err}"
        );
    }
    let err = request_error("return 42");
    assert!(err.ends_with(": \"42\""), "{err}");
    // Only the first value is the request.
    let script = prepared(
        "function request() return wrk.format(nil, '/first'), 'second' end",
        1,
    );
    let mut thread = script.thread(0).unwrap();
    let (bytes, count) = next_request(thread.as_mut());
    assert!(bytes.starts_with("GET /first HTTP/1.1\r\n"), "{bytes}");
    assert_eq!(count, 1);
}

/// setup, init, response and done are called with `lua_call(L, n, 0)`:
/// whatever they return is dropped.
#[test]
fn what_the_other_hooks_return_is_dropped() {
    let script = prepared(
        r#"function setup(thread) return false, "no" end
function init(args) return nil, "no" end
function response(status) return false end
function done(summary, latency, requests) ran = true return 1, 2, 3 end
"#,
        1,
    );
    let mut thread = script.thread(0).unwrap();
    respond(thread.as_mut(), 200, &[], b"");
    assert!(script.failure().is_none());
    drop(thread);
    script.done(&result(&[100])).unwrap();
    assert!(script.eval_in_setup::<bool>("return ran").unwrap());
}

/// wrk.lua's wrk.init: `if not wrk.headers["Host"]`, from `wrk.host` and
/// `wrk.port` as they are then; wrk.format: `if not headers["Host"]`.
#[test]
fn host_is_missing_when_nil_or_false_and_made_from_the_table() {
    let host_of = |code: &str| {
        let script = prepared(code, 1);
        let mut thread = script.thread(0).unwrap();
        let (bytes, _) = next_request(thread.as_mut());
        bytes
            .lines()
            .find_map(|l| l.strip_prefix("Host: "))
            .unwrap_or("(none)")
            .to_string()
    };
    assert_eq!(host_of(""), "127.0.0.1:8080");
    assert_eq!(host_of("wrk.headers.Host = false"), "127.0.0.1:8080");
    assert_eq!(
        host_of("wrk.host = 'example.test' wrk.port = nil"),
        "example.test"
    );
    assert_eq!(host_of("wrk.host, wrk.port = '::1', '81'"), "[::1]:81");
    assert_eq!(
        host_of("function request() return wrk.format(nil, nil, { Host = false }) end"),
        "127.0.0.1:8080"
    );
}
