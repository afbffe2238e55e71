//! Script elements, Debug Sampler, caches, Counter and Random Variable,
//! `__intSum` and `__urlencode`: each mapped, ignored with a note, or
//! refused with the reason, as JMeter's own classes behave (cited below).

use crate::tests::{map, GET};
use crate::JmxError;
use stampede_workload::CounterSpec;

fn with_sampler(config: &str) -> String {
    format!("{config}<hashTree/>{GET}<hashTree/>")
}

/// A plan whose BeanShell sets the token it then sends: the script is
/// named before the missing property, so the user is not asked for
/// -Jaccess_token first.
#[test]
fn script_elements_are_refused_before_a_missing_property() {
    let script = r#"<BeanShellPreProcessor testclass="BeanShellPreProcessor" testname="login script">
          <stringProp name="script">props.put("access_token", "t")</stringProp>
        </BeanShellPreProcessor>"#;
    let get = GET.replace(
        "<stringProp name=\"HTTPSampler.path\">/",
        "<stringProp name=\"HTTPSampler.path\">/${__P(access_token)}",
    );
    let err = map(&format!("{script}<hashTree/>{get}<hashTree/>"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("p.jmx: 1 script element(s) cannot be mapped, listed first: line "),
        "{err}"
    );
    assert!(
        err.contains("'login script' (BeanShellPreProcessor)"),
        "{err}"
    );
    assert!(err.contains("then: ${__P(access_token)}"), "{err}");
    assert!(!err.contains('\n'));
    // Without the missing property: listed first, before later elements.
    let jsr = r#"<JSR223PostProcessor testclass="JSR223PostProcessor" testname="groovy"/>"#;
    let text = format!(
        "<IfController testclass=\"IfController\" testname=\"maybe\"/><hashTree/>{GET}<hashTree>{jsr}<hashTree/></hashTree>"
    );
    let plan = map(&text, &[]).unwrap();
    let listed: Vec<&str> = plan.unsupported.iter().map(|u| u.class.as_str()).collect();
    assert_eq!(listed, ["JSR223PostProcessor", "IfController"]);
}

/// DebugSampler.java: sample() only reads variables and properties; no
/// request. Ignored with a note, the other samplers kept.
#[test]
fn a_debug_sampler_is_ignored_with_a_note() {
    let debug = r#"<DebugSampler testclass="DebugSampler" testname="vars">
          <boolProp name="displayJMeterVariables">true</boolProp>
        </DebugSampler>"#;
    let plan = map(&with_sampler(debug), &[]).unwrap();
    assert!(plan.unsupported.is_empty(), "{:?}", plan.unsupported);
    assert_eq!(plan.groups[0].steps.len(), 1);
    // shop.jmx's View Results Tree and Summary Report: named, not run.
    assert!(
        plan.notes
            .iter()
            .any(|n| n.starts_with("listeners ignored (they send no request")
                && n.contains("'Summary Report' (ResultCollector)")),
        "{:?}",
        plan.notes
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.starts_with("'vars' (DebugSampler): ignored: it sends no request")),
        "{:?}",
        plan.notes
    );
}

