//! testdata/shop.jmx (written the way JMeter 5.6 writes plans) maps onto the
//! scenario it means; elements without an equivalent are listed; bad input
//! is one line.

use super::*;
use crate::model::{Load, OnError, Pause};
use std::path::PathBuf;

pub(crate) fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

pub(crate) fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn shop(pairs: &[(&str, &str)]) -> Plan {
    load(&testdata().join("shop.jmx"), props(pairs)).unwrap()
}

#[test]
fn the_shop_plan_maps_group_by_group() {
    let plan = shop(&[("port", "9123"), ("threads", "4")]);
    assert_eq!(plan.name, "Shop plan");
    assert!(plan.unsupported.is_empty(), "{:?}", plan.unsupported);
    assert_eq!(plan.listener_files, vec!["results-tree.jtl".to_string()]);
    let [browsers, pollers] = &plan.groups[..] else {
        panic!("two groups: {:?}", plan.groups)
    };
    assert_eq!(browsers.threads, 4);
    assert_eq!(browsers.iterations, Some(3));
    assert_eq!(browsers.ramp_up_s, 1);
    assert!(browsers.cookies);
    assert_eq!(
        browsers.think,
        Some(Pause {
            min_ms: 10,
            max_ms: 10
        })
    );
    let feed = &browsers.feeds[0];
    assert_eq!(feed.file, testdata().join("users.csv"));
    assert_eq!(
        feed.columns.as_deref(),
        Some(&["user".to_string(), "pass".to_string()][..])
    );
    let names: Vec<&str> = browsers.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["login", "item"], "the disabled sampler is skipped");
    let login = &browsers.steps[0];
    assert_eq!(login.method, "POST");
    assert_eq!(login.url, "http://127.0.0.1:9123/login");
    assert_eq!(
        login.body.as_deref(),
        Some(r#"{"user":"{{user}}","pass":"{{pass}}","req":"{{uuid}}"}"#)
    );
    assert_eq!(
        login.headers,
        vec![
            // HTTPHC4Impl.setupRequest: a keep-alive sampler says so first.
            ("Connection".to_string(), "keep-alive".to_string()),
            ("X-Plan".to_string(), "shop-ci".to_string()),
            ("Content-Type".to_string(), "application/json".to_string())
        ]
    );
    assert_eq!(login.checks, vec!["status == 200".to_string()]);
    assert_eq!(
        login.extracts,
        vec![(
            "first".to_string(),
            r#"regex((\w+)) template "$1$" default "none""#.to_string()
        )]
    );
    let checkout = login.transactions.last().unwrap();
    assert_eq!(checkout.name, "Checkout");
    // shop.jmx's Checkout: includeTimers and parent false, as written.
    assert!(!checkout.parent && !checkout.include_timers, "{checkout:?}");
    assert!(login.follow_redirects && login.keep_alive);
    assert_eq!(
        (login.connect_timeout_ms, login.response_timeout_ms),
        (Some(3000), Some(10000))
    );
    let item = &browsers.steps[1];
    assert_eq!(
        item.url,
        "http://127.0.0.1:9123/item/{{thread_num}}?id={{rand_int 1 1000}}&by={{first}}+and+{{user}}"
    );
    assert_eq!(item.checks, vec!["body contains \"item\"".to_string()]);
    assert_eq!(pollers.iterations, None);
    assert_eq!(pollers.duration_s, Some(2));
    assert_eq!(pollers.on_error, OnError::NextIteration);
    assert_eq!(pollers.load, Load::Threads);
    assert_eq!(
        pollers.think,
        Some(Pause {
            min_ms: 50,
            max_ms: 150
        })
    );
    assert_eq!(
        pollers.steps[0].url,
        "http://127.0.0.1:9123/status?n={{next __counter_1}}&t={{now_ms}}"
    );
    // IterationCounter.java: `${__counter(FALSE,)}` counts each evaluation
    // over all threads, from 1.
    assert_eq!(
        pollers.counters,
        [crate::counter_book::use_counter("__counter_1", true)]
    );
}

