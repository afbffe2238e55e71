//! The mapped plan written as a stampede scenario file (TOML), so the
//! `--dry-run` output is exactly what runs and a user can keep it and run
//! it with `stampede run --scenario`. The toml crate writes it, so quoting
//! is always right.

use crate::model::{Group, Load, OnError, Phase, Plan, Step};
use stampede_workload::{Advance, CounterSpec};
use toml::{Table, Value};

/// `names` made unique as scenario files require: a repeated name gets
/// ` (2)`, ` (3)`, ... (JMeter allows repeats; its reports add them up
/// under one label, as the JTL still does).
pub fn unique_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for name in names {
        let mut unique = name.to_string();
        let mut n = 1;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{name} ({n})");
        }
        seen.push(unique);
    }
    seen
}

/// The scenario text; `source` names the .jmx in the leading comment.
pub fn scenario_text(plan: &Plan, source: &str) -> String {
    let names = unique_names(plan.groups.iter().map(|g| g.name.as_str()));
    let groups: Vec<Value> = plan
        .groups
        .iter()
        .zip(names)
        .map(|(g, name)| Value::Table(group(g, name)))
        .collect();
    let mut root = Table::new();
    root.insert("group".into(), Value::Array(groups));
    let mut text = format!(
        "# stampede scenario mapped from {source} (test plan '{}') by `stampede jmeter`\n",
        plan.name.replace('\n', " ")
    );
    if plan.serialize_groups && plan.groups.len() > 1 {
        // A scenario file has no such key: `stampede run --scenario` runs
        // its groups side by side.
        text.push_str(
            "# the groups of each phase run one after another (TestPlan.serialize_threadgroups)\n",
        );
    }
    text.push_str(&toml::to_string(&root).unwrap_or_default());
    text
}

fn string(text: impl Into<String>) -> Value {
    Value::String(text.into())
}

/// One `counter = [...]` entry; keys at their default are left out.
fn counter(c: &CounterSpec) -> Table {
    let mut t = Table::new();
    t.insert("name".into(), string(&c.name));
    let numbers = [
        ("start", c.start, 0),
        ("incr", c.incr, 1),
        ("end", c.end, i64::MAX),
    ];
    for (key, value, default) in numbers {
        if value != default {
            t.insert(key.into(), Value::Integer(value));
        }
    }
    if c.shared {
        t.insert("shared".into(), Value::Boolean(true));
    }
    if c.width > 0 {
        t.insert("width".into(), Value::Integer(c.width as i64));
    }
    if c.advance == Advance::Use {
        t.insert("advance".into(), string("use"));
    }
    t
}