/// CacheManager.java (inCache, setHeaders): the note says what JMeter
/// would not send or would send conditionally. DNSCacheManager.java
/// (resolve): the system resolver is ignored, a custom one refused.
#[test]
fn cache_managers_are_ignored_with_what_changes_or_refused() {
    let cache = r#"<CacheManager testclass="CacheManager" testname="cache">
          <boolProp name="clearEachIteration">false</boolProp>
          <boolProp name="useExpires">true</boolProp>
        </CacheManager>"#;
    let plan = map(&with_sampler(cache), &[]).unwrap();
    assert!(plan.unsupported.is_empty(), "{:?}", plan.unsupported);
    let note = plan
        .notes
        .iter()
        .find(|n| n.contains("(CacheManager)"))
        .unwrap();
    assert!(
        note.contains("If-Modified-Since/If-None-Match") && note.contains("304"),
        "{note}"
    );
    let dns = |custom: &str, servers: &str, hosts: &str| {
        format!(
            r#"<DNSCacheManager testclass="DNSCacheManager" testname="dns">
          <collectionProp name="DNSCacheManager.servers">{servers}</collectionProp>
          <collectionProp name="DNSCacheManager.hosts">{hosts}</collectionProp>
          <boolProp name="DNSCacheManager.isCustomResolver">{custom}</boolProp>
        </DNSCacheManager>"#
        )
    };
    let plan = map(
        &with_sampler(&dns("false", "", "")),
        &[("host", "api.test")],
    )
    .unwrap();
    assert!(plan.unsupported.is_empty());
    assert!(plan.groups[0].resolve.is_empty());
    assert!(plan.notes.iter().any(
        |n| n.contains("(DNSCacheManager): ignored: the hosts are resolved by the system resolver")
    ));
    // resolve(): a static host's addresses, split on commas.
    let statics = r#"<elementProp name="api.test" elementType="StaticHost">
            <stringProp name="StaticHost.Name">api.test</stringProp>
            <stringProp name="StaticHost.Address">127.0.0.2, 127.0.0.3</stringProp>
          </elementProp>"#;
    let server = r#"<stringProp name="1">8.8.8.8</stringProp>"#;
    let plan = map(
        &with_sampler(&dns("true", server, statics)),
        &[("host", "api.test"), ("port", "8080")],
    )
    .unwrap();
    assert!(plan.unsupported.is_empty(), "{:?}", plan.unsupported);
    assert_eq!(
        plan.groups[0].resolve,
        ["api.test:8080:127.0.0.2,127.0.0.3"]
    );
    // Another host goes to the manager's own DNS servers: refused.
    let plan = map(
        &with_sampler(&dns("true", server, statics)),
        &[("host", "other.test")],
    )
    .unwrap();
    assert!(
        plan.unsupported[0].why.contains("own DNS servers"),
        "{:?}",
        plan.unsupported
    );
}

fn counter(props: &str) -> String {
    format!(
        r#"<CounterConfig testclass="CounterConfig" testname="count">
          <stringProp name="CounterConfig.name">n</stringProp>{props}
        </CounterConfig>"#
    )
}

fn url_with(config: &str, path: &str) -> Result<String, JmxError> {
    let get = GET.replace(
        "<stringProp name=\"HTTPSampler.path\">/",
        &format!("<stringProp name=\"HTTPSampler.path\">/{path}"),
    );
    let plan = map(&format!("{config}<hashTree/>{get}<hashTree/>"), &[])?;
    match plan.unsupported.first() {
        Some(u) => Err(JmxError::new(u.why.clone())),
        None => Ok(plan.groups[0].steps[0].url.clone()),
    }
}

/// The step's URL and the group's counters.
fn counted(config: &str, path: &str) -> Result<(String, Vec<CounterSpec>), JmxError> {
    let url = url_with(config, path)?;
    let plan = map(&format!("{config}<hashTree/>{GET}<hashTree/>"), &[])?;
    Ok((url, plan.groups[0].counters.clone()))
}

/// CounterConfig.java, iterationStart: per user from `start` by `incr`,
/// back to `start` past `end`, or one sequence shared by all threads;
/// formatNumber writes it with the DecimalFormat. Each becomes a group
/// counter read as `{{n}}`; a per-user counter reset at each thread-group
/// iteration, or one that does not move, is `start` every time; a format
/// other than DecimalFormat's integer patterns is refused with the reason.
#[test]
fn counters_map_to_group_counters_or_are_refused_with_the_reason() {
    let per_user = r#"<stringProp name="CounterConfig.start">1</stringProp>
          <stringProp name="CounterConfig.incr">2</stringProp>
          <stringProp name="CounterConfig.end"></stringProp>
          <boolProp name="CounterConfig.per_user">true</boolProp>"#;
    let (url, counters) = counted(&counter(per_user), "?n=${n}").unwrap();
    assert!(url.ends_with("/?n={{n}}"), "{url}");
    let expected = CounterSpec {
        incr: 2,
        ..CounterSpec::new("n", 1)
    };
    assert_eq!(counters, std::slice::from_ref(&expected));
    let shaped = per_user
        .replace(
            "\"CounterConfig.end\"></stringProp>",
            "\"CounterConfig.end\">9</stringProp><stringProp name=\"CounterConfig.format\">000</stringProp>",
        )
        .replace(">true<", ">false<");
    let (_, counters) = counted(&counter(&shaped), "${n}").unwrap();
    let shared = CounterSpec {
        end: 9,
        shared: true,
        width: 3,
        ..expected
    };
    assert_eq!(counters, [shared]);
    let reset =
        format!("{shaped}<boolProp name=\"CounterConfig.reset_on_tg_iteration\">true</boolProp>")
            .replace(">false<", ">true<");
    assert!(url_with(&counter(&reset), "?n=${n}")
        .unwrap()
        .ends_with("/?n=001"));
    let still = per_user.replace(">2<", ">0<");
    assert!(url_with(&counter(&still), "?n=${n}")
        .unwrap()
        .ends_with("/?n=1"));
    let grouped = format!("{per_user}<stringProp name=\"CounterConfig.format\">#,##0</stringProp>");
    let why = url_with(&counter(&grouped), "${n}")
        .unwrap_err()
        .to_string();
    assert!(
        why.contains("'#,##0' is not mapped: only DecimalFormat's integer patterns"),
        "{why}"
    );
    // A JMeter name that is one of stampede's built-ins is refused at the
    // Counter, not in the scenario it maps to.
    let named_seq = counter(per_user).replace(">n</stringProp>", ">seq</stringProp>");
    let why = url_with(&named_seq, "${seq}").unwrap_err().to_string();
    assert!(
        why.contains("'seq' is one of stampede's built-in values"),
        "{why}"
    );
}

