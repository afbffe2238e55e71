//! What a script can get wrong: errors in hooks (named, with tracebacks,
//! stopping every thread), bytes that are not requests, failing setup/init.

use super::{config, next_request, prepared, respond, ADDR};
use crate::LoadedScript;
use stampede_workload::{ResponseView, Script};
use std::time::Duration;

#[test]
fn runtime_errors_name_the_hook_the_line_and_the_traceback() {
    let script = prepared("function request()\n  return nil .. 'x'\nend", 1);
    let mut thread = script.thread(0).unwrap();
    let err = thread.request(&mut Vec::new()).unwrap_err().0;
    assert!(
        err.starts_with("test.lua: request() failed: test.lua:2: attempt to concatenate"),
        "{err}"
    );
    assert!(err.contains("stack traceback"), "{err}");
    assert_eq!(
        script.failure(),
        Some(err.as_str()),
        "the run keeps the error"
    );
    assert!(thread.stop_requested(), "and every thread stops");
}

#[test]
fn one_threads_error_stops_every_thread() {
    let script = prepared(
        "function response(status) if status == 500 then error('bad') end end",
        2,
    );
    let (mut first, second) = (script.thread(0).unwrap(), script.thread(1).unwrap());
    respond(first.as_mut(), 200, &[], b"");
    assert!(script.failure().is_none() && !second.stop_requested());
    assert!(first
        .response(&ResponseView::new(500, &[], b"", Duration::ZERO))
        .is_err());
    assert!(script
        .failure()
        .unwrap()
        .contains("response() failed: test.lua:1: bad"));
    assert!(second.stop_requested());
}

#[test]
fn bad_request_bytes_are_an_error_with_the_bytes() {
    let script = prepared("function request() return 'hello' end", 1);
    let mut thread = script.thread(0).unwrap();
    let err = thread.request(&mut Vec::new()).unwrap_err().0;
    assert!(
        err.starts_with("test.lua: request() returned an invalid HTTP request"),
        "{err}"
    );
    assert!(err.contains("\"hello\""), "{err}");
    // The run's failure, as a runtime error is: every thread stops, exit 2.
    assert!(
        script
            .failure()
            .is_some_and(|f| f.contains("invalid HTTP request")),
        "{:?}",
        script.failure()
    );
    let script = prepared("function request() return 42 end", 1);
    let err = script
        .thread(0)
        .unwrap()
        .request(&mut Vec::new())
        .unwrap_err()
        .0;
    // A number is its text, as wrk's lua_tolstring reads it (returns.rs).
    assert!(
        err.contains("invalid HTTP request") && err.ends_with("\"42\""),
        "{err}"
    );
}

#[test]
fn setup_and_init_errors_stop_prepare() {
    let load =
        |code: &str| LoadedScript::from_code(&config(&[]), code.as_bytes().to_vec()).unwrap();
    let err = load("function setup(t) t:set('f', print) end")
        .prepare(1, ADDR.parse().unwrap())
        .unwrap_err()
        .0;
    assert!(
        err.contains("setup() failed") && err.contains("cannot transfer 'function'"),
        "{err}"
    );
    let err = load("function init() error('boom') end")
        .prepare(1, ADDR.parse().unwrap())
        .unwrap_err()
        .0;
    assert!(err.contains("init() failed: test.lua:1: boom"), "{err}");
    let err = LoadedScript::from_code(&config(&[]), b"x = = 1".to_vec())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("test.lua:1:") && !err.contains('\n'),
        "{err}"
    );
}

#[test]
fn a_string_for_thread_addr_is_one_error_in_the_scripts_terms() {
    let err = LoadedScript::from_code(
        &config(&[]),
        b"function setup(thread)\n  thread.addr = '127.0.0.1:18081'\nend\n".to_vec(),
    )
    .unwrap()
    .prepare(1, ADDR.parse().unwrap())
    .unwrap_err()
    .0;
    assert!(
        err.contains("setup() failed: test.lua:2: thread.addr must be an address from wrk.lookup(), got string"),
        "{err}"
    );
    for internal in [
        "bad argument",
        "runtime error",
        "__mlua",
        "[C]",
        "ThreadHandle",
    ] {
        assert!(!err.contains(internal), "{internal} in {err}");
    }
    assert!(err.contains("\n  test.lua:2: in function"), "{err}");
}

