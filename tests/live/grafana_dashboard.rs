//! docs/grafana/stampede.json, the Grafana dashboard for `--metrics`,
//! `--remote-write` and `serve --metrics`: a dashboard model Grafana
//! imports as is (panels placed on the 24-column grid, each query on the
//! Prometheus datasource variable, every variable it uses defined), and
//! every metric and label it queries is one stampede really serves: the
//! names are taken from the expositions of a real run (open model, a
//! scenario: a mix with steps and checks) and of a real `stampede serve
//! --metrics`.

use stampede_testkit::{binary, free_port, http_get, temp_dir, wait_for};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::Duration;

fn dashboard() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/grafana/stampede.json");
    let text = std::fs::read_to_string(path).expect("docs/grafana/stampede.json");
    serde_json::from_str(&text).expect("the dashboard is JSON")
}

/// Every PromQL text of the dashboard: panel queries and variable queries.
fn queries(dashboard: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            out.push(target["expr"].as_str().expect("an expr").to_string());
        }
    }
    for variable in dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
    {
        if let Some(query) = variable["query"]["query"].as_str() {
            out.push(query.to_string());
        }
    }
    out
}

/// Words of `text` that start with `prefix` (identifier characters after it).
fn words_from(text: &str, prefix: &str) -> BTreeSet<String> {
    text.match_indices(prefix)
        .filter(|(at, _)| {
            !text[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .map(|(at, _)| {
            let rest: String = text[at + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            format!("{prefix}{rest}")
        })
        .collect()
}

/// Label names a query uses: in `by (…)` and before a matcher in `{…}`.
fn labels_used(query: &str) -> BTreeSet<String> {
    let mut labels = BTreeSet::new();
    for (at, _) in query.match_indices("by (") {
        let list = &query[at + 4..];
        let list = &list[..list.find(')').unwrap_or(0)];
        labels.extend(list.split(',').map(|l| l.trim().to_string()));
    }
    for (at, _) in query.match_indices('{') {
        let inside = &query[at + 1..];
        let inside = &inside[..inside.find('}').unwrap_or(0)];
        for matcher in inside.split(',') {
            let name: String = matcher
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                labels.insert(name);
            }
        }
    }
    labels.remove("");
    labels
}

#[test]
fn the_dashboard_is_an_importable_grafana_model() {
    let dashboard = dashboard();
    assert!(dashboard["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(dashboard["uid"].as_str().is_some_and(|u| u.len() <= 40));
    assert!(dashboard["schemaVersion"].as_u64() >= Some(36));
    let variables = dashboard["templating"]["list"]
        .as_array()
        .expect("variables");
    let datasource = variables
        .iter()
        .find(|v| v["type"] == "datasource")
        .expect("a datasource variable");
    assert_eq!(datasource["query"], "prometheus");
    let defined: BTreeSet<String> = variables
        .iter()
        .map(|v| v["name"].as_str().expect("a name").to_string())
        .collect();
    let mut ids = BTreeSet::new();
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(panels.len() > 5);
    for panel in panels {
        assert!(
            ids.insert(panel["id"].as_u64().expect("an id")),
            "ids unique"
        );
        let grid = &panel["gridPos"];
        let (x, w) = (grid["x"].as_u64().unwrap(), grid["w"].as_u64().unwrap());
        assert!(x + w <= 24 && grid["h"].as_u64() > Some(0), "{panel}");
        if panel["type"] == "row" {
            continue;
        }
        assert!(panel["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "{panel}");
        let targets = panel["targets"].as_array().expect("queries");
        let refs: BTreeSet<&str> = targets.iter().filter_map(|t| t["refId"].as_str()).collect();
        assert_eq!(refs.len(), targets.len(), "refIds unique: {panel}");
        for target in targets {
            assert_eq!(target["datasource"]["uid"], "${datasource}");
        }
    }
    for query in queries(&dashboard) {
        for variable in words_from(&query, "$") {
            let name = variable.trim_start_matches('$');
            assert!(
                name.starts_with("__") || defined.contains(name),
                "{query} uses ${name}"
            );
        }
    }
}

/// Sample names and label names of an exposition.
fn exposed(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut names = BTreeSet::new();
    let mut labels = BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let series = line.rsplit_once(' ').map_or(line, |(series, _)| series);
        let (name, rest) = series.split_once('{').unwrap_or((series, ""));
        names.insert(name.to_string());
        for pair in rest.trim_end_matches('}').split("\",") {
            if let Some((label, _)) = pair.split_once('=') {
                labels.insert(label.trim_start_matches(',').to_string());
            }
        }
    }
    (names, labels)
}

#[test]
fn every_metric_and_label_it_queries_is_one_stampede_serves() {
    let (port, serve_metrics, run_metrics) = (free_port(), free_port(), free_port());
    let mut serve = Command::new(binary())
        .args(["serve", "-t", "1", "--port", &port.to_string()])
        .args(["--metrics", &format!("127.0.0.1:{serve_metrics}")])
        .stderr(Stdio::null())
        .spawn()
        .expect("stampede serve starts");
    wait_for(Duration::from_secs(20), || {
        http_get(serve_metrics, "/metrics")
    })
    .expect("serve's metrics");
    let dir = temp_dir("grafana");
    // An open-model scenario: a mix (target, request, step), a check that
    // fails (check_failed), a failed status, the open model's gauges.
    let scenario = dir.join("scenario.toml");
    let base = format!("http://127.0.0.1:{port}");
    std::fs::write(
        &scenario,
        format!(
            "[[group]]\nname = \"g\"\nrate = 100\n\n\
             [[group.step]]\nname = \"home\"\nurl = \"{base}/\"\ncheck = [\"status == 201\"]\n\n\
             [[group.step]]\nname = \"down\"\nurl = \"{base}/status/503\"\n"
        ),
    )
    .unwrap();
    let json = dir.join("result.json");
    let mut run = Command::new(binary())
        .args(["run", "--scenario", scenario.to_str().unwrap(), "-d", "2s"])
        .args(["-t", "1", "--quiet", "--metrics-linger", "30s"])
        .args(["--metrics", &format!("127.0.0.1:{run_metrics}")])
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("stampede run starts");
    // The open model's gauges (planned rate, send lateness) are served
    // while it runs; the counters' final values after.
    let live = wait_for(Duration::from_secs(20), || {
        http_get(run_metrics, "/metrics").filter(|text| text.contains("stampede_send_lateness"))
    })
    .expect("the run's live values");
    wait_for(Duration::from_secs(30), || json.exists().then_some(())).expect("the run ends");
    let client = http_get(run_metrics, "/metrics").expect("the run's final values") + &live;
    let server = http_get(serve_metrics, "/metrics").expect("the target's");
    for child in [&mut run, &mut serve] {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (mut names, mut labels) = exposed(&client);
    let (server_names, server_labels) = exposed(&server);
    names.extend(server_names);
    labels.extend(server_labels);
    // Labels Prometheus adds (instance) or that only agents carry (agent,
    // `--agent I/N`: metrics_series::run_labels).
    labels.extend(["instance".to_string(), "agent".to_string()]);
    let dashboard = dashboard();
    let mut queried = BTreeSet::new();
    for query in queries(&dashboard) {
        queried.extend(words_from(&query, "stampede_"));
        for label in labels_used(&query) {
            assert!(
                labels.contains(&label),
                "{query}: label {label} is not served"
            );
        }
    }
    assert!(queried.len() > 15, "{queried:?}");
    let missing: Vec<&String> = queried.iter().filter(|n| !names.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "queried but not served: {missing:?}\n{client}\n{server}"
    );
}
