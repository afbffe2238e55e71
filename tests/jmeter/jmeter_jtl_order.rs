//! The JTL comes out in completion order, as JMeter writes it (each sample
//! when it ends, across all threads), though the engine's workers hand
//! their lines over in per-worker batches: with 10 threads on random
//! delays for about 2 s (longer than a line is held back), `timeStamp +
//! elapsed` never goes backwards by more than a couple of milliseconds
//! down the file, and no line is lost.

use stampede_testkit::jmeter as support;

use stampede_testkit::{read_json, temp_dir, text, ServeProcess};
use support::jmeter;

const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="order"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Mixed">
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">100</stringProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">10</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="random delay">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.path">/delay/${__Random(1,40)}</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

#[test]
fn jtl_lines_are_in_completion_order() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("jmeter-jtl-order");
    let (plan, jtl, json) = (dir.join("o.jmx"), dir.join("o.jtl"), dir.join("o.json"));
    std::fs::write(&plan, PLAN).unwrap();
    let port = format!("-Jport={}", serve.port);
    let [plan_arg, jtl_arg, json_arg] = [&plan, &jtl, &json].map(|p| p.display().to_string());
    let out = jmeter(&[
        "-n",
        "-t",
        &plan_arg,
        "-l",
        &jtl_arg,
        &port,
        "--stampede-json",
        &json_arg,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let data = std::fs::read_to_string(&jtl).unwrap();
    let ends: Vec<u64> = data
        .lines()
        .skip(1)
        .map(|line| {
            let mut fields = line.split(',');
            let start: u64 = fields.next().unwrap().parse().unwrap();
            let elapsed: u64 = fields.next().unwrap().parse().unwrap();
            start + elapsed
        })
        .collect();
    assert_eq!(
        ends.len(),
        1000,
        "10 threads x 100 loops, every line written"
    );
    let result = read_json(&json);
    assert_eq!(result["request_log"]["dropped"].as_u64(), Some(0));
    let mut latest = 0u64;
    let mut worst = 0;
    for &end in &ends {
        worst = worst.max(latest.saturating_sub(end));
        latest = latest.max(end);
    }
    assert!(worst <= 2, "a line ended {worst} ms before one above it");
}
