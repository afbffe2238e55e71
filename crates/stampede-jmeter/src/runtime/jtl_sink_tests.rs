//! Tests of the JTL sink (jtl_sink.rs): a sample's line names its step
//! and its first failed check.

use super::*;
use stampede_engine::StepWork;
use stampede_metrics::{Judged, Outcome};
use stampede_workload::CheckSet;
use std::time::{Instant, SystemTime};

fn step(name: &str, checks: &[&str]) -> StepWork {
    StepWork {
        name: Some(name.to_string()),
        checks: CheckSet::parse(checks).unwrap(),
        ..StepWork::default()
    }
}

#[test]
fn lines_name_their_step_and_the_checks_that_failed() {
    let dir = stampede_testkit::temp_dir("jtl-sink");
    let path = dir.join("r.jtl");
    let shared = open_jtl(&path, false).unwrap();
    let spec = WorkloadSpec {
        steps: vec![
            step("login", &["status == 200", "body contains \"token\""]),
            step("me", &["status == 200", "header(X-User) exists"]),
        ],
        ..WorkloadSpec::default()
    };
    // Both groups running: allThreads counts the other group's 2 too.
    let active = ActiveGroups::new([2, 5]);
    active.started(0);
    let labels = GroupLabels {
        group: "Users".into(),
        number: 2,
        threads: 5,
        active,
    };
    let urls = vec!["http://h/login".to_string(), "http://h/me".to_string()];
    let names = vec!["login".to_string(), "me".to_string()];
    let shared_again = shared.clone();
    let mut sink = JtlSink::new(shared, labels, Some(&spec), names, urls, &[]);
    let start = Instant::now();
    let clock = RunClock {
        measure_start: start,
        measure_start_wall: SystemTime::now(),
    };
    let outcome = Outcome {
        intended: start,
        sent: start,
        first_byte: Some(start + Duration::from_millis(3)),
        done: start + Duration::from_millis(5),
        result: Ok(200),
        bytes_received: 99,
        body_bytes: 10,
        target: 1,
        // Checks 2 and 3 of the run are the second step's; the second failed.
        judged: Some(Judged {
            first: 2,
            count: 2,
            failed: 0b10,
        }),
    };
    let request = LoggedRequest {
        worker: 0,
        outcome,
        connect: Some(Duration::from_millis(1)),
        user: 0,
        request_target: None,
    };
    sink.write(&request, &clock).unwrap();
    sink.finish().unwrap();
    close_jtl(&shared_again).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text.lines().nth(1).unwrap();
    let fields: Vec<&str> = line.split(',').collect();
    assert_eq!(
        fields[1..9],
        [
            "5",
            "me",
            "200",
            "OK",
            "Users 2-1",
            "text",
            "false",
            "check failed: header(X-User) exists"
        ]
    );
    assert_eq!(
        fields[9..],
        ["99", "0", "5", "7", "http://h/me", "3", "0", "1"]
    );
}
