//! `stampede jmeter` plans: .jmx files written the way JMeter 5 writes
//! them (crates/stampede-jmeter/testdata) mapped with `--dry-run`, every
//! bad-input case refused in one line with exit status 2 before any
//! request, unmappable elements listed, and JMeter's flags accepted or
//! refused. The runs are in jmeter_runs.rs.

use stampede_testkit::jmeter as support;

use stampede_testkit::{temp_dir, text};
use support::{jmeter, refused, testdata};

#[test]
fn dry_run_prints_the_scenario_with_properties_folded_in() {
    let plan = testdata("shop.jmx");
    let out = jmeter(&[
        "-n",
        "-t",
        &plan,
        "-Jport=9321",
        "-J",
        "threads=7",
        "--dry-run",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        stdout.starts_with("# stampede scenario mapped from "),
        "{stdout}"
    );
    assert!(stdout.contains("connections = 7"), "{stdout}");
    assert!(
        stdout.contains("url = \"http://127.0.0.1:9321/login\""),
        "{stdout}"
    );
    assert!(
        !stdout.contains("/never"),
        "the disabled sampler is left out: {stdout}"
    );
    assert!(
        stdout.contains(&format!("file = \"{}\"", testdata("users.csv"))),
        "{stdout}"
    );
    // The listener's own file is named once, and not written.
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("listeners' files are not written (results-tree.jtl)"),
        "{stderr}"
    );
    // What --dry-run prints runs as a scenario file: kept, it parses the same.
    let dir = temp_dir("jmeter-dry-run");
    let kept = dir.join("shop.toml");
    std::fs::write(&kept, &stdout).unwrap();
    let again = stampede_workload::Scenario::load(&kept, &[]).unwrap();
    assert_eq!(again.groups.len(), 2);
}

