//! Running a mapped JMeter plan. The engine runs one scenario group per run,
//! so each thread group is its own `stampede run --scenario` run: setUp
//! groups first, then the ordinary groups side by side (each after its
//! start delay), then tearDown groups, as JMeter orders them. A group's loop
//! count becomes the run's request count (threads × loops × samplers) and
//! its scheduler duration the run's duration. The JTL writer (jmeter_jtl.rs)
//! is each run's request log; the report is jmeter_report.rs.

use super::jmeter_jtl::{open_jtl, GroupLabels, JtlSink, SharedJtl};
use super::jmeter_options::{JmeterOptions, Notes, TOOL};
use super::jmeter_summariser::{GroupObserver, Summariser};
use super::{save, usage, Finished, Translated};
use crate::plan_args::build_run;
use crate::run_args::parse_run_args;
use crate::session::{run_plan_in, RunContext};
use stampede_engine::RequestLogOptions;
use stampede_jmeter::model::{Group, Load, OnError, Phase, Plan};
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A scenario file of this run, removed when the run is over.
struct ScenarioFile(PathBuf);

impl Drop for ScenarioFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `-o DIR`: absent or empty (JMeter refuses a folder with files in it);
/// with `-f` its files are removed first.
fn report_dir(dir: &Path, force: bool) -> anyhow::Result<()> {
    let has_files = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
    if has_files && !force {
        return Err(usage(
            TOOL,
            format!(
                "-o {}: the folder is not empty (-f empties it)",
                dir.display()
            ),
        ));
    }
    if has_files {
        std::fs::remove_dir_all(dir)
            .map_err(|e| usage(TOOL, format!("-o {}: cannot empty it: {e}", dir.display())))?;
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| usage(TOOL, format!("-o {}: cannot create: {e}", dir.display())))
}

/// A group's settings the engine does not carry yet, named so the user
/// knows what differs from JMeter.
fn not_honoured(group: &Group) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if group.on_error != OnError::Continue {
        missing.push("on_sample_error");
    }
    let steps = &group.steps;
    if steps.iter().any(|s| s.follow_redirects) {
        missing.push("follow_redirects");
    }
    if steps.iter().any(|s| s.once) {
        missing.push("Once Only Controller");
    }
    if steps.iter().any(|s| s.think.is_some()) {
        missing.push("per-sampler timers");
    }
    if steps.iter().any(|s| s.transaction.is_some()) {
        missing.push("transaction totals");
    }
    let first = steps.first();
    let differ = |ms: fn(&stampede_jmeter::model::Step) -> Option<u64>| {
        steps.iter().any(|s| ms(s) != first.and_then(ms))
    };
    if differ(|s| s.response_timeout_ms) || differ(|s| s.connect_timeout_ms) {
        missing.push("per-sampler timeouts (the first sampler's apply to the group)");
    }
    if steps.iter().any(|s| s.keep_alive) && steps.iter().any(|s| !s.keep_alive) {
        missing.push("per-sampler keep-alive (the group keeps connections alive)");
    }
    missing
}

/// `scheme://host:port` of a step's URL.
fn origin(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    url[after..]
        .find(['/', '?'])
        .map_or(url, |i| &url[..after + i])
}

