//! JTL `allThreads` counts the threads of the groups running at a
//! sample's time: with a quick group A (2 threads × 5 loops) beside a slow
//! group B (3 threads × 4 loops of 100 ms), B's samples after A has ended
//! say 3, not the plan's 5 (stampede drops a group's threads together when
//! its run ends; JMeter drops them one by one).

use stampede_testkit::jmeter as support;

use stampede_testkit::{read_request_head, temp_dir, text, RawServer};
use std::io::{Read, Write};
use std::time::Duration;
use support::jmeter;

fn group(name: &str, threads: u32, loops: u32, path: &str) -> String {
    format!(
        r#"<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="{name}">
  <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
  <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
    <boolProp name="LoopController.continue_forever">false</boolProp>
    <stringProp name="LoopController.loops">{loops}</stringProp>
  </elementProp>
  <stringProp name="ThreadGroup.num_threads">{threads}</stringProp>
  <stringProp name="ThreadGroup.ramp_time">0</stringProp>
  <boolProp name="ThreadGroup.scheduler">false</boolProp>
</ThreadGroup>
<hashTree><HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="{name}1">
  <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
  <stringProp name="HTTPSampler.port">${{__P(port)}}</stringProp>
  <stringProp name="HTTPSampler.protocol">http</stringProp>
  <stringProp name="HTTPSampler.path">{path}</stringProp>
  <stringProp name="HTTPSampler.method">GET</stringProp>
  <boolProp name="HTTPSampler.use_keepalive">true</boolProp>
</HTTPSamplerProxy>
<hashTree/></hashTree>"#
    )
}

#[test]
fn all_threads_drops_when_a_group_ends() {
    let server = RawServer::start(|mut stream| {
        let mut head = [0u8; 5];
        // "GET /slow" or "GET / ": the fifth byte tells them apart.
        while stream.peek(&mut head).is_ok_and(|n| n == 5) {
            let slow = head[4] == b'/' && {
                let mut more = [0u8; 6];
                stream
                    .peek(&mut more)
                    .is_ok_and(|n| n == 6 && more[5] == b's')
            };
            if !read_request_head(&mut stream) {
                return;
            }
            if slow {
                std::thread::sleep(Duration::from_millis(100));
            }
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if stream.write_all(reply).is_err() {
                return;
            }
        }
        let _ = stream.read(&mut [0u8; 1]);
    });
    let plan = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="2.8" jmeter="2.13 r1665067">
<hashTree>
<TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="P"/>
<hashTree>{}{}</hashTree>
</hashTree>
</jmeterTestPlan>
"#,
        group("A", 2, 5, "/"),
        group("B", 3, 4, "/slow")
    );
    let dir = temp_dir("jmeter-all-threads");
    let path = dir.join("two.jmx");
    std::fs::write(&path, plan).unwrap();
    let jtl = dir.join("two.jtl");
    let port = format!("-Jport={}", server.addr().port());
    let (plan_arg, jtl_arg) = (path.display().to_string(), jtl.display().to_string());
    let out = jmeter(&["-n", "-t", &plan_arg, &port, "-l", &jtl_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&jtl).unwrap();
    let mut lines = body.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (at, took, label, all) = (
        column("timeStamp"),
        column("elapsed"),
        column("label"),
        column("allThreads"),
    );
    let rows: Vec<(u64, u64, String, u32)> = lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (
                f[at].parse().unwrap(),
                f[took].parse().unwrap(),
                f[label].to_string(),
                f[all].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 10 + 12, "{body}");
    assert!(rows.iter().all(|r| r.3 <= 5), "{body}");
    let a_end = rows
        .iter()
        .filter(|r| r.2 == "A1")
        .map(|r| r.0 + r.1)
        .max()
        .unwrap();
    // Generous: A's run ends shortly after its last sample.
    let after: Vec<_> = rows
        .iter()
        .filter(|r| r.2 == "B1" && r.0 > a_end + 150)
        .collect();
    assert!(!after.is_empty(), "B ran on after A:\n{body}");
    assert!(after.iter().all(|r| r.3 == 3), "after A ended:\n{body}");
}
