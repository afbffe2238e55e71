//! JMeter's option grammar end to end: `-t=FILE -j=FILE -l=FILE`, as
//! Dockerfiles write it, runs the plan and writes the files named after the
//! `=` (CLArgsParser.java, `parseArguments`: a `=` after a short option is
//! skipped), and `-G` (sent only to remote engines, JMeter.java's
//! initializeProperties) is accepted with one note on one machine.

#[path = "jmeter_support/mod.rs"]
mod support;

use stampede_testkit::{answer_each_request, temp_dir, text, RawServer};
use support::{jmeter, testdata};

const PLAN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="forms"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Once">
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
          <stringProp name="LoopController.loops">${__P(loops,1)}</stringProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="get">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">${__P(port)}</stringProp>
          <stringProp name="HTTPSampler.path">/</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#;

#[test]
fn files_after_an_equals_sign_and_properties_files_in_order() {
    let server = RawServer::start(|stream| {
        answer_each_request(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    });
    let dir = temp_dir("jmeter-option-forms");
    let plan = dir.join("forms.jmx");
    std::fs::write(&plan, PLAN).unwrap();
    // user.properties sets loops=5; the -J after it sets 3 (later wins).
    let user = dir.join("user.properties");
    std::fs::write(&user, format!("port={}\nloops=5\n", server.addr().port())).unwrap();
    let (jtl, log) = (dir.join("forms.jtl"), dir.join("jmeter.log"));
    let arg = |flag: &str, path: &std::path::Path| format!("{flag}={}", path.display());
    let out = jmeter(&[
        "-n",
        &arg("-t", &plan),
        &arg("-j", &log),
        &arg("-l", &jtl),
        &arg("-q", &user),
        "-J",
        "loops=3",
        "-Gremote=1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&jtl).expect("the JTL at the path after '='");
    assert_eq!(body.lines().skip(1).count(), 3, "{body}");
    let notes = std::fs::read_to_string(&log).expect("the -j file at the path after '='");
    assert!(
        notes.contains("ignored on one machine: -G remote=1"),
        "{notes}"
    );
}

#[test]
fn bad_options_still_get_one_line() {
    let plan = testdata("shop.jmx");
    let line = support::refused(&["-n", &format!("-t={plan}"), "-t", &plan, "--dry-run"]);
    assert!(
        line.contains("duplicate options for -t/--testfile"),
        "{line}"
    );
    let line = support::refused(&["-n", "-t"]);
    assert!(line.contains("missing argument to option -t"), "{line}");
}
