//! `thread:stop()` counts what wrk counts (trial D15: stop.lua counted 202
//! where wrk counts 200). wrk's `thread:stop()` stops the thread's event
//! loop after the events at hand: a response still in flight on another
//! connection is never read, so it is not counted. stampede's worker ends
//! the same way: what is in flight is left unfinished, not waited for.

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, require_tool, spawn_target, TargetConfig};
use support::script;

/// One thread, three connections: the first request is answered at once,
/// the other two after 700 ms; the first response stops the thread. FIRST
/// is the call of the first request sent: 1, or 2 for real wrk, which calls
/// thread 1's request() once before the run to check it (docs/lua.md).
const STOP_ON_FIRST: &str = r#"
local n = 0
function request()
   n = n + 1
   if n == FIRST then return wrk.format(nil, "/") end
   return wrk.format(nil, "/delay/700")
end
function response()
   wrk.thread:stop()
end
"#;

fn requests_line(stdout: &str) -> String {
    stdout
        .lines()
        .find(|l| l.contains(" requests in "))
        .unwrap_or_else(|| panic!("no requests line: {stdout}"))
        .trim()
        .to_string()
}

/// `program` (`first` its first words: `wrk` for `stampede wrk`) running
/// [`STOP_ON_FIRST`]: its "N requests in" line.
fn stop_on_first(program: &std::path::Path, first: &[&str], first_call: u32) -> String {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let code = STOP_ON_FIRST.replace("FIRST", &first_call.to_string());
    let file = script("stop-first.lua", &code);
    let mut words = first.to_vec();
    words.extend(["-t1", "-c3", "-d2s", "-s", file.to_str().unwrap(), &url]);
    let (code, stdout, stderr) = support::run(program, &words);
    assert_eq!(code, Some(0), "{}: {stderr}", program.display());
    requests_line(&stdout)
}

#[test]
fn responses_in_flight_at_thread_stop_are_not_counted() {
    let ours = stop_on_first(binary(), &["wrk"], 1);
    assert!(ours.starts_with("1 requests in "), "{ours}");
    let wrk = require_tool!("wrk");
    let theirs = stop_on_first(&wrk, &[], 2);
    assert!(theirs.starts_with("1 requests in "), "wrk: {theirs}");
}
