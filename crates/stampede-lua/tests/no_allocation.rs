//! A script's per-request calls allocate nothing on the Rust side (the
//! script path adds no work of its own per request). A counting global
//! allocator counts the calling thread's allocations; Lua's own allocations
//! go through the same allocator (mlua's), so the script here makes none of
//! its own: `request()` returns a string made once (pipeline.lua's style)
//! and `delay()` a number.

use stampede_lua::{LoadedScript, RequestDefaults, ScriptConfig};
use stampede_testkit::{thread_allocations as allocations, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn steady_state_requests_do_not_allocate() {
    let config = ScriptConfig {
        path: "pipeline.lua".into(),
        url: "http://127.0.0.1:8080/".into(),
        request: RequestDefaults::default(),
        args: Vec::new(),
    };
    let code = br#"
        local req = wrk.format(nil, "/1") .. wrk.format(nil, "/2")
        function request() return req end
        function delay() return 3 end
    "#;
    let script = LoadedScript::from_code(&config, code.to_vec())
        .unwrap()
        .prepare(1, "127.0.0.1:8080".parse().unwrap())
        .unwrap();
    let mut thread = stampede_workload::Script::thread(&script, 0).unwrap();
    let mut out = Vec::with_capacity(4096);
    // Warm up: the first call parses the bytes and keeps them, and LuaJIT
    // compiles its traces (their memory comes from the same allocator).
    for _ in 0..5000 {
        out.clear();
        assert_eq!(thread.request(&mut out).unwrap(), 2);
        thread.delay().unwrap();
    }
    let before = allocations();
    for _ in 0..1000 {
        out.clear();
        assert_eq!(thread.request(&mut out).unwrap(), 2);
        assert_eq!(thread.delay().unwrap().as_millis(), 3);
    }
    let made = allocations() - before;
    assert_eq!(made, 0, "{made} allocations in 1000 requests");
    assert!(out.starts_with(b"GET /1 HTTP/1.1\r\n"));
}