/// The engine sends a group's steps over its connections to one server:
/// a group whose samplers go to several is refused before any request.
fn one_server(group: &Group) -> anyhow::Result<()> {
    let mut origins: Vec<&str> = Vec::new();
    for step in &group.steps {
        if !origins.contains(&origin(&step.url)) {
            origins.push(origin(&step.url));
        }
    }
    if origins.len() > 1 {
        return Err(usage(
            TOOL,
            format!(
                "thread group '{}' sends to {} servers ({}); this engine runs one server per group",
                group.name,
                origins.len(),
                origins.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The `stampede run` words of one group's scenario file.
fn run_words(group: &Group, file: &Path, html: Option<PathBuf>) -> Vec<String> {
    let mut words = vec!["--scenario".to_string(), file.display().to_string()];
    let mut add = |flag: &str, value: String| {
        words.push(flag.to_string());
        words.push(value);
    };
    if !matches!(group.load, Load::Stages(_)) {
        if let Some(loops) = group.iterations {
            let requests = loops * u64::from(group.threads) * group.steps.len() as u64;
            add("-n", requests.max(1).to_string());
        }
        match (group.duration_s, group.iterations) {
            (Some(seconds), _) => add("-d", format!("{seconds}s")),
            // Forever, as JMeter's -1 loops without a scheduler: until Ctrl-C.
            (None, None) => add("-d", "87600h".to_string()),
            (None, Some(_)) => {}
        }
    }
    let first = group.steps.first();
    if let Some(ms) = first.and_then(|s| s.response_timeout_ms) {
        add("--timeout", format!("{ms}ms"));
    }
    if let Some(ms) = first.and_then(|s| s.connect_timeout_ms) {
        add("--connect-timeout", format!("{ms}ms"));
    }
    if let Some(html) = html {
        add("--html", html.display().to_string());
    }
    if group.steps.iter().all(|s| !s.keep_alive) {
        words.push("--no-keepalive".to_string());
    }
    // HTTP Cookie Manager: a jar per virtual user.
    if group.cookies {
        words.push("--cookie-jar".to_string());
    }
    words
}

/// Runs group `index` of `plan` (its start delay first).
fn run_group(
    o: &JmeterOptions,
    plan: &Plan,
    index: usize,
    jtl: Option<&SharedJtl>,
    all_threads: u32,
    summariser: &Arc<Summariser>,
) -> anyhow::Result<Finished> {
    let group = &plan.groups[index];
    let one = Plan {
        groups: vec![group.clone()],
        ..plan.clone()
    };
    let text = stampede_jmeter::scenario_text(&one, &o.plan.display().to_string());
    let file = ScenarioFile(std::env::temp_dir().join(format!(
        "stampede-jmeter-{}-{index}.toml",
        std::process::id()
    )));
    std::fs::write(&file.0, text)
        .map_err(|e| anyhow::anyhow!("{TOOL}: writing {}: {e}", file.0.display()))?;
    let several = plan.groups.len() > 1;
    let html = o.report_dir.as_ref().map(|dir| match several {
        false => dir.join("index.html"),
        true => dir.join(format!("group-{}.html", index + 1)),
    });
    let stampede_json = o.stampede_json.as_ref().map(|path| match several {
        false => path.clone(),
        true => path.with_extension(format!("group-{}.json", index + 1)),
    });
    let args = parse_run_args(run_words(group, &file.0, html)).map_err(|e| usage(TOOL, e))?;
    let built = build_run(&args)?;
    let request_log = jtl.map(|shared| {
        let labels = GroupLabels {
            group: group.name.clone(),
            number: index + 1,
            threads: group.threads,
            all_threads,
        };
        let urls = built
            .plan
            .mix
            .iter()
            .map(|m| m.target.url.clone())
            .collect();
        let names = group.steps.iter().map(|s| s.name.clone()).collect();
        let sink = JtlSink::new(
            shared.clone(),
            labels,
            built.workload.as_deref(),
            names,
            urls,
        );
        RequestLogOptions::new(Box::new(sink))
    });
    if let Some(delay) = group.delay_s {
        // In short naps, so Ctrl-C during the delay is not held up by it.
        let stop = crate::interrupt::stop_handle()?;
        let until = std::time::Instant::now() + Duration::from_secs(delay);
        while !stop.is_stopped() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let custom = RefCell::new(request_log);
    let observer = RefCell::new(GroupObserver(summariser.clone()));
    let context = RunContext {
        quiet: true,
        exports: Some(&args.exports),
        request_log: Some(&custom),
        watcher: Some(&observer),
        workload: built.workload.clone(),
        ..RunContext::default()
    };
    let result = run_plan_in(&built.plan, built.notices, &context)?;
    let translated = Translated {
        tool: TOOL,
        args,
        // The run's settings come from the plan, not from flags of the tool's.
        flags: |_| None,
        stampede_json,
        quiet: true,
    };
    Ok(Finished {
        translated,
        result,
        script: None,
    })
}

/// Runs the plan's groups phase by phase; within a phase, side by side.
pub(super) fn run(
    o: &JmeterOptions,
    plan: &Plan,
    summariser: &Arc<Summariser>,
    notes: &mut Notes,
) -> anyhow::Result<i32> {
    for group in &plan.groups {
        one_server(group)?;
    }
    if let Some(dir) = &o.report_dir {
        report_dir(dir, o.force)?;
    }
    let jtl = match &o.jtl {
        Some(path) => Some(
            open_jtl(path, o.force)
                .map_err(|e| usage(TOOL, format!("-l {}: {e}", path.display())))?,
        ),
        None => None,
    };
    for group in &plan.groups {
        let missing = not_honoured(group);
        if !missing.is_empty() {
            notes.line(&format!(
                "stampede: note: '{}': not honoured by this engine yet: {}",
                group.name,
                missing.join(", ")
            ));
        }
    }
    let all_threads = plan.groups.iter().map(|g| g.threads).sum();
    let started = std::time::SystemTime::now();
    let mut out = std::io::stdout();
    super::jmeter_report::write_start(&o.plan, started, &mut out)?;
    let mut finished: Vec<(usize, Finished)> = Vec::new();
    for phase in [Phase::Setup, Phase::Main, Phase::Teardown] {
        let indexes: Vec<usize> = (0..plan.groups.len())
            .filter(|&i| plan.groups[i].phase == phase)
            .collect();
        let outcomes: Vec<(usize, anyhow::Result<Finished>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = indexes
                .iter()
                .map(|&i| {
                    let jtl = jtl.as_ref();
                    (
                        i,
                        scope.spawn(move || run_group(o, plan, i, jtl, all_threads, summariser)),
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|(i, handle)| {
                    let outcome = handle
                        .join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("{TOOL}: a group's run panicked")));
                    (i, outcome)
                })
                .collect()
        });
        for (i, outcome) in outcomes {
            finished.push((i, outcome?));
        }
    }
    let results: Vec<(&str, &stampede_metrics::RunResult)> = finished
        .iter()
        .map(|(i, g)| (plan.groups[*i].name.as_str(), &g.result))
        .collect();
    if let Some(last) = summariser.finish() {
        writeln!(out, "{last}")?;
    }
    super::jmeter_report::write_report(&results, started, &mut out)?;
    out.flush()?;
    let mut status = crate::exit::OK;
    for (_, group) in &finished {
        for warning in &group.result.warnings {
            notes.line(&format!("stampede: warning: {warning}"));
        }
        status = status.max(save(group)?);
    }
    Ok(status)
}
