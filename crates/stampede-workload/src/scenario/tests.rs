//! The documented example parses; every kind of mistake names file:line:column.

use super::*;
use std::path::PathBuf;

const SHOP: &str = r#"[[group]]
name = "browse"
connections = 50          # closed model; or rate = 200 (open model: iterations per second), stages = "30s:100,1m:400"
ramp_up = "10s"
think = "50ms..150ms"     # between steps, uniform
feed = [{ file = "users.csv", mode = "circular" }]

[[group.step]]
name = "login"
method = "POST"
url = "http://127.0.0.1:3000/login"
headers = { Content-Type = "application/json" }
body = '{"user":"{{user}}","pass":"{{pass}}"}'
check = ["status == 200", "json($.token) exists"]
extract = { token = "json($.token)" }

[[group.step]]
name = "me"
url = "http://127.0.0.1:3000/me"
headers = { Authorization = "Bearer {{token}}" }
check = ["status == 200"]
"#;

fn dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stampede-scenario-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("users.csv"), "user,pass\nann,pw1\nbob,pw2\n").unwrap();
    dir
}

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse("shop.toml", text, &dir(), &[])
}

#[test]
fn the_documented_shop_scenario_parses() {
    let path = dir().join("shop.toml");
    std::fs::write(&path, SHOP).unwrap();
    let scenario = Scenario::load(&path, &[]).unwrap();
    let group = &scenario.groups[0];
    assert_eq!(group.name, "browse");
    assert_eq!(group.load, GroupLoad::Closed { connections: 50 });
    assert_eq!(group.ramp_up, Some(Duration::from_secs(10)));
    assert_eq!(
        group.think,
        Some(ThinkTime {
            min: Duration::from_millis(50),
            max: Duration::from_millis(150)
        })
    );
    assert_eq!(group.feeders[0].data().rows(), 2);
    assert_eq!(group.steps.len(), 2);
    let login = &group.steps[0];
    assert_eq!(
        (login.method.as_str(), login.target.path_and_query.as_str()),
        ("POST", "/login")
    );
    assert_eq!(login.headers[0].name, "Content-Type");
    assert_eq!(login.checks.checks().len(), 2);
    assert!(login.needs_body() && !login.needs_headers());
    assert_eq!(login.extracts[0].name(), "token");
    let me = &group.steps[1];
    assert_eq!(me.method, "GET");
    assert_eq!(group.scope.extract_slots(), 1);
}

#[test]
fn open_and_staged_groups() {
    let open = SHOP.replace("connections = 50 ", "rate = 200 ");
    assert_eq!(
        parse(&open).unwrap().groups[0].load,
        GroupLoad::Open { rate: 200.0 }
    );
    let staged = SHOP.replace("connections = 50 ", "stages = \"30s:100,1m:400\" ");
    assert!(
        matches!(&parse(&staged).unwrap().groups[0].load, GroupLoad::Stages(s) if s.len() == 2)
    );
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

/// Typed values (a scenario built in a program) are validated as a file's
/// are; their errors have no line and column to name, and the rest of the
/// message is the file's.
#[test]
fn typed_values_validate_as_the_file_does() {
    let typed: ScenarioToml = toml::from_str(SHOP).unwrap();
    let from_values = Scenario::from_toml("shop.toml", typed.clone(), &dir(), &[]).unwrap();
    let from_text = parse(SHOP).unwrap();
    let steps = |s: &Scenario| -> Vec<String> {
        s.groups
            .iter()
            .flat_map(|g| g.steps.iter().map(|s| s.name.clone()))
            .collect()
    };
    assert_eq!(steps(&from_values), steps(&from_text));
    let mut twice = typed.clone();
    twice.group.push(typed.group[0].clone());
    let error = Scenario::from_toml("mapped", twice, &dir(), &[]).unwrap_err();
    let name = typed.group[0].name.get_ref();
    assert_eq!(
        error.to_string(),
        format!("mapped: a second group named {name}")
    );
    let mut bad = typed;
    bad.group[0].step[0].check = vec![spanned("status = 200".to_string())];
    let error = Scenario::from_toml("mapped", bad, &dir(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("mapped: step login: invalid check: status = 200\n"),
        "{error}"
    );
}

#[test]
fn errors_name_file_line_and_column() {
    let typo = SHOP.replace("ramp_up =", "rampup =");
    assert!(
        error(&typo).starts_with("shop.toml:4:1: unknown field `rampup`"),
        "{}",
        error(&typo)
    );
    let unknown = SHOP.replace("{{pass}}", "{{pas}}");
    let text = error(&unknown);
    assert!(
        text.starts_with("shop.toml:13:8: step login: body: unknown variable {{pas}}; known: seq,"),
        "{text}"
    );
    assert!(
        text.ends_with("user, pass, token") || text.ends_with("user, pass"),
        "{text}"
    );
    // A later step's extract is not visible to an earlier one.
    let early = SHOP.replace("\"pass\":\"{{pass}}\"", "\"t\":\"{{token}}\"");
    assert!(
        error(&early).contains("unknown variable {{token}}"),
        "{}",
        error(&early)
    );
    let bad_check = SHOP.replace("\"status == 200\", \"json", "\"status = 200\", \"json");
    assert!(
        error(&bad_check).starts_with("shop.toml:14:10: step login: invalid check: status = 200\n"),
        "{}",
        error(&bad_check)
    );
    let text = error(&bad_check);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0].find(" = 200").map(|i| i + 1),
        lines[1].find('^'),
        "{text}"
    );
    let think = SHOP.replace("50ms..150ms", "150ms..50ms");
    assert!(
        error(&think).starts_with("shop.toml:5:9:"),
        "{}",
        error(&think)
    );
    let both = SHOP.replace("ramp_up", "rate = 5\nramp_up");
    assert!(error(&both).contains("exactly one of connections, rate or stages"));
    let missing = SHOP.replace("users.csv", "nobody.csv");
    assert!(
        error(&missing).contains("nobody.csv: cannot read"),
        "{}",
        error(&missing)
    );
    let mode = SHOP.replace("mode = \"circular\"", "mode = \"sometimes\"");
    assert!(error(&mode).contains("mode is circular, random or unique"));
    assert!(error("").contains("missing field `group`"), "{}", error(""));
    assert!(error("group = []").contains("no [[group]]"));
    assert!(
        error("[[group]]\nname = \"g\"\nconnections = 1\nstep = []").contains("no [[group.step]]")
    );
    let host = SHOP.replace("127.0.0.1:3000/me", "{{host}}/me");
    assert!(error(&host).contains("not the scheme or host"));
    let extract = SHOP.replace("json($.token)\" }", "json(token)\" }");
    assert!(
        error(&extract).contains("invalid extract"),
        "{}",
        error(&extract)
    );
}