#[test]
fn the_scenario_text_passes_stampede_validation() {
    let plan = shop(&[("port", "9123")]);
    let text = scenario_text(&plan, "shop.jmx");
    assert!(text.starts_with("# stampede scenario mapped from shop.jmx (test plan 'Shop plan')"));
    let scenario = stampede_workload::Scenario::parse("shop.toml", &text, &testdata(), &[])
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(scenario.groups.len(), 2);
    assert_eq!(scenario.groups[0].steps.len(), 2);
    assert_eq!(
        scenario.groups[0].feeders[0].data().rows(),
        3,
        "no header line in users.csv"
    );
    assert!(text.contains("iterations = 3"), "{text}");
    assert!(text.contains("duration = \"2s\""), "{text}");
    assert!(text.contains("on_error = \"next_iteration\""), "{text}");
    assert!(text.contains("transaction = \"Checkout\""), "{text}");
    assert!(text.contains("timeout = \"10000ms\""), "{text}");
}

/// A group with every key the mapping can print set away from its default.
fn every_key_group(load: Load) -> crate::model::Group {
    use crate::model::{Feed, Group, Phase, Rendezvous, Step, Transaction};
    let pause = Pause {
        min_ms: 5,
        max_ms: 7,
    };
    let step = Step {
        name: "s".into(),
        method: "POST".into(),
        url: "https://127.0.0.1:1/a?b={{user}}".into(),
        headers: vec![("X-A".into(), "1".into())],
        body: Some("x={{user}}".into()),
        checks: vec!["status == 200".into()],
        extracts: vec![("id".into(), "header(X-Id)".into())],
        think: Some(pause),
        rendezvous: Some(Rendezvous {
            users: 0,
            timeout_ms: Some(900),
        }),
        transactions: vec![Transaction {
            name: "T".into(),
            ..Transaction::default()
        }],
        once: true,
        follow_redirects: true,
        keep_alive: false,
        connect_timeout_ms: Some(1),
        response_timeout_ms: Some(2),
        ..Step::default()
    };
    Group {
        name: "g".into(),
        phase: Phase::Teardown,
        threads: 3,
        load,
        ramp_up_s: 2,
        iterations: Some(4),
        total_iterations: Some(12),
        duration_s: Some(9),
        delay_s: Some(1),
        on_error: OnError::StopUser,
        cookies: true,
        feeds: vec![Feed {
            file: testdata().join("users.csv"),
            columns: Some(vec!["user".into(), "pass".into()]),
            skip_first_line: true,
            mode: "unique",
            delimiter: ";".into(),
        }],
        think: Some(pause),
        steps: vec![step.clone(), step],
        resolve: Vec::new(),
        counters: vec![stampede_workload::CounterSpec {
            name: "n".into(),
            start: 2,
            incr: 3,
            end: 99,
            shared: true,
            width: 4,
            advance: stampede_workload::Advance::Use,
        }],
    }
}

/// One mapping, printed: what `--dry-run` prints parses back to the very
/// values `stampede jmeter` runs, for the test plans and for a group with
/// every key set (a key the printer dropped or misnamed fails here).
#[test]
fn the_printed_scenario_parses_back_to_the_values_that_run() {
    let mut plans: Vec<Plan> = ["shop.jmx", "items.jmx", "session.jmx", "transactions.jmx"]
        .iter()
        .map(|name| load(&testdata().join(name), props(&[])).unwrap())
        .collect();
    for load in [
        Load::Threads,
        Load::Rate(2.5),
        Load::Stages("1s:3,2s:0".into()),
    ] {
        plans.push(Plan {
            name: "every key".into(),
            groups: vec![every_key_group(load.clone()), every_key_group(load)],
            ..Plan::default()
        });
    }
    for plan in &plans {
        let typed = scenario(plan);
        let text = scenario_text(plan, "p.jmx");
        let parsed: stampede_workload::ScenarioToml =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(parsed, typed, "{text}");
    }
}

pub(crate) fn plan_with(group_body: &str) -> String {
    let text = std::fs::read_to_string(testdata().join("shop.jmx")).unwrap();
    let start = text.find("      <ThreadGroup").unwrap();
    let end = text.find("      <ResultCollector").unwrap();
    format!("{}{}\n{}", &text[..start], group_body, &text[end..])
}

const GROUP_HEAD: &str = r#"<ThreadGroup testclass="ThreadGroup" testname="G">
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
      </ThreadGroup>
      <hashTree>"#;

