//! A thread group paced by a Constant Throughput Timer runs on the open
//! model, and its threads still cap the requests in flight, as in JMeter
//! (5 threads never have more than 5 requests out): against a server that
//! takes 200 ms per request, a rate 4 times what 5 threads can carry keeps
//! at most 5 in flight, and the arrivals that wait are counted (their wait
//! in latency, the unsent ones as `not_sent`).

use stampede_testkit::jmeter as support;

use stampede_testkit::{read_json, read_request_head, temp_dir, text, RawServer};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::jmeter;

const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="cap"/>
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

#[test]
fn a_throughput_timers_threads_cap_the_requests_in_flight() {
    let in_flight = Arc::new(AtomicU64::new(0));
    let most = Arc::new(AtomicU64::new(0));
    let served = Arc::new(AtomicU64::new(0));
    let (now, peak, count) = (in_flight.clone(), most.clone(), served.clone());
    let server = RawServer::start(move |mut stream| {
        while read_request_head(&mut stream) {
            let current = now.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(current, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(200));
            now.fetch_sub(1, Ordering::SeqCst);
            count.fetch_add(1, Ordering::SeqCst);
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if stream.write_all(reply).is_err() {
                return;
            }
        }
    });
    let dir = temp_dir("jmeter-throughput-cap");
    let plan = dir.join("cap.jmx");
    std::fs::write(&plan, PLAN).unwrap();
    let json = dir.join("cap.json");
    let port = format!("-Jport={}", server.addr().port());
    let (plan_arg, json_arg) = (plan.display().to_string(), json.display().to_string());
    let out = jmeter(&["-n", "-t", &plan_arg, &port, "--stampede-json", &json_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let peak = most.load(Ordering::SeqCst);
    let served = served.load(Ordering::SeqCst);
    assert!(peak <= 5, "{peak} requests in flight with 5 threads");
    // 5 threads at 200 ms carry 25/s; generous for a busy machine.
    assert!(
        (3..=5).contains(&peak) && served >= 10,
        "the threads were used: peak {peak}, {served} served"
    );
    let result = read_json(&json);
    let not_sent = result
        .pointer("/schedule/not_sent")
        .and_then(|v| v.as_u64())
        .unwrap_or_else(|| panic!("no schedule.not_sent: {result}"));
    // 200 intended in 2 s, at most ~50 carried: the rest waited unsent.
    assert!(not_sent >= 100, "{not_sent} of 200 intended were not sent");
    let p50_ms = result
        .pointer("/latency_us/p50")
        .and_then(|v| v.as_u64())
        .unwrap_or_else(|| panic!("no latency_us.p50: {result}"))
        / 1000;
    assert!(
        p50_ms > 250,
        "the backlog's wait counts in latency: p50 {p50_ms} ms"
    );
}
