//! Small user-facing defects a new user's trial found (D15), each checked
//! where the user sees it: the front-ends' closing line, TLS failures'
//! class and reason, flags quoted in messages, `compare`'s warnings, and
//! refusing flags that cannot work together.

use stampede_testkit::{one_thread, spawn_target, stampede, text};

/// A run whose only requests were still in flight at its end has no
/// errors to list: the closing line shows no empty `(errors: )`.
#[test]
fn a_run_without_errors_lists_none() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/delay/3000", target.local_addr());
    let out = stampede(&["wrk", "-c", "2", "-t", "1", "-d", "1", "--timeout", "10", &url]);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(shown.contains("no complete responses; "), "{shown}");
    assert!(!shown.contains("(errors: )"), "{shown}");
}