/// RandomVariableConfig.iterationStart: minimum + nextInt(max - min + 1),
/// so both ends are included, as {{rand_int}}'s are.
#[test]
fn a_random_variable_is_rand_int_with_a_note() {
    let random = |extra: &str| {
        format!(
            r#"<RandomVariableConfig testclass="RandomVariableConfig" testname="rnd">
          <stringProp name="variableName">r</stringProp>
          <stringProp name="minimumValue">3</stringProp>
          <stringProp name="maximumValue">7</stringProp>
          <boolProp name="perThread">true</boolProp>{extra}
        </RandomVariableConfig>"#
        )
    };
    let plan = map(
        &format!(
            "{}<hashTree/>{}<hashTree/>",
            random(""),
            GET.replace("HTTPSampler.path\">/", "HTTPSampler.path\">/?r=${r}")
        ),
        &[],
    )
    .unwrap();
    assert!(
        plan.groups[0].steps[0]
            .url
            .ends_with("/?r={{rand_int 3 7}}"),
        "{:?}",
        plan.groups[0].steps[0]
    );
    assert!(plan
        .notes
        .iter()
        .any(|n| n.contains("JMeter draws one per iteration")));
    let formatted = random("<stringProp name=\"outputFormat\">00</stringProp>");
    assert!(url_with(&formatted, "${r}")
        .unwrap_err()
        .to_string()
        .contains("DecimalFormat"));
}

/// User Defined Variables under a controller are read at the start as
/// JMeter reads every Arguments element.
#[test]
fn user_defined_variables_at_every_level() {
    let udv = |name: &str, value: &str| {
        format!(
            r#"<Arguments testclass="Arguments" testname="vars"><collectionProp name="Arguments.arguments">
            <elementProp name="{name}" elementType="Argument"><stringProp name="Argument.name">{name}</stringProp><stringProp name="Argument.value">{value}</stringProp></elementProp>
          </collectionProp></Arguments><hashTree/>"#
        )
    };
    let get = GET.replace("HTTPSampler.path\">/", "HTTPSampler.path\">/${a}/${b}");
    let body = format!(
        "{}<GenericController testclass=\"GenericController\" testname=\"c\"/><hashTree>{}{get}<hashTree/></hashTree>",
        udv("a", "x"),
        udv("b", "y")
    );
    let plan = map(&body, &[]).unwrap();
    assert!(
        plan.groups[0].steps[0].url.ends_with("/x/y"),
        "{}",
        plan.groups[0].steps[0].url
    );
}

/// IntSum.java (Integer.parseInt, int sum) and UrlEncode.java
/// (URLEncoder.encode, UTF-8) of fixed text fold in; of a value filled per
/// request they are refused.
#[test]
fn int_sum_and_urlencode_of_fixed_values_fold_in() {
    assert!(
        url_with("", "?s=${__intSum(2,3,-1)}&amp;q=${__urlencode(a b&amp;é)}")
            .unwrap()
            .ends_with("/?s=4&q=a+b%26%C3%A9")
    );
    assert!(url_with("", "?s=${__intSum(2147483647,1)}")
        .unwrap()
        .ends_with("?s=-2147483648"));
    let per_user = r#"<stringProp name="CounterConfig.start">0</stringProp>
          <stringProp name="CounterConfig.incr">1</stringProp>
          <boolProp name="CounterConfig.per_user">true</boolProp>"#;
    let why = url_with(&counter(per_user), "${__intSum(${n},1)}")
        .unwrap_err()
        .to_string();
    assert!(why.contains("compute nothing at run time"), "{why}");
}

