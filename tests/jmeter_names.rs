//! Names resolve as JMeter resolves them: before the test starts,
//! PreCompiler.java (`addNode` → ValueReplacer.replaceValues) replaces
//! `${...}` in every element's properties, its name included, so a thread
//! group named `${threadGroupName}` (a User Defined Variable of value
//! `${__P(threadGroupName,Default)}`) run with `-JthreadGroupName=TG` has
//! threads named `TG 1-1` (AbstractThreadGroup.java, `makeThread`: group
//! name, group number, thread number + 1), and a sampler labelled
//! `${__P(label,x)} ${page}` (a property, a User Defined Variable) is
//! reported under the resolved label. `${__threadNum}` is the number after
//! the last `-` of that thread name (ThreadNumber.java): 1 for the first
//! thread, not 0.

#[path = "jmeter_support/mod.rs"]
mod support;

use stampede_testkit::{temp_dir, text, RawServer};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use support::jmeter;

const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="names">
      <elementProp name="TestPlan.user_defined_variables" elementType="Arguments" guiclass="ArgumentsPanel" testclass="Arguments" testname="User Defined Variables">
        <collectionProp name="Arguments.arguments">
          <elementProp name="threadGroupName" elementType="Argument">
            <stringProp name="Argument.name">threadGroupName</stringProp>
            <stringProp name="Argument.value">${__P(threadGroupName,Default)}</stringProp>
            <stringProp name="Argument.metadata">=</stringProp>
          </elementProp>
          <elementProp name="page" elementType="Argument">
            <stringProp name="Argument.name">page</stringProp>
            <stringProp name="Argument.value">home</stringProp>
            <stringProp name="Argument.metadata">=</stringProp>
          </elementProp>
        </collectionProp>
      </elementProp>
    </TestPlan>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="${threadGroupName}">
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">1</stringProp>
          <boolProp name="LoopController.continue_forever">false</boolProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="${__P(label,x)} ${page}">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">/thread/${__threadNum}</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

/// The request line of each request the server answered.
fn recording_server() -> (RawServer, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    let server = RawServer::start(move |mut stream| {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            while !head.ends_with(b"\r\n\r\n") {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => return,
                }
            }
            let request = String::from_utf8_lossy(&head).to_string();
            let line = request.lines().next().unwrap_or("").to_string();
            seen.lock().unwrap().push(line);
            head.clear();
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if stream.write_all(reply).is_err() {
                return;
            }
        }
    });
    (server, lines)
}

#[test]
fn thread_group_and_sampler_names_resolve_and_thread_numbers_count_from_one() {
    let (server, lines) = recording_server();
    let dir = temp_dir("jmeter-names");
    let plan = dir.join("names.jmx");
    std::fs::write(&plan, PLAN).unwrap();
    let jtl = dir.join("names.jtl");
    let port = format!("-Jport={}", server.addr().port());
    let (plan_arg, jtl_arg) = (plan.display().to_string(), jtl.display().to_string());
    let out = jmeter(&[
        "-n",
        "-t",
        &plan_arg,
        &port,
        "-JthreadGroupName=TG",
        "-Jlabel=GET",
        "-l",
        &jtl_arg,
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let body = std::fs::read_to_string(&jtl).unwrap();
    let mut rows = body.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let samples: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert_eq!(samples.len(), 1, "{body}");
    assert_eq!(samples[0][column("threadName")], "TG 1-1", "{body}");
    assert_eq!(samples[0][column("label")], "GET home", "{body}");
    assert!(!body.contains("${"), "{body}");
    assert!(!stderr.contains("${threadGroupName}"), "{stderr}");
    assert_eq!(*lines.lock().unwrap(), ["GET /thread/1 HTTP/1.1"]);
}
