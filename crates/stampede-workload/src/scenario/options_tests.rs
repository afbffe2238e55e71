//! The group, step and feed keys of options.rs: parsed, defaulted, refused
//! with file:line:column.

use super::super::Scenario;
use super::*;

const BASE: &str = r#"[[group]]
name = "g"
connections = 2
[[group.step]]
name = "s"
url = "http://127.0.0.1:3000/"
"#;

fn dir() -> std::path::PathBuf {
    // One directory per test thread: tests run side by side and rewrite the file.
    let dir = std::env::temp_dir().join(format!(
        "stampede-options-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("plain.csv"), "ann,pw1\nbob,pw2\n").unwrap();
    dir
}

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse("s.toml", text, &dir(), &[])
}

fn with_group(keys: &str) -> String {
    BASE.replace("connections = 2\n", &format!("connections = 2\n{keys}\n"))
}

fn with_step(keys: &str) -> String {
    format!("{BASE}{keys}\n")
}

#[test]
fn without_the_keys_nothing_changes() {
    let scenario = parse(BASE).unwrap();
    assert_eq!(scenario.groups[0].limits, GroupLimits::default());
    assert_eq!(scenario.groups[0].steps[0].options, StepOptions::default());
}

#[test]
fn group_keys() {
    let text = with_group(
        "iterations = 3\nduration = \"1m\"\nstart_delay = \"5s\"\nphase = \"setup\"\non_error = \"next_iteration\"\ncookies = true",
    );
    let limits = parse(&text).unwrap().groups[0].limits.clone();
    assert_eq!(
        limits,
        GroupLimits {
            iterations: Some(3),
            total_iterations: None,
            duration: Some(Duration::from_secs(60)),
            start_delay: Some(Duration::from_secs(5)),
            phase: Phase::Setup,
            on_error: OnError::NextIteration,
            cookies: true,
            max_connections: None,
        }
    );
    let capped = with_group("max_connections = 5").replace("connections = 2", "rate = 50");
    let limits = parse(&capped).unwrap().groups[0].limits.clone();
    assert_eq!(limits.max_connections, Some(5));
    let counted = with_group("total_iterations = 40").replace("connections = 2", "rate = 50");
    let limits = parse(&counted).unwrap().groups[0].limits.clone();
    assert_eq!(limits.total_iterations, Some(40));
    assert!(error(&with_group("total_iterations = 40"))
        .contains("total_iterations needs rate or stages"));
    let zero = with_group("total_iterations = 0").replace("connections = 2", "rate = 5");
    assert!(error(&zero).contains("total_iterations is a whole number of at least 1"));
}

#[test]
fn step_keys() {
    let text = with_step(
        "think = \"100ms..300ms\"\ntransaction = \"Checkout\"\nonce = true\nfollow_redirects = true\nkeep_alive = false\nconnect_timeout = \"3000ms\"\ntimeout = \"10s\"",
    );
    let options = parse(&text).unwrap().groups[0].steps[0].options.clone();
    assert_eq!(
        options,
        StepOptions {
            think: ThinkTime::parse("100ms..300ms"),
            transaction: Some("Checkout".into()),
            once: true,
            follow_redirects: Some(true),
            keep_alive: Some(false),
            connect_timeout: Some(Duration::from_secs(3)),
            timeout: Some(Duration::from_secs(10)),
            rendezvous: None,
        }
    );
}

#[test]
fn rendezvous_keys() {
    let rendezvous = |keys: &str| {
        let scenario = parse(&with_step(keys)).map_err(|e| e.to_string())?;
        Ok::<_, String>(scenario.groups[0].steps[0].options.rendezvous)
    };
    assert_eq!(
        rendezvous("rendezvous = 2\nrendezvous_timeout = \"500ms\""),
        Ok(Some(RendezvousSpec {
            users: Some(2),
            timeout: Some(Duration::from_millis(500)),
        }))
    );
    let all = RendezvousSpec {
        users: None,
        timeout: None,
    };
    assert_eq!(rendezvous("rendezvous = \"all\""), Ok(Some(all)));
    // More users than the group has fill only by the timeout, as JMeter's.
    assert!(rendezvous("rendezvous = 3\nrendezvous_timeout = \"1s\"").is_ok());
    assert_eq!(
        rendezvous("rendezvous = 3").unwrap_err(),
        "s.toml:7:14: step s: rendezvous of 3 users in a group of 2 would never fill: give at most 2, \"all\", or a rendezvous_timeout"
    );
    for bad in [
        "rendezvous = 0",
        "rendezvous = \"some\"",
        "rendezvous = 1.5",
    ] {
        let error = rendezvous(bad).unwrap_err();
        assert!(
            error.contains("rendezvous is a number of users"),
            "{bad}: {error}"
        );
    }
    let alone = rendezvous("rendezvous_timeout = \"1s\"").unwrap_err();
    assert!(
        alone.contains("rendezvous_timeout needs rendezvous"),
        "{alone}"
    );
    let zero = rendezvous("rendezvous = 2\nrendezvous_timeout = \"0s\"").unwrap_err();
    assert!(zero.contains("rendezvous_timeout is above 0"), "{zero}");
    let open = error(&with_step("rendezvous = 2").replace("connections = 2", "rate = 5"));
    assert!(
        open.contains("step s: rendezvous needs connections"),
        "{open}"
    );
}

#[test]
fn headerless_feeds_take_their_column_names() {
    let feed = "feed = [{ file = \"plain.csv\", columns = [\"user\", \"pass\"] }]";
    let scenario = parse(&with_group(feed)).unwrap();
    let data = scenario.groups[0].feeders[0].data();
    assert_eq!(data.columns(), ["user", "pass"]);
    assert_eq!((data.rows(), &*data.row(0)[0]), (2, &b"ann"[..]));
    let skip =
        "feed = [{ file = \"plain.csv\", columns = [\"user\", \"pass\"], skip_first_line = true }]";
    let scenario = parse(&with_group(skip)).unwrap();
    assert_eq!(scenario.groups[0].feeders[0].data().rows(), 1);
    assert_eq!(&*scenario.groups[0].feeders[0].data().row(0)[0], b"bob");
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn bad_values_name_their_place() {
    assert_eq!(
        error(&with_group("iterations = 0")),
        "s.toml:4:14: iterations is a whole number of at least 1"
    );
    let open = with_group("iterations = 2").replace("connections = 2", "rate = 5");
    assert!(
        error(&open).contains("iterations needs connections"),
        "{}",
        error(&open)
    );
    assert!(error(&with_group("phase = \"later\"")).contains("phase is setup, main or teardown"));
    assert!(error(&with_group("max_connections = 3")).contains("caps an open-model group"));
    let zero = with_group("max_connections = 0").replace("connections = 2", "rate = 5");
    assert!(error(&zero).contains("max_connections is a whole number of at least 1"));
    assert!(error(&with_group("on_error = \"panic\"")).contains("on_error is continue"));
    assert!(error(&with_group("duration = \"soon\"")).starts_with("s.toml:4:12:"));
    assert!(error(&with_step("think = \"9ms..1ms\"")).contains("step s: think is MIN..MAX"));
    assert!(error(&with_step("timeout = \"x\"")).starts_with("s.toml:7:11:"));
    assert!(error(&with_step("transaction = \" \"")).contains("transaction is a name"));
    let skip = "feed = [{ file = \"plain.csv\", skip_first_line = true }]";
    assert!(error(&with_group(skip)).contains("skip_first_line needs columns"));
    let missing = "feed = [{ file = \"none.csv\", columns = [\"a\"] }]";
    assert!(
        error(&with_group(missing)).contains("none.csv: cannot read"),
        "{}",
        error(&with_group(missing))
    );
}

#[test]
fn keys_that_cannot_work_together_are_refused() {
    assert_eq!(
        error(&with_group("phase = \"setup\"")),
        "s.toml:4:9: phase = \"setup\" needs iterations or duration (the next phase starts when this group has ended)"
    );
    let open = |text: String| text.replace("connections = 2", "rate = 5");
    let stop_user = error(&open(with_group("on_error = \"stop_user\"")));
    assert!(
        stop_user.contains("on_error = \"stop_user\" needs connections"),
        "{stop_user}"
    );
    let once = error(&open(with_step("once = true")));
    assert!(once.contains("step s: once needs connections"), "{once}");
    let teardown = format!(
        "{BASE}[[group]]\nname = \"bye\"\nconnections = 1\niterations = 1\nphase = \"teardown\"\n\
         [[group.step]]\nname = \"s\"\nurl = \"http://127.0.0.1:3000/\"\n"
    );
    assert_eq!(
        error(&teardown),
        "s.toml:2:8: group g: teardown group bye starts when every main group has ended: give g iterations or duration"
    );
    let bounded = teardown.replace("connections = 2", "connections = 2\nduration = \"1s\"");
    assert!(parse(&bounded).is_ok());
}