/// The group note names why a group is left out: here every sampler was.
#[test]
fn a_group_whose_samplers_were_all_left_out_says_so() {
    let get = GET.replace("HTTPSampler.path\">/", "HTTPSampler.path\">/${__groovy(1)}");
    let plan = map(&format!("{get}<hashTree/>"), &[]).unwrap();
    assert!(plan.groups.is_empty());
    assert!(
        plan.notes.iter().any(|n| n.ends_with("each of its 1 HTTP sampler(s) was left out (listed as unsupported); the group is left out")),
        "{:?}",
        plan.notes
    );
}

/// A Loop Controller's pass, `loops` times over `body`.
fn looped(loops: u32, body: &str) -> String {
    format!(
        r#"<LoopController testclass="LoopController" testname="loop">
          <stringProp name="LoopController.loops">{loops}</stringProp>
        </LoopController>
        <hashTree>{body}</hashTree>"#
    )
}

/// CompoundVariable.getNamedFunction makes one IterationCounter per
/// `${__counter}` written; a sampler a Loop Controller repeats evaluates
/// that one function at each pass (IterationCounter.execute), so every
/// pass of the mapped loop, nested loops included, advances one counter.
#[test]
fn a_counter_repeated_by_a_loop_controller_is_one_counter() {
    let sampler = |path: &str| {
        GET.replace(
            "\"HTTPSampler.path\">/",
            &format!("\"HTTPSampler.path\">/{path}"),
        )
    };
    let inner = looped(
        2,
        &format!("{}<hashTree/>", sampler("i${__counter(TRUE,)}")),
    );
    let body = format!(
        "{}<hashTree/>{}",
        sampler("a${__counter(FALSE,)}"),
        looped(
            3,
            &format!("{inner}{}<hashTree/>", sampler("o${__counter(TRUE,)}"))
        )
    );
    let plan = map(&body, &[]).unwrap();
    let urls: Vec<&str> = plan.groups[0]
        .steps
        .iter()
        .map(|s| s.url.rsplit('/').next().unwrap())
        .collect();
    let (a, i, o) = (
        "a{{next __counter_1}}",
        "i{{next __counter_2}}",
        "o{{next __counter_3}}",
    );
    assert_eq!(urls, [a, i, i, o, i, i, o, i, i, o]);
    assert_eq!(plan.groups[0].counters.len(), 3);
}

/// A Header Manager's value is one CompoundVariable, so one
/// IterationCounter, for every sampler in its scope: both samplers' `X-Id`
/// advance one counter, and a second header has its own.
#[test]
fn a_counter_in_a_header_manager_is_one_counter_for_its_samplers() {
    let manager = r#"<HeaderManager testclass="HeaderManager" testname="ids">
          <collectionProp name="HeaderManager.headers">
            <elementProp name="" elementType="Header">
              <stringProp name="Header.name">X-Id</stringProp>
              <stringProp name="Header.value">${__counter(FALSE,)}</stringProp>
            </elementProp>
            <elementProp name="" elementType="Header">
              <stringProp name="Header.name">X-Mine</stringProp>
              <stringProp name="Header.value">${__counter(TRUE,)}-${__counter(TRUE,)}</stringProp>
            </elementProp>
          </collectionProp>
        </HeaderManager>
        <hashTree/>"#;
    let body = format!(
        "{manager}{GET}<hashTree/>{}",
        looped(2, &format!("{GET}<hashTree/>"))
    );
    let plan = map(&body, &[]).unwrap();
    let group = &plan.groups[0];
    for step in &group.steps {
        let headers: Vec<(&str, &str)> = step
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            headers[headers.len() - 2..],
            [
                ("X-Id", "{{next __counter_1}}"),
                ("X-Mine", "{{next __counter_2}}-{{next __counter_3}}")
            ]
        );
    }
    assert_eq!(group.steps.len(), 3);
    assert_eq!(group.counters.len(), 3);
}
