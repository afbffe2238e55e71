//! A Constant Throughput Timer with a loop count sends exactly threads ×
//! loops × samplers samples, paced by the timer. In JMeter the timer only
//! delays each sample (src/components/src/main/java/org/apache/jmeter/
//! timers/ConstantThroughputTimer.java, `delay()`: the wait until the
//! thread's next scheduled time) while the thread group's loop controller
//! counts the passes (src/core/src/main/java/org/apache/jmeter/control/
//! LoopController.java, `next()`/`endOfLoop()`): 4 threads × 10 loops at
//! 1000/min over all active threads (16.667/s) is 40 samples, in about
//! 2.4 s. The count was once turned into a duration rounded up to whole
//! seconds (3 s at 16.667/s: 50 samples, 25% more than the plan).

#[path = "jmeter_support/mod.rs"]
mod support;

use stampede_testkit::{read_request_head, temp_dir, text, RawServer};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use support::jmeter;

const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="counted"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Paced">
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">10</stringProp>
          <boolProp name="LoopController.continue_forever">false</boolProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">4</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
        <boolProp name="ThreadGroup.scheduler">false</boolProp>
      </ThreadGroup>
      <hashTree>
        <ConstantThroughputTimer guiclass="TestBeanGUI" testclass="ConstantThroughputTimer" testname="1000 per minute">
          <intProp name="calcMode">1</intProp>
          <doubleProp><name>throughput</name><value>1000.0</value><savedValue>0.0</savedValue></doubleProp>
        </ConstantThroughputTimer>
        <hashTree/>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="get">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">/</stringProp>
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
fn a_loop_count_under_a_throughput_timer_is_a_count() {
    let served = Arc::new(AtomicU64::new(0));
    let count = served.clone();
    let server = RawServer::start(move |mut stream| {
        while read_request_head(&mut stream) {
            count.fetch_add(1, Ordering::SeqCst);
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if stream.write_all(reply).is_err() {
                return;
            }
        }
    });
    let dir = temp_dir("jmeter-ctt-loop-count");
    let plan = dir.join("counted.jmx");
    std::fs::write(&plan, PLAN).unwrap();
    let jtl = dir.join("counted.jtl");
    let port = format!("-Jport={}", server.addr().port());
    let (plan_arg, jtl_arg) = (plan.display().to_string(), jtl.display().to_string());
    let started = std::time::Instant::now();
    let out = jmeter(&["-n", "-t", &plan_arg, &port, "-l", &jtl_arg]);
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let body = std::fs::read_to_string(&jtl).unwrap();
    let samples = body.lines().skip(1).count();
    assert_eq!(samples, 40, "4 threads × 10 loops:\n{body}");
    assert_eq!(served.load(Ordering::SeqCst), 40, "the server's count");
    // Paced by the timer: the 40th is due at 39/16.667 s = 2.34 s.
    assert!(
        took.as_secs_f64() >= 2.2,
        "40 samples at 16.667/s took {took:?}"
    );
    assert!(!stderr.contains("the group runs for"), "{stderr}");
}
