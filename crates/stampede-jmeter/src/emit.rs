//! The mapped plan as a stampede scenario: the typed values a scenario
//! file parses into ([`ScenarioToml`]), which `stampede jmeter` validates
//! and runs as they are, and the same values printed as the scenario file
//! (`--dry-run`), so what is printed is exactly what runs and a user can
//! keep it and run it with `stampede run --scenario`. The toml crate
//! prints it, so quoting is always right; one mapping, no second writer.

use crate::model::{Group, Load, OnError, Phase, Plan, Step};
use stampede_workload::{
    spanned, Advance, CounterSpec, CounterToml, FeedToml, GroupToml, ScenarioToml, StepToml,
};
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

/// The plan's scenario: a group per thread group, a step per sampler.
pub fn scenario(plan: &Plan) -> ScenarioToml {
    let names = unique_names(plan.groups.iter().map(|g| g.name.as_str()));
    let group = plan
        .groups
        .iter()
        .zip(names)
        .map(|(g, name)| group(g, name))
        .collect();
    ScenarioToml { group }
}

/// The scenario text; `source` names the .jmx in the leading comment.
pub fn scenario_text(plan: &Plan, source: &str) -> String {
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
    text.push_str(&toml::to_string(&scenario(plan)).unwrap_or_default());
    text
}

/// One `counter = [...]` entry; keys at their default are left out.
fn counter(c: &CounterSpec) -> CounterToml {
    let unless = |value: i64, default: i64| (value != default).then_some(value);
    CounterToml {
        name: spanned(c.name.clone()),
        start: unless(c.start, 0),
        incr: unless(c.incr, 1),
        end: unless(c.end, i64::MAX),
        shared: c.shared.then_some(true),
        width: (c.width > 0).then(|| spanned(c.width as i64)),
        advance: (c.advance == Advance::Use).then(|| spanned("use".to_string())),
    }
}

fn feed(f: &crate::model::Feed) -> FeedToml {
    FeedToml {
        file: spanned(f.file.display().to_string()),
        mode: Some(spanned(f.mode.to_string())),
        delimiter: (f.delimiter != ",").then(|| spanned(f.delimiter.clone())),
        columns: f.columns.clone().map(spanned),
        skip_first_line: (f.columns.is_some() && f.skip_first_line).then(|| spanned(true)),
    }
}

fn text(value: impl Into<String>) -> Option<toml::Spanned<String>> {
    Some(spanned(value.into()))
}

fn group(g: &Group, name: String) -> GroupToml {
    let mut t = GroupToml::named(name);
    match &g.load {
        Load::Threads => t.connections = Some(spanned(i64::from(g.threads))),
        Load::Rate(rate) => t.rate = Some(spanned(Value::Float((rate * 1e6).round() / 1e6))),
        Load::Stages(stages) => t.stages = text(stages),
    };
    if g.load != Load::Threads {
        // A throughput timer paces the group's threads: never more
        // requests in flight than threads, the rest wait (backlog).
        t.max_connections = Some(spanned(i64::from(g.threads.max(1))));
    }
    if g.ramp_up_s > 0 {
        t.ramp_up = text(format!("{}s", g.ramp_up_s));
    }
    t.think = g.think.and_then(|think| text(think.text()));
    t.iterations = g.iterations.map(|n| spanned(n as i64));
    t.total_iterations = g.total_iterations.map(|n| spanned(n as i64));
    t.duration = g.duration_s.and_then(|s| text(format!("{s}s")));
    t.start_delay = g.delay_s.and_then(|s| text(format!("{s}s")));
    if g.phase != Phase::Main {
        t.phase = text(g.phase.as_str());
    }
    if g.on_error != OnError::Continue {
        t.on_error = text(g.on_error.as_str());
    }
    t.cookies = g.cookies.then_some(true);
    t.feed = g.feeds.iter().map(feed).collect();
    t.counter = g.counters.iter().map(counter).collect();
    let names = unique_names(g.steps.iter().map(|s| s.name.as_str()));
    t.step = g
        .steps
        .iter()
        .zip(names)
        .map(|(s, name)| step(s, name))
        .collect();
    t
}

fn step(s: &Step, name: String) -> StepToml {
    let mut t = StepToml::new(name, s.url.clone());
    if s.method != "GET" {
        t.method = text(&s.method);
    }
    if !s.headers.is_empty() {
        let mut headers = Table::new();
        for (name, value) in &s.headers {
            headers.insert(name.clone(), Value::String(value.clone()));
        }
        t.headers = Some(spanned(headers));
    }
    t.body = s.body.as_ref().and_then(text);
    t.check = s.checks.iter().map(|c| spanned(c.clone())).collect();
    if !s.extracts.is_empty() {
        let mut extracts = Table::new();
        for (name, source) in &s.extracts {
            extracts.insert(name.clone(), Value::String(source.clone()));
        }
        t.extract = Some(spanned(extracts));
    }
    t.think = s.think.and_then(|think| text(think.text()));
    // The innermost: a step's statistics are pooled under one name.
    t.transaction = s.transactions.last().and_then(|tr| text(&tr.name));
    t.once = s.once.then_some(true);
    if let Some(r) = s.rendezvous {
        // groupSize 0: every thread of the group (SyncTimer.threadStarted).
        let users = match r.users {
            0 => Value::String("all".into()),
            n => Value::Integer(i64::from(n)),
        };
        t.rendezvous = Some(spanned(users));
        t.rendezvous_timeout = r.timeout_ms.and_then(|ms| text(format!("{ms}ms")));
    }
    t.follow_redirects = s.follow_redirects.then_some(true);
    t.keep_alive = (!s.keep_alive).then_some(false);
    t.connect_timeout = s.connect_timeout_ms.and_then(|ms| text(format!("{ms}ms")));
    t.timeout = s.response_timeout_ms.and_then(|ms| text(format!("{ms}ms")));
    t
}
