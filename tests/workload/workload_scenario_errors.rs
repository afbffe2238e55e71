//! Scenario files that are wrong, and the one the docs show:
//! an unknown key, an unknown variable (a step sees only what earlier steps
//! extracted), a check that does not parse (its caret under the problem), a
//! bad load or think time, a missing feed file, the URL or load flags given
//! beside `--scenario` — each one line with file:line:column and exit 2
//! before any request; and docs/scenarios.md's scenario runs as written.

use stampede_testkit::workload as workload_support;

use workload_support::*;

/// The result's step names, in order.
fn step_names(run: &Run) -> Vec<String> {
    run.result()["targets"]
        .as_array()
        .unwrap_or_else(|| panic!("no targets[] in {}", run.result()))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn the_scenario_of_docs_scenarios_md_runs_as_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scenarios.md"))
        .expect("docs/scenarios.md");
    let start = doc.find("```toml\n[[group]]").expect("the doc's scenario") + "```toml\n".len();
    let toml = &doc[start..start + doc[start..].find("```").expect("its end")];
    let dir = temp_dir("scn-doc");
    let mut target = LoggedTarget::start(&dir);
    let port = target.url("").rsplit(':').next().unwrap_or("").to_string();
    // The doc's port and a ramp-up that fits in a short run.
    let toml = toml
        .replace("127.0.0.1:3000", &format!("127.0.0.1:{port}"))
        .replace("ramp_up = \"10s\"", "ramp_up = \"500ms\"");
    let file = write(&dir, "shop.toml", &toml);
    write(&dir, "users.csv", "user,pass\nann,a1\nbob,b2\n");
    let run = run_on(None, &["--scenario", &file, "-d", "2s"]);
    target.stop();
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(step_names(&run), ["login", "me"]);
    assert!(tally(&run, "status == 200", Some("me")).0 > 0);
    assert_eq!(tally(&run, "status == 200", Some("me")).1, 0);
    let me = logged_statuses(&target.log, "/me");
    assert!(!me.is_empty() && me.iter().all(|s| s == "200"), "{me:?}");
}

#[test]
fn scenario_errors_name_file_line_column_and_exit_2() {
    let dir = temp_dir("scn-errors");
    let target = LoggedTarget::start(&dir);
    let url = target.url("/");
    let step = format!("[[group.step]]\nname = \"s\"\nurl = \"{url}\"\n");
    let cases = [
        (
            format!("[[group]]\nname = \"a\"\nrampup = \"1s\"\nconnections = 1\n{step}"),
            "bad.toml:3:1: unknown field `rampup`",
        ),
        (
            format!("[[group]]\nname = \"a\"\nconnections = 1\n[[group.step]]\nname = \"s\"\nurl = \"{url}?{{{{pas}}}}\"\n"),
            "bad.toml:6:7: step s: url: unknown variable {{pas}}; known: seq",
        ),
        (
            format!("[[group]]\nname = \"a\"\nconnections = 1\n{step}check = [\"status = 200\"]\n"),
            "bad.toml:7:10: step s: invalid check: status = 200",
        ),
        (
            format!("[[group]]\nname = \"a\"\nconnections = 1\nrate = 5\n{step}"),
            "group a: give exactly one of connections, rate or stages",
        ),
        (
            format!("[[group]]\nname = \"a\"\nconnections = 1\nfeed = [{{ file = \"nope.csv\" }}]\n{step}"),
            "nope.csv: cannot read",
        ),
        (
            format!("[[group]]\nname = \"a\"\nconnections = 1\nthink = \"fast\"\n{step}"),
            "bad.toml:4:9: think is MIN..MAX",
        ),
        (
            // A step sees only what earlier steps extracted.
            format!(
                "[[group]]\nname = \"a\"\nconnections = 1\n[[group.step]]\nname = \"first\"\nurl = \"{url}?{{{{tok}}}}\"\n\
                 [[group.step]]\nname = \"second\"\nurl = \"{url}\"\nextract = {{ tok = \"header(Server)\" }}\n"
            ),
            "step first: url: unknown variable {{tok}}",
        ),
    ];
    for (text, expected) in &cases {
        let file = write(&dir, "bad.toml", text);
        let run = run_on(None, &["--scenario", &file, "-n", "2"]);
        assert_usage_error(&run, expected);
    }
    // The caret of a bad check stays under the problem.
    let file = write(&dir, "bad.toml", &cases[2].0);
    let run = run_on(None, &["--scenario", &file, "-n", "2"]);
    let lines: Vec<&str> = run
        .output
        .stderr
        .split(|&b| b == b'\n')
        .map(|l| std::str::from_utf8(l).unwrap_or(""))
        .collect();
    assert_eq!(lines[0].find("= 200"), lines[1].find('^'), "{lines:?}");
    // Scenario and URL or load flags together.
    let file = write(
        &dir,
        "ok.toml",
        &format!("[[group]]\nname = \"a\"\nconnections = 1\n{step}"),
    );
    for extra in [vec![url.as_str()], vec!["-c", "5"], vec!["-r", "10"]] {
        let mut args = vec!["--scenario", file.as_str(), "-n", "2"];
        args.extend(extra);
        assert_usage_error(&run_on(None, &args), "drop the URL, -c, -r and --stages");
    }
    let missing = run_on(None, &["--scenario", "/nonexistent/shop.toml", "-n", "2"]);
    assert_usage_error(&missing, "/nonexistent/shop.toml");
    let paths = target.stop_and_paths();
    assert!(paths.is_empty(), "a request was sent: {paths:?}");
}