#[test]
fn property_files_come_before_j_properties() {
    let dir = temp_dir("jmeter-props");
    let props = dir.join("run.properties");
    std::fs::write(&props, "port=7001\nthreads=3\n").unwrap();
    let plan = testdata("shop.jmx");
    let props = props.display().to_string();
    let out = jmeter(&["-n", "-t", &plan, "-q", &props, "-Jthreads=4", "--dry-run"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("127.0.0.1:7001/login"), "{stdout}");
    assert!(
        stdout.contains("connections = 4"),
        "-J wins over -q: {stdout}"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = temp_dir("jmeter-bad");
    let not_a_plan = dir.join("notes.jmx");
    std::fs::write(&not_a_plan, "<html><body/></html>").unwrap();
    let not_a_plan = not_a_plan.display().to_string();
    assert!(
        refused(&["-n", "-t", &not_a_plan, "--dry-run"])
            .ends_with("not a JMeter test plan: the root element is <html>, not <jmeterTestPlan>"),
        "{}",
        refused(&["-n", "-t", &not_a_plan, "--dry-run"])
    );
    let shop = std::fs::read_to_string(testdata("shop.jmx")).unwrap();
    std::fs::copy(testdata("users.csv"), dir.join("users.csv")).unwrap();
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let no_threads = write(
        "no-threads.jmx",
        shop.replace(
            "<stringProp name=\"ThreadGroup.num_threads\">1</stringProp>",
            "",
        ),
    );
    assert!(
        refused(&["-n", "-t", &no_threads, "--dry-run"])
            .ends_with("'Pollers' (ThreadGroup): the required property ThreadGroup.num_threads is missing or empty")
    );
    let no_csv = write("no-csv.jmx", shop.replace("users.csv", "data/users.csv"));
    let line = refused(&["-n", "-t", &no_csv, "--dry-run"]);
    let resolved = dir.join("data/users.csv").display().to_string();
    assert!(
        line.contains(&format!(
            "CSV file 'data/users.csv' (resolved to {resolved}): cannot read"
        )),
        "{line}"
    );
    let no_default = write(
        "no-default.jmx",
        shop.replace("${__P(threads,2)}", "${__P(threads)}"),
    );
    assert!(refused(&["-n", "-t", &no_default, "--dry-run"]).ends_with(
        "${__P(threads)}: property threads has no value (give -Jthreads=VALUE) and no default"
    ));
    let missing = dir.join("none.jmx").display().to_string();
    assert!(refused(&["-n", "-t", &missing]).contains("none.jmx: cannot read"));
}

#[test]
fn unmappable_elements_are_listed_and_refused_unless_skipped() {
    let dir = temp_dir("jmeter-unsupported");
    let shop = std::fs::read_to_string(testdata("shop.jmx")).unwrap();
    std::fs::copy(testdata("users.csv"), dir.join("users.csv")).unwrap();
    let groovy = r#"<JSR223PreProcessor guiclass="TestBeanGUI" testclass="JSR223PreProcessor" testname="sign request">
          <stringProp name="scriptLanguage">groovy</stringProp>
        </JSR223PreProcessor>
        <hashTree/>
        <CSVDataSet"#;
    let plan = dir.join("groovy.jmx");
    std::fs::write(&plan, shop.replacen("<CSVDataSet", groovy, 1)).unwrap();
    let plan = plan.display().to_string();
    let out = jmeter(&["-n", "-t", &plan, "--dry-run"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot map ")
            && stderr.contains(
                "'sign request' (JSR223PreProcessor): a script element: stampede runs no"
            ),
        "{stderr}"
    );
    assert!(stderr.contains("1 element(s) of"), "{stderr}");
    assert!(text(&out.stdout).is_empty(), "nothing printed or run");
    let skipped = jmeter(&["-n", "-t", &plan, "--dry-run", "--skip-unsupported"]);
    assert_eq!(skipped.status.code(), Some(0), "{}", text(&skipped.stderr));
    assert!(text(&skipped.stdout).contains("name = \"login\""));
    assert!(
        text(&skipped.stderr).contains("every HTTP sampler still sends its requests"),
        "{}",
        text(&skipped.stderr)
    );
}

/// --skip-unsupported skips the smallest unit: an assertion stampede
/// cannot check (NOT on the body) is left out and its sampler still runs,
/// and the notes say so.
#[test]
fn skipping_an_unsupported_assertion_keeps_its_sampler() {
    let dir = temp_dir("jmeter-skip-assertion");
    let shop = std::fs::read_to_string(testdata("shop.jmx")).unwrap();
    std::fs::copy(testdata("users.csv"), dir.join("users.csv")).unwrap();
    let not_body = r#"<ResponseAssertion guiclass="AssertionGui" testclass="ResponseAssertion" testname="no error">
          <collectionProp name="Asserion.test_strings"><stringProp name="1">error</stringProp></collectionProp>
          <stringProp name="Assertion.test_field">Assertion.response_data</stringProp>
          <intProp name="Assertion.test_type">20</intProp>
        </ResponseAssertion>
        <hashTree/>
        <CSVDataSet"#;
    let plan = dir.join("not.jmx");
    std::fs::write(&plan, shop.replacen("<CSVDataSet", not_body, 1)).unwrap();
    let plan = plan.display().to_string();
    let out = jmeter(&["-n", "-t", &plan, "--dry-run", "--skip-unsupported"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("'no error' (ResponseAssertion): ")
            && stderr.contains("runs the samplers in its scope without this assertion"),
        "{stderr}"
    );
    assert!(!stderr.contains("(HTTPSamplerProxy)"), "{stderr}");
    assert!(
        stderr.contains("every HTTP sampler still sends its requests"),
        "{stderr}"
    );
    let scenario = text(&out.stdout);
    assert!(
        scenario.contains("name = \"login\"") && scenario.contains("name = \"item\""),
        "{scenario}"
    );
}

#[test]
fn flags_are_accepted_or_refused_with_one_line() {
    let plan = testdata("shop.jmx");
    for (flag, expected) in [
        ("-Z", "jmeter: unknown option -Z"),
        ("-r", "jmeter -r: not supported: remote engines"),
        ("--nosuchflag", "jmeter: unknown option --nosuchflag"),
    ] {
        let line = refused(&["-n", "-t", &plan, flag, "--dry-run"]);
        assert!(line.contains(expected), "{flag}: {line}");
    }
    assert!(refused(&["-n", "-t", &plan, "-e"]).contains("-e needs -o DIR"));
    // -G goes only to remote engines in JMeter (JMeter.java,
    // initializeProperties): accepted, and ignored with a note.
    let global = jmeter(&["-n", "-t", &plan, "-Gport=1", "--dry-run"]);
    assert_eq!(global.status.code(), Some(0), "{}", text(&global.stderr));
    assert!(text(&global.stderr).contains("ignored on one machine: -G port=1"));
    let help = jmeter(&["-h"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(text(&help.stdout).contains("Examples:"));
    // -j: stampede's own lines go to the file, not stderr.
    let dir = temp_dir("jmeter-log");
    let log = dir.join("stampede.log");
    let log_arg = log.display().to_string();
    let out = jmeter(&["-n", "-t", &plan, "-j", &log_arg, "--dry-run"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !text(&out.stderr).contains("listeners"),
        "{}",
        text(&out.stderr)
    );
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("listeners' files are not written"));
}

// JMeter's option grammar end to end: `-t=FILE -j=FILE -l=FILE`, as
// Dockerfiles write it, runs the plan and writes the files named after the
// `=` (CLArgsParser.java, `parseArguments`: a `=` after a short option is
// skipped), and `-G` (sent only to remote engines, JMeter.java's
// initializeProperties) is accepted with one note on one machine.
mod option_forms {
    use crate::jmeter_plans::support::{jmeter, testdata};
    use stampede_testkit::{answer_each_request, temp_dir, text, RawServer};

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
        let line = crate::jmeter_plans::support::refused(&[
            "-n",
            &format!("-t={plan}"),
            "-t",
            &plan,
            "--dry-run",
        ]);
        assert!(
            line.contains("duplicate options for -t/--testfile"),
            "{line}"
        );
        let line = crate::jmeter_plans::support::refused(&["-n", "-t"]);
        assert!(line.contains("missing argument to option -t"), "{line}");
    }
}
