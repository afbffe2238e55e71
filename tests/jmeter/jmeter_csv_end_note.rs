//! A thread group that loops forever with no scheduler, fed by a CSV Data
//! Set read once (recycle=false, stopThread=true), ends when the file's
//! rows run out: the plan's notes say so instead of "runs until
//! interrupted (Ctrl-C)", which stays the note of a truly endless group.

use stampede_testkit::jmeter as support;

use stampede_testkit::{temp_dir, text};
use support::jmeter;

fn plan(recycle: bool) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="2.8" jmeter="2.13 r1665067">
<hashTree>
<TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="P"/>
<hashTree><ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="C">
  <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
  <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller">
    <boolProp name="LoopController.continue_forever">false</boolProp>
    <stringProp name="LoopController.loops">-1</stringProp>
  </elementProp>
  <stringProp name="ThreadGroup.num_threads">2</stringProp>
  <stringProp name="ThreadGroup.ramp_time">0</stringProp>
  <boolProp name="ThreadGroup.scheduler">false</boolProp><stringProp name="ThreadGroup.duration"></stringProp><stringProp name="ThreadGroup.delay"></stringProp>
</ThreadGroup>
<hashTree><CSVDataSet guiclass="TestBeanGUI" testclass="CSVDataSet" testname="CSV">
  <stringProp name="delimiter">,</stringProp>
  <stringProp name="filename">rows.csv</stringProp>
  <boolProp name="recycle">{recycle}</boolProp>
  <stringProp name="shareMode">shareMode.all</stringProp>
  <boolProp name="stopThread">true</boolProp>
  <stringProp name="variableNames">rid</stringProp>
</CSVDataSet><hashTree/><HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="s1">
  <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
  <stringProp name="HTTPSampler.port">9</stringProp>
  <stringProp name="HTTPSampler.protocol">http</stringProp>
  <stringProp name="HTTPSampler.path">/?rid=${{rid}}</stringProp>
  <stringProp name="HTTPSampler.method">GET</stringProp>
</HTTPSamplerProxy>
<hashTree/></hashTree></hashTree>
</hashTree>
</jmeterTestPlan>
"#
    )
}

/// `stampede jmeter --dry-run`'s stderr for the plan.
fn notes(recycle: bool) -> String {
    let dir = temp_dir(&format!("jmeter-csv-end-note-{recycle}"));
    std::fs::write(dir.join("rows.csv"), "1\n2\n3\n").unwrap();
    let path = dir.join("csv.jmx");
    std::fs::write(&path, plan(recycle)).unwrap();
    let path = path.display().to_string();
    let out = jmeter(&["-n", "-t", &path, "--dry-run"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

#[test]
fn a_csv_read_once_ends_an_endless_loop() {
    let stderr = notes(false);
    assert!(!stderr.contains("Ctrl-C"), "{stderr}");
    assert!(
        stderr.contains(
            "loops forever with no scheduler duration: it ends when the CSV file's rows run out"
        ),
        "{stderr}"
    );
}

#[test]
fn a_recycled_csv_leaves_the_loop_endless() {
    let stderr = notes(true);
    assert!(
        stderr.contains("runs until interrupted (Ctrl-C)"),
        "{stderr}"
    );
}