fn group(g: &Group, name: String) -> Table {
    let mut t = Table::new();
    t.insert("name".into(), string(name));
    match &g.load {
        Load::Threads => t.insert("connections".into(), Value::Integer(i64::from(g.threads))),
        Load::Rate(rate) => t.insert("rate".into(), Value::Float((rate * 1e6).round() / 1e6)),
        Load::Stages(stages) => t.insert("stages".into(), string(stages)),
    };
    if g.load != Load::Threads {
        // A throughput timer paces the group's threads: never more
        // requests in flight than threads, the rest wait (backlog).
        t.insert(
            "max_connections".into(),
            Value::Integer(i64::from(g.threads.max(1))),
        );
    }
    if g.ramp_up_s > 0 {
        t.insert("ramp_up".into(), string(format!("{}s", g.ramp_up_s)));
    }
    if let Some(think) = g.think {
        t.insert("think".into(), string(think.text()));
    }
    if let Some(n) = g.iterations {
        t.insert("iterations".into(), Value::Integer(n as i64));
    }
    if let Some(n) = g.total_iterations {
        t.insert("total_iterations".into(), Value::Integer(n as i64));
    }
    if let Some(s) = g.duration_s {
        t.insert("duration".into(), string(format!("{s}s")));
    }
    if let Some(s) = g.delay_s {
        t.insert("start_delay".into(), string(format!("{s}s")));
    }
    if g.phase != Phase::Main {
        t.insert("phase".into(), string(g.phase.as_str()));
    }
    if g.on_error != OnError::Continue {
        t.insert("on_error".into(), string(g.on_error.as_str()));
    }
    if g.cookies {
        t.insert("cookies".into(), Value::Boolean(true));
    }
    if !g.feeds.is_empty() {
        let feeds = g
            .feeds
            .iter()
            .map(|f| {
                let mut feed = Table::new();
                feed.insert("file".into(), string(f.file.display().to_string()));
                feed.insert("mode".into(), string(f.mode));
                if f.delimiter != "," {
                    feed.insert("delimiter".into(), string(&f.delimiter));
                }
                if let Some(columns) = &f.columns {
                    let names = columns.iter().map(string).collect();
                    feed.insert("columns".into(), Value::Array(names));
                    if f.skip_first_line {
                        feed.insert("skip_first_line".into(), Value::Boolean(true));
                    }
                }
                Value::Table(feed)
            })
            .collect();
        t.insert("feed".into(), Value::Array(feeds));
    }
    if !g.counters.is_empty() {
        let counters = g
            .counters
            .iter()
            .map(|c| Value::Table(counter(c)))
            .collect();
        t.insert("counter".into(), Value::Array(counters));
    }
    let names = unique_names(g.steps.iter().map(|s| s.name.as_str()));
    let steps = g
        .steps
        .iter()
        .zip(names)
        .map(|(s, name)| Value::Table(step(s, name)))
        .collect();
    t.insert("step".into(), Value::Array(steps));
    t
}

fn step(s: &Step, name: String) -> Table {
    let mut t = Table::new();
    t.insert("name".into(), string(name));
    if s.method != "GET" {
        t.insert("method".into(), string(&s.method));
    }
    t.insert("url".into(), string(&s.url));
    if !s.headers.is_empty() {
        let mut headers = Table::new();
        for (name, value) in &s.headers {
            headers.insert(name.clone(), string(value));
        }
        t.insert("headers".into(), Value::Table(headers));
    }
    if let Some(body) = &s.body {
        t.insert("body".into(), string(body));
    }
    if !s.checks.is_empty() {
        let checks = s.checks.iter().map(string).collect();
        t.insert("check".into(), Value::Array(checks));
    }
    if !s.extracts.is_empty() {
        let mut extracts = Table::new();
        for (name, source) in &s.extracts {
            extracts.insert(name.clone(), string(source));
        }
        t.insert("extract".into(), Value::Table(extracts));
    }
    if let Some(think) = s.think {
        t.insert("think".into(), string(think.text()));
    }
    // The innermost: a step's statistics are pooled under one name.
    if let Some(transaction) = s.transactions.last() {
        t.insert("transaction".into(), string(&transaction.name));
    }
    if s.once {
        t.insert("once".into(), Value::Boolean(true));
    }
    if let Some(r) = s.rendezvous {
        // groupSize 0: every thread of the group (SyncTimer.threadStarted).
        let users = match r.users {
            0 => string("all"),
            n => Value::Integer(i64::from(n)),
        };
        t.insert("rendezvous".into(), users);
        if let Some(ms) = r.timeout_ms {
            t.insert("rendezvous_timeout".into(), string(format!("{ms}ms")));
        }
    }
    if s.follow_redirects {
        t.insert("follow_redirects".into(), Value::Boolean(true));
    }
    if !s.keep_alive {
        t.insert("keep_alive".into(), Value::Boolean(false));
    }
    if let Some(ms) = s.connect_timeout_ms {
        t.insert("connect_timeout".into(), string(format!("{ms}ms")));
    }
    if let Some(ms) = s.response_timeout_ms {
        t.insert("timeout".into(), string(format!("{ms}ms")));
    }
    t
}