pub(crate) fn map(body: &str, pairs: &[(&str, &str)]) -> Result<Plan, JmxError> {
    let text = plan_with(&format!("{GROUP_HEAD}{body}</hashTree>"));
    parse("p.jmx", &text, &testdata(), props(pairs))
}

pub(crate) const GET: &str = r#"<HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="get">
          <stringProp name="HTTPSampler.path">/</stringProp>
        </HTTPSamplerProxy>"#;

#[test]
fn unmappable_elements_are_listed_by_name_and_class() {
    let body = format!(
        r#"<JSR223PreProcessor testclass="JSR223PreProcessor" testname="groovy"/>
        <hashTree/>
        <IfController testclass="IfController" testname="maybe">
          <stringProp name="IfController.condition">${{__jexl3("${{x}}" == "1")}}</stringProp>
        </IfController>
        <hashTree>{GET}<hashTree/></hashTree>
        {GET}
        <hashTree>
          <ResponseAssertion testclass="ResponseAssertion" testname="not found">
            <collectionProp name="Asserion.test_strings"><stringProp name="1">error</stringProp></collectionProp>
            <intProp name="Assertion.test_type">20</intProp>
          </ResponseAssertion>
          <hashTree/>
        </hashTree>"#
    );
    let plan = map(&body, &[]).unwrap();
    let listed: Vec<String> = plan
        .unsupported
        .iter()
        .map(|u| format!("{} ({})", u.name, u.class))
        .collect();
    assert_eq!(
        listed,
        [
            "groovy (JSR223PreProcessor)",
            "maybe (IfController)",
            "not found (ResponseAssertion)"
        ]
    );
    // The assertion is what is skipped, not the request it is under.
    assert_eq!(plan.groups[0].steps.len(), 1);
    assert!(plan.groups[0].steps[0].checks.is_empty());
    assert!(
        plan.unsupported[2].why.contains("NOT on the response body"),
        "{}",
        plan.unsupported[2]
    );
    assert!(
        plan.unsupported[0].to_string().starts_with("line "),
        "{}",
        plan.unsupported[0]
    );
}

#[test]
fn bad_input_is_one_line() {
    let one_line = |result: Result<Plan, JmxError>| {
        let text = result.unwrap_err().to_string();
        assert!(!text.contains('\n'), "{text}");
        text
    };
    let no_threads = plan_with(&format!(
        r#"<ThreadGroup testclass="ThreadGroup" testname="G"/><hashTree>{GET}<hashTree/></hashTree>"#
    ));
    assert_eq!(
        one_line(parse("p.jmx", &no_threads, &testdata(), props(&[]))),
        "p.jmx: 'G' (ThreadGroup): the required property ThreadGroup.num_threads is missing or empty"
    );
    let csv = r#"<CSVDataSet testclass="CSVDataSet" testname="data">
          <stringProp name="filename">data/missing.csv</stringProp>
        </CSVDataSet><hashTree/>"#;
    let text = one_line(map(&format!("{csv}{GET}<hashTree/>"), &[]));
    assert!(
        text.starts_with(&format!(
            "p.jmx: 'data' (CSVDataSet): CSV file 'data/missing.csv' (resolved to {}): cannot read:",
            testdata().join("data/missing.csv").display()
        )),
        "{text}"
    );
    let p = GET.replace(
        "<stringProp name=\"HTTPSampler.path\">/",
        "<stringProp name=\"HTTPSampler.path\">/${__P(secret)}",
    );
    assert_eq!(
        one_line(map(&format!("{p}<hashTree/>"), &[])),
        "p.jmx: ${__P(secret)}: property secret has no value (give -Jsecret=VALUE) and no default"
    );
    assert!(map(&format!("{p}<hashTree/>"), &[("secret", "s")]).is_ok());
    let no_host = plan_with(&format!("{GROUP_HEAD}{GET}<hashTree/></hashTree>")).replace(
        "<stringProp name=\"HTTPSampler.domain\">${host}</stringProp>",
        "",
    );
    assert!(one_line(parse("p.jmx", &no_host, &testdata(), props(&[]))).contains("no server name"));
    let unset = plan_with(&format!("{GROUP_HEAD}{GET}<hashTree/></hashTree>"))
        .replace("${host}</stringProp>", "${server}</stringProp>");
    assert!(
        one_line(parse("p.jmx", &unset, &testdata(), props(&[])))
            .ends_with("'get' (HTTPSamplerProxy): the server name '${server}' holds a variable no user-defined variable or property sets")
    );
    assert!(
        one_line(parse("p.jmx", "<jmeterTestPlan>", &testdata(), props(&[])))
            .contains("not a JMeter test plan")
    );
}