#[test]
fn a_caught_lookup_failure_is_the_plain_message() {
    let script = prepared(
        "local ok, err = pcall(wrk.lookup, '127.0.0.1', 'gopher')\n\
         function request() return wrk.format(nil, '/', { ['X-Err'] = err }) end\n",
        1,
    );
    let mut thread = script.thread(0).unwrap();
    let (request, _) = next_request(thread.as_mut());
    assert!(
        request.contains("\r\nX-Err: unable to resolve 127.0.0.1:gopher unknown service\r\n"),
        "{request}"
    );
}

#[test]
fn lookup_without_a_service_is_port_0_as_in_wrk() {
    let script = prepared(
        "local a = wrk.lookup('127.0.0.1', nil)\n\
         local b = wrk.lookup('127.0.0.1')\n\
         function request() return wrk.format(nil, '/', { ['X-A'] = tostring(a[1]) .. ' ' .. tostring(b[1]) }) end\n",
        1,
    );
    let mut thread = script.thread(0).unwrap();
    let (request, _) = next_request(thread.as_mut());
    assert!(
        request.contains("\r\nX-A: 127.0.0.1:0 127.0.0.1:0\r\n"),
        "{request}"
    );
}

#[test]
fn a_bad_assignment_to_wrk_thread_during_the_run_is_as_plain() {
    let script = prepared(
        "function request()\n  wrk.thread.addr = 5\n  return wrk.format()\nend\n",
        1,
    );
    let mut thread = script.thread(0).unwrap();
    let err = thread.request(&mut Vec::new()).unwrap_err().0;
    assert!(
        err.starts_with("test.lua: request() failed: test.lua:2: thread.addr must be an address from wrk.lookup(), got number\nstack traceback:\n  test.lua:2: in function"),
        "{err}"
    );
    assert!(
        !err.contains("runtime error") && !err.contains("__mlua"),
        "{err}"
    );
    let err = LoadedScript::from_code(&config(&[]), b"function setup(t) t.port = 80 end".to_vec())
        .unwrap()
        .prepare(1, ADDR.parse().unwrap())
        .unwrap_err()
        .0;
    assert!(
        err.starts_with("test.lua: setup() failed: test.lua:1: thread.port cannot be set"),
        "{err}"
    );
}

#[test]
fn a_body_cut_at_capture_max_is_noticed_only_when_response_reads_it() {
    let cut = |code: &str| {
        let script = prepared(code, 2);
        let mut thread = script.thread(0).unwrap();
        // 16 bytes kept of a 100-byte body; then a whole one.
        let view = ResponseView::new(200, &[], b"0123456789abcdef", Duration::ZERO);
        thread.response(&view.with_body_size(100)).unwrap();
        let whole = ResponseView::new(200, &[], b"0123456789abcdef", Duration::ZERO);
        thread.response(&whole).unwrap();
        script.body_was_cut()
    };
    assert!(cut(
        "function response(status, headers, body) n = #body end"
    ));
    assert!(!cut("function response(status) n = status end"));
    let script = prepared("function response(s, h, body) n = #body end", 1);
    let mut thread = script.thread(0).unwrap();
    let whole = ResponseView::new(200, &[], b"0123456789abcdef", Duration::ZERO);
    thread.response(&whole).unwrap();
    assert!(!script.body_was_cut(), "a whole body is no cut one");
}

#[test]
fn errors_from_stampedes_own_code_during_the_run_read_as_the_scripts() {
    for (code, want) in [
        (
            "function request()\n  wrk.thread:set('f', print)\n  return wrk.format()\nend\n",
            "test.lua: request() failed: cannot transfer 'function' to thread\nstack traceback:\n  test.lua:2: in function 'request'",
        ),
        (
            "function request()\n  return wrk.format(nil, '/', 5)\nend\n",
            "test.lua: request() failed: wrk.format: headers must be a table, got number",
        ),
    ] {
        let script = prepared(code, 1);
        let mut thread = script.thread(0).unwrap();
        let err = thread.request(&mut Vec::new()).unwrap_err().0;
        assert_eq!(err, want);
    }
}
