//! With a Constant Throughput Timer (an open-model group capped at its
//! thread count) the JTL still measures each sample as JMeter does: from
//! its actual send to its last byte, not from when the timer wanted it
//! sent. Against a server that takes 200 ms, a rate far above what 5
//! threads carry leaves a backlog, yet every sample's `elapsed` stays near
//! 200 ms and one thread's samples never overlap in time.

use stampede_testkit::jmeter as support;

use stampede_testkit::{read_request_head, temp_dir, text, RawServer};
use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;
use support::jmeter;

const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="times"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Paced">
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <intProp name="LoopController.loops">-1</intProp>
          <boolProp name="LoopController.continue_forever">false</boolProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">5</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
        <boolProp name="ThreadGroup.scheduler">true</boolProp>
        <stringProp name="ThreadGroup.duration">2</stringProp>
        <stringProp name="ThreadGroup.delay">0</stringProp>
      </ThreadGroup>
      <hashTree>
        <ConstantThroughputTimer guiclass="TestBeanGUI" testclass="ConstantThroughputTimer" testname="100 per second">
          <intProp name="calcMode">1</intProp>
          <doubleProp><name>throughput</name><value>6000.0</value><savedValue>0.0</savedValue></doubleProp>
        </ConstantThroughputTimer>
        <hashTree/>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="slow">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">/delay/200</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
          <boolProp name="HTTPSampler.use_keepalive">true</boolProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

/// The server's delay per request.
const DELAY_MS: u64 = 200;

#[test]
fn jtl_times_run_from_the_actual_send_under_a_throughput_timer() {
    let server = RawServer::start(|mut stream| {
        while read_request_head(&mut stream) {
            std::thread::sleep(Duration::from_millis(DELAY_MS));
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if stream.write_all(reply).is_err() {
                return;
            }
        }
    });
    let dir = temp_dir("jmeter-ctt-times");
    let plan = dir.join("times.jmx");
    std::fs::write(&plan, PLAN).unwrap();
    let jtl = dir.join("times.jtl");
    let port = format!("-Jport={}", server.addr().port());
    let (plan_arg, jtl_arg) = (plan.display().to_string(), jtl.display().to_string());
    let out = jmeter(&["-n", "-t", &plan_arg, &port, "-l", &jtl_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&jtl).unwrap();
    let mut lines = body.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no {name} column: {header:?}"))
    };
    let (at, took, who) = (column("timeStamp"), column("elapsed"), column("threadName"));
    let mut by_thread: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let start: u64 = fields[at].parse().unwrap();
        let elapsed: u64 = fields[took].parse().unwrap();
        // Generous for a busy machine: the timer's backlog is seconds.
        assert!(
            elapsed < DELAY_MS + 150,
            "elapsed {elapsed} ms against a {DELAY_MS} ms server: {line}"
        );
        by_thread
            .entry(fields[who].to_string())
            .or_default()
            .push((start, elapsed));
    }
    let samples: usize = by_thread.values().map(Vec::len).sum();
    assert!(samples >= 10, "{samples} samples:\n{body}");
    for (thread, mut times) in by_thread {
        times.sort_unstable();
        for pair in times.windows(2) {
            let (first, next) = (pair[0], pair[1]);
            assert!(
                next.0 + 5 >= first.0 + first.1,
                "{thread}'s samples overlap: {first:?} then {next:?}"
            );
        }
    }
}