#[test]
fn bodies_from_files_resolve_against_the_plan() {
    let post = GET.replace(
        "<stringProp name=\"HTTPSampler.path\">/</stringProp>",
        r#"<stringProp name="HTTPSampler.path">/</stringProp>
          <stringProp name="HTTPSampler.method">PUT</stringProp>
          <boolProp name="HTTPSampler.postBodyRaw">true</boolProp>
          <elementProp name="HTTPsampler.Arguments" elementType="Arguments">
            <collectionProp name="Arguments.arguments">
              <elementProp name="" elementType="HTTPArgument">
                <stringProp name="Argument.value">${__FileToString(body.json,,)}</stringProp>
              </elementProp>
            </collectionProp>
          </elementProp>"#,
    );
    let plan = map(&format!("{post}<hashTree/>"), &[]).unwrap();
    let step = &plan.groups[0].steps[0];
    assert_eq!(step.method, "PUT");
    assert_eq!(step.body.as_deref(), Some("{\"from\":\"file \\{{x}}\"}\n"));
    let text = scenario_text(&plan, "p.jmx");
    let scenario = stampede_workload::Scenario::parse("p.toml", &text, &testdata(), &[]).unwrap();
    let group = &scenario.groups[0];
    let body = stampede_workload::Template::compile("body", &group.steps[0].body, &group.scope);
    assert_eq!(
        body.unwrap().static_bytes().unwrap(),
        std::fs::read(testdata().join("body.json")).unwrap(),
        "the file is sent as it is, braces and all"
    );
}

#[test]
fn repeated_testnames_stay_labels_and_become_unique_step_names() {
    let plan = map(
        &format!("{GET}<hashTree/>{GET}<hashTree/>{GET}<hashTree/>"),
        &[],
    )
    .unwrap();
    let labels: Vec<&str> = plan.groups[0]
        .steps
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        labels,
        ["get", "get", "get"],
        "the JTL labels them as JMeter does"
    );
    let text = scenario_text(&plan, "p.jmx");
    let scenario = stampede_workload::Scenario::parse("p.toml", &text, &testdata(), &[])
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let names: Vec<&str> = scenario.groups[0]
        .steps
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["get", "get (2)", "get (3)"]);
}

#[test]
fn throughput_timers_become_the_open_model() {
    let timer = r#"<ConstantThroughputTimer testclass="ConstantThroughputTimer" testname="ctt">
          <intProp name="calcMode">1</intProp>
          <doubleProp><name>throughput</name><value>1200.0</value><savedValue>0.0</savedValue></doubleProp>
        </ConstantThroughputTimer><hashTree/>"#;
    let plan = map(&format!("{timer}{GET}<hashTree/>{GET}<hashTree/>"), &[]).unwrap();
    assert_eq!(
        plan.groups[0].load,
        Load::Rate(10.0),
        "1200/min over 2 samplers"
    );
    // The loop count (1 by default) is a count, not a duration at the rate.
    let group = &plan.groups[0];
    assert_eq!(
        (group.iterations, group.total_iterations, group.duration_s),
        (None, Some(1), None)
    );
    assert!(scenario_text(&plan, "p.jmx").contains("total_iterations = 1"));
    let shaping = r#"<kg.apc.jmeter.timers.VariableThroughputTimer testclass="kg.apc.jmeter.timers.VariableThroughputTimer" testname="shape">
          <collectionProp name="load_profile">
            <collectionProp name="1"><stringProp name="a">1</stringProp><stringProp name="b">10</stringProp><stringProp name="c">30</stringProp></collectionProp>
            <collectionProp name="2"><stringProp name="a">10</stringProp><stringProp name="b">10</stringProp><stringProp name="c">60</stringProp></collectionProp>
          </collectionProp>
        </kg.apc.jmeter.timers.VariableThroughputTimer><hashTree/>"#;
    let plan = map(&format!("{shaping}{GET}<hashTree/>"), &[]).unwrap();
    assert_eq!(
        plan.groups[0].load,
        Load::Stages("0s:1,30s:10,0s:10,60s:10".into())
    );
    let text = scenario_text(&plan, "p.jmx");
    let scenario = stampede_workload::Scenario::parse("p.toml", &text, &testdata(), &[]).unwrap();
    assert_eq!(
        scenario.groups[0].limits.max_connections,
        Some(u64::from(plan.groups[0].threads)),
        "the threads cap the open model's requests in flight: {text}"
    );
}

