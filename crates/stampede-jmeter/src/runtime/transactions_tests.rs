//! Tests of the transaction samples ([`super`]): one line per pass through a
//! Transaction Controller, its timing and its verdict, as JMeter 2.13 writes them.

use super::*;

fn child(start_ms: u64, success: bool) -> Child<'static> {
    Child {
        start_ms,
        elapsed_ms: 10,
        latency_ms: 5,
        connect_ms: 0,
        bytes: 100,
        sent_bytes: 0,
        success,
        code: if success { "200" } else { "500" },
        thread: "G 1-1",
    }
}

#[test]
fn a_pass_whose_last_sampler_is_skipped_ends_at_the_next_pass_or_the_run_end() {
    let tx = Transaction {
        name: "T".into(),
        parent: false,
        include_timers: false,
        line: 9,
    };
    // Steps 0 and 1 in T (1 a Once Only sampler, say), 2 outside.
    let mut t = Transactions::new(&[vec![tx.clone()], vec![tx], vec![]]);
    assert!(t.sample(7, 0, &child(0, true)).before.is_empty());
    let done = t.sample(7, 1, &child(20, false));
    let first = done.after.first().expect("its last sampler ends the pass");
    assert_eq!((first.elapsed_ms, first.idle_ms), (20, 10));
    assert_eq!(first.code, "");
    // Second pass: step 1 skipped, step 0 again ends the one before.
    assert!(t.sample(7, 0, &child(100, true)).after.is_empty());
    let next = t.sample(7, 0, &child(200, true));
    let second = next.before.first().expect("back at its start: a new pass");
    assert_eq!(second.start_ms, 30, "after the user's previous sample");
    assert!(second.success && second.code == "200");
    assert!(next.write_child);
    let left = t.finish();
    assert_eq!(left.len(), 1, "the run's end closes the open pass");
    assert!(left[0]
        .message
        .ends_with("transaction : 1, number of failing samples : 0"));
}

#[test]
fn nested_controllers_each_write_their_pass_inner_first() {
    let tx = |name: &str, line| Transaction {
        name: name.into(),
        parent: false,
        include_timers: true,
        line,
    };
    let (outer, inner) = (tx("Outer", 1), tx("Inner", 2));
    // Outer: steps 0, 1, 2; Inner: steps 1 and 2.
    let chains = [
        vec![outer.clone()],
        vec![outer.clone(), inner.clone()],
        vec![outer, inner],
    ];
    let mut t = Transactions::new(&chains);
    t.sample(1, 0, &child(0, true));
    t.sample(1, 1, &child(20, false));
    let done = t.sample(1, 2, &child(40, true));
    let labels: Vec<&str> = done.after.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["Inner", "Outer"]);
    assert!(done.after[0]
        .message
        .contains("transaction : 2, number of failing samples : 1"));
    assert!(done.after[1]
        .message
        .contains("transaction : 3, number of failing samples : 1"));
    assert_eq!((done.after[1].start_ms, done.after[1].elapsed_ms), (0, 50));
    assert!(t.finish().is_empty());
}
