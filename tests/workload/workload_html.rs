//! The HTML report shows a run's checks (pass share, counts, failing
//! values) and a scenario's groups, as the text summary does.

use stampede_testkit::{binary, one_thread, run_stampede, spawn_target, temp_dir};

#[test]
fn the_html_report_has_the_checks_and_their_failing_values() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("workload-html");
    let html = dir.join("report.html");
    let url = format!(
        "http://{}/status/{{{{rand_int 200 201}}}}",
        target.local_addr()
    );
    let run = run_stampede(
        binary(),
        &[
            &url,
            "-n",
            "60",
            "-c",
            "2",
            "-t",
            "1",
            "--check",
            "status == 200",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let failed = run.count("/requests/check_failed");
    assert!(
        failed > 0 && failed < 60,
        "rand_int 200 201 fails some: {failed}"
    );
    let page = std::fs::read_to_string(&html).expect("the report is written");
    assert!(page.contains("<h2>Checks</h2>"), "no Checks section");
    assert!(page.contains("status == 200"), "the check is named");
    assert!(
        page.contains("failed a check"),
        "the requests table has the class"
    );
    assert!(page.contains(">201<"), "the failing value is shown");
}