#[test]
fn vars_are_visible_and_think_samples_stay_in_range() {
    let with_var = SHOP.replace("/me\"", "/me/{{region}}\"");
    assert!(parse(&with_var).is_err());
    let vars = vec![("region".to_string(), "eu".to_string())];
    let scenario = Scenario::parse("shop.toml", &with_var, &dir(), &vars).unwrap();
    assert_eq!(
        scenario.groups[0].steps[1].target.path_and_query,
        "/me/{{region}}"
    );
    let think = ThinkTime::parse("50ms..150ms").unwrap();
    let mut rng = fastrand::Rng::with_seed(3);
    for _ in 0..100 {
        let pause = think.sample(&mut rng);
        assert!(pause >= think.min && pause <= think.max);
    }
    assert_eq!(
        ThinkTime::parse("10ms"),
        Some(ThinkTime {
            min: Duration::from_millis(10),
            max: Duration::from_millis(10)
        })
    );
    assert_eq!(ThinkTime::parse("soon"), None);
}

#[test]
fn names_must_tell_groups_and_steps_apart() {
    let two_groups = format!(
        "{SHOP}\n{}",
        SHOP.replace("connections = 50", "connections = 5")
    );
    assert!(
        error(&two_groups).contains("a second group named browse"),
        "{}",
        error(&two_groups)
    );
    let two_steps = SHOP.replace("name = \"me\"", "name = \"login\"");
    let message = error(&two_steps);
    assert!(
        message.starts_with("shop.toml:18:8: group browse: a second step named login"),
        "{message}"
    );
}

#[test]
fn counters_are_declared_per_group_and_checked() {
    let text = r#"[[group]]
name = "g"
connections = 1
counter = [{ name = "n", start = 1, end = 99, width = 3, shared = true }, { name = "c", advance = "use" }]

[[group.step]]
name = "s"
url = "http://127.0.0.1:3000/item/{{n}}?c={{next c}}"
"#;
    let scenario = parse(text).unwrap();
    let specs: Vec<_> = scenario.groups[0]
        .scope
        .counters()
        .map(|c| &c.spec)
        .collect();
    let n = crate::CounterSpec {
        end: 99,
        width: 3,
        shared: true,
        ..crate::CounterSpec::new("n", 1)
    };
    let c = crate::CounterSpec {
        advance: crate::Advance::Use,
        ..crate::CounterSpec::new("c", 0)
    };
    assert_eq!(specs, [&n, &c]);
    let bad = text.replace("width = 3", "width = 41");
    assert_eq!(
        parse(&bad).unwrap_err().to_string(),
        "shop.toml:4:55: counter n: width is a number of digits from 0 to 40"
    );
    let bad = text.replace("\"use\"", "\"each\"");
    assert!(parse(&bad)
        .unwrap_err()
        .to_string()
        .ends_with("counter c: advance is iteration or use"));
    let bad = text.replace("{{next c}}", "{{next n}}");
    assert!(
        parse(&bad)
            .unwrap_err()
            .to_string()
            .contains("this counter advances at each iteration"),
        "{{next}} is for use counters"
    );
}