#[test]
fn properties_files_are_read_as_java_does() {
    let dir = std::env::temp_dir().join(format!("stampede-jmeter-props-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.properties");
    std::fs::write(
        &file,
        "# comment\nhost = 10.1.1.1\nport:8080\npath /a\\\n  /b\n",
    )
    .unwrap();
    let read = read_properties(&file).unwrap();
    assert_eq!(read["host"], "10.1.1.1");
    assert_eq!(read["port"], "8080");
    assert_eq!(read["path"], "/a/b");
    assert!(read_properties(&dir.join("none"))
        .unwrap_err()
        .to_string()
        .starts_with("-q "));
}

/// ConstantThroughputTimer.calculateDelay: calcMode 0 ("this thread
/// only") gives each thread the rate, so the group sends threads × it;
/// the other modes share the one rate among the threads.
#[test]
fn a_throughput_per_thread_is_multiplied_by_the_threads() {
    let with = |mode: u32| {
        let timer = format!(
            r#"<ConstantThroughputTimer testclass="ConstantThroughputTimer" testname="ctt">
              <intProp name="calcMode">{mode}</intProp>
              <doubleProp><name>throughput</name><value>120.0</value><savedValue>0.0</savedValue></doubleProp>
            </ConstantThroughputTimer><hashTree/>"#
        );
        let head = GROUP_HEAD.replace(r#"num_threads">1<"#, r#"num_threads">4<"#);
        let text = plan_with(&format!("{head}{timer}{GET}<hashTree/></hashTree>"));
        let plan = parse("p.jmx", &text, &testdata(), props(&[])).unwrap();
        plan.groups[0].load.clone()
    };
    assert_eq!(with(0), Load::Rate(8.0), "120/min for each of 4 threads");
    assert_eq!(with(1), Load::Rate(2.0), "120/min shared");
}

/// The GUI saves an empty `HTTPsampler.Files` with every sampler: only a
/// listed file is an upload (refused), an empty list is none.
#[test]
fn an_empty_file_list_is_no_upload() {
    let sampler = |files: &str| {
        format!(
            r#"<HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="up">
              <stringProp name="HTTPSampler.path">/</stringProp>
              <elementProp name="HTTPsampler.Files" elementType="HTTPFileArgs">
                <collectionProp name="HTTPFileArgs.files">{files}</collectionProp>
              </elementProp>
            </HTTPSamplerProxy><hashTree/>"#
        )
    };
    let plan = map(&sampler(""), &[]).unwrap();
    assert!(plan.unsupported.is_empty(), "{:?}", plan.unsupported);
    assert_eq!(plan.groups[0].steps.len(), 1);
    let file = r#"<elementProp name="a.txt" elementType="HTTPFileArg">
                  <stringProp name="File.path">a.txt</stringProp>
                </elementProp>"#;
    let plan = map(&sampler(file), &[]).unwrap();
    assert!(
        plan.unsupported[0]
            .why
            .contains("file uploads are not mapped"),
        "{}",
        plan.unsupported[0]
    );
}

/// A plan of one group of class `class` whose head holds `head`.
fn group_of(class: &str, head: &str, body: &str) -> Result<Plan, JmxError> {
    let text = plan_with(&format!(
        r#"<{class} testclass="{class}" testname="G">
        {head}
      </{class}>
      <hashTree>{body}</hashTree>"#
    ));
    parse("p.jmx", &text, &testdata(), props(&[("loops", "0")]))
}

/// ThreadGroup's settings as JMeter reads them (AbstractThreadGroup,
/// LoopController, ThreadGroup's scheduler; setUp and tearDown groups).
#[test]
fn thread_group_settings_read_as_jmeter_reads_them() {
    let threads =
        |n: u32| format!(r#"<stringProp name="ThreadGroup.num_threads">{n}</stringProp>"#);
    let sampler = format!("{GET}<hashTree/>");
    // Nothing to run: the group is left out with the reason.
    let none = group_of("ThreadGroup", &threads(0), &sampler).unwrap();
    assert!(none.groups.is_empty());
    assert!(
        none.notes.iter().any(|n| n.contains("0 threads")),
        "{:?}",
        none.notes
    );
    let empty = group_of("ThreadGroup", &threads(2), "").unwrap();
    assert!(empty.groups.is_empty());
    assert!(
        empty.notes.iter().any(|n| n.contains("no HTTP samplers")),
        "{:?}",
        empty.notes
    );
    // setUp and tearDown groups keep their phase.
    let setup = group_of("SetupThreadGroup", &threads(1), &sampler).unwrap();
    assert_eq!(setup.groups[0].phase, crate::model::Phase::Setup);
    let teardown = group_of("PostThreadGroup", &threads(1), &sampler).unwrap();
    assert_eq!(teardown.groups[0].phase, crate::model::Phase::Teardown);
    // loops 0 sends nothing: refused, naming a property it came from.
    let loops = |value: &str| {
        format!(
            r#"{}<elementProp name="ThreadGroup.main_controller" elementType="LoopController">
              <stringProp name="LoopController.loops">{value}</stringProp>
            </elementProp>"#,
            threads(1)
        )
    };
    let zero = group_of("ThreadGroup", &loops("0"), &sampler)
        .unwrap_err()
        .to_string();
    assert!(
        zero.contains("LoopController.loops is 0: the group"),
        "{zero}"
    );
    let from = group_of("ThreadGroup", &loops("${__P(loops)}"), &sampler)
        .unwrap_err()
        .to_string();
    assert!(
        from.contains("is 0 (from ${__P(loops)}): the group"),
        "{from}"
    );
    // The scheduler's start delay: 0 is none.
    let scheduled = |delay: u32| {
        let props = format!(
            r#"{}<boolProp name="ThreadGroup.scheduler">true</boolProp>
            <stringProp name="ThreadGroup.duration">10</stringProp>
            <stringProp name="ThreadGroup.delay">{delay}</stringProp>"#,
            threads(1)
        );
        group_of("ThreadGroup", &props, &sampler).unwrap().groups[0].delay_s
    };
    assert_eq!(scheduled(0), None);
    assert_eq!(scheduled(5), Some(5));
}

/// A group that loops forever with no scheduler ends at the last row of a
/// CSV Data Set read once (recycle=false: JMeter's CSVDataSet hands out
/// `<EOF>` and, with stopThread, stops the thread); with a recycled CSV
/// it is endless, as in JMeter, and the note says so.
#[test]
fn an_endless_loop_fed_by_a_csv_read_once_ends_at_its_last_row() {
    let head = r#"<stringProp name="ThreadGroup.num_threads">1</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController">
          <stringProp name="LoopController.loops">-1</stringProp>
        </elementProp>"#;
    let csv = |recycle: bool| {
        format!(
            r#"<CSVDataSet testclass="CSVDataSet" testname="data">
              <stringProp name="filename">users.csv</stringProp>
              <boolProp name="recycle">{recycle}</boolProp>
              <boolProp name="stopThread">true</boolProp>
            </CSVDataSet><hashTree/>{GET}<hashTree/>"#
        )
    };
    let note = |recycle: bool| {
        let plan = group_of("ThreadGroup", head, &csv(recycle)).unwrap();
        let found = plan.notes.iter().find(|n| n.contains("loops forever"));
        found.cloned().unwrap_or_else(|| panic!("{:?}", plan.notes))
    };
    let once = note(false);
    assert!(
        once.ends_with("it ends when the CSV file's rows run out (recycle=false)"),
        "{once}"
    );
    let recycled = note(true);
    assert!(
        recycled.ends_with("it runs until interrupted (Ctrl-C), as in JMeter"),
        "{recycled}"
    );
}
