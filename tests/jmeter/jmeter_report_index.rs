//! `stampede jmeter -e -o DIR` with several thread groups: each group's
//! report in `DIR/group-N.html` and `DIR/index.html` over all of them
//! (each group's figures, linked to its page), as JMeter's `-o` folder
//! always has an index.html.

use stampede_testkit::jmeter as support;

use stampede_testkit::{temp_dir, text, ServeProcess};
use support::{jmeter, testdata};

#[test]
fn a_plan_with_several_thread_groups_gets_an_index_page() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("jmeter-report-index");
    let report = dir.join("report");
    let (plan, report_arg) = (testdata("session.jmx"), report.display().to_string());
    let port = format!("-Jport={}", serve.port);
    let out = jmeter(&[
        "-n",
        "-t",
        &plan,
        &port,
        "-Jthreads=1",
        "-Jloops=1",
        "-Jduration=1",
        "-e",
        "-o",
        &report_arg,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for n in [1, 2] {
        assert!(
            report.join(format!("group-{n}.html")).is_file(),
            "group {n}"
        );
    }
    let index = std::fs::read_to_string(report.join("index.html")).expect("index.html written");
    assert!(
        index.starts_with("<!doctype html>"),
        "{}",
        &index[..100.min(index.len())]
    );
    for link in ["href=\"group-1.html\"", "href=\"group-2.html\""] {
        assert!(index.contains(link), "{link} in the index");
    }
    for group in ["Shoppers", "Pollers"] {
        assert!(index.contains(&format!(">{group}</td>")), "{group}'s row");
    }
}
