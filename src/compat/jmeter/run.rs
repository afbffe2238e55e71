//! Running a mapped JMeter plan. Each thread group is its own run of its
//! scenario, built from typed values as `stampede run --scenario` builds
//! a file's (its own JTL labels, report and result file): setUp
//! groups first, then the ordinary groups side by side (one after another
//! when the plan serializes them), then tearDown
//! groups, as JMeter orders them. Within a run the engine acts on the
//! group's scenario keys itself (workload/phases.rs, session/mod.rs): a loop
//! count is `iterations` (each thread walks its samplers that many times;
//! under a throughput timer `total_iterations`, threads × loops in all),
//! the scheduler's duration and delay are `duration` and `start_delay`,
//! `on_sample_error` is `on_error`. The JTL writer (stampede_jmeter's
//! runtime/jtl_sink.rs) is each run's request log; the order of the groups
//! is runtime/schedule.rs, the report runtime/report.rs.

use super::options::{JmeterOptions, Notes, TOOL};
use crate::compat::{save, usage, Finished, Translated};
use crate::flags::plan_args::build_scenario_run;
use crate::flags::run_args::RunArgs;
use crate::flags::workload_plan::ScenarioLoad;
use crate::session::{run_plan_in, RunContext};
use stampede_engine::RequestLogOptions;
use stampede_jmeter::model::{Group, Load, Plan};
use stampede_jmeter::runtime::active::ActiveGroups;
use stampede_jmeter::runtime::jtl_sink::{close_jtl, open_jtl, JtlSink, SharedJtl};
use stampede_jmeter::runtime::summariser::{GroupObserver, Summariser};
use stampede_jmeter::runtime::{report, schedule};
use stampede_workload::Scenario;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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

/// What the engine does differently from JMeter for a group, named so the
/// user knows.
fn differences(group: &Group) -> Vec<&'static str> {
    let mut differ = Vec::new();
    if group.steps.iter().any(|s| !s.transactions.is_empty()) {
        differ.push(
            "a Transaction Controller's samples are in the JTL; the summary and the report pool its samplers' samples under its name instead",
        );
    }
    differ
}

/// `scheme://host:port` of a step's URL.
fn origin(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    // `{`: a path may begin with a `{{slot}}` right after the host.
    url[after..]
        .find(['/', '?', '{'])
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

/// `plan`'s scenario (typed values) validated as a scenario file is:
/// templates compiled against their scope, feeds read.
pub(super) fn validated(o: &JmeterOptions, plan: &Plan) -> anyhow::Result<Scenario> {
    let shown = o.plan.display().to_string();
    let base = o.plan.parent().unwrap_or(Path::new(""));
    let scenario = stampede_jmeter::scenario(plan);
    Scenario::from_toml(&format!("{shown} (mapped)"), scenario, base, &[])
        .map_err(|e| anyhow::anyhow!("{TOOL}: the scenario {shown} maps to is invalid: {e}"))
}

/// The `stampede run` arguments of one group's run, its scenario aside.
fn run_args(group: &Group, html: Option<PathBuf>) -> anyhow::Result<RunArgs> {
    let mut args = RunArgs::for_scenario().map_err(|e| usage(TOOL, e))?;
    // The scenario's iterations and duration end the run by themselves;
    // without either: forever, as JMeter's -1 loops without a scheduler,
    // until Ctrl-C.
    let bounded = group.iterations.is_some()
        || group.total_iterations.is_some()
        || group.duration_s.is_some();
    if !matches!(group.load, Load::Stages(_)) && !bounded {
        args.duration = Some(Duration::from_secs(87600 * 3600));
    }
    // Each sampler's timeouts, keep-alive, redirects, timers and Once Only
    // are its step's own keys in the scenario.
    args.exports.html = html;
    // DNS Cache Manager static hosts (stampede_jmeter's dns.rs).
    args.transport.resolve = group.resolve.clone();
    // JMeter trusts every server certificate: JsseSSLManager wraps each
    // trust manager in CustomX509TrustManager, whose checkServerTrusted
    // accepts all. A group has one server; an https one runs --insecure.
    args.transport.insecure = group.steps.iter().any(|s| {
        s.url
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
    });
    // HTTP Cookie Manager: a jar per virtual user.
    args.workload.cookie_jar = group.cookies;
    Ok(args)
}

/// Runs group `index` of `plan` (the engine waits out its start delay).
fn run_group(
    o: &JmeterOptions,
    plan: &Plan,
    index: usize,
    jtl: Option<&SharedJtl>,
    active: &ActiveGroups,
    summariser: &Arc<Summariser>,
) -> anyhow::Result<Finished> {
    let group = &plan.groups[index];
    let one = Plan {
        groups: vec![group.clone()],
        ..plan.clone()
    };
    let scenario = validated(o, &one)?;
    let several = plan.groups.len() > 1;
    let html = o.report_dir.as_ref().map(|dir| match several {
        false => dir.join("index.html"),
        true => dir.join(format!("group-{}.html", index + 1)),
    });
    let stampede_json = o.stampede_json.as_ref().map(|path| match several {
        false => path.clone(),
        true => path.with_extension(format!("group-{}.json", index + 1)),
    });
    let mut args = run_args(group, html)?;
    if let Some(interval) = o.hlog_interval {
        args.exports.hlog_interval = interval;
    }
    args.exports.hlog = o.hlog.as_ref().map(|path| {
        let target = crate::process::hlog_file::HlogTarget {
            path: path.clone(),
            interval: args.exports.hlog_interval,
        };
        match several {
            false => target.path,
            true => target.part(&format!("group-{}", index + 1)).path,
        }
    });
    let shown = format!("{} (mapped)", o.plan.display());
    let built = build_scenario_run(&args, ScenarioLoad::new(&shown, scenario)?)?;
    let request_log = jtl.map(|shared| {
        let urls = built
            .plan
            .mix
            .iter()
            .map(|m| m.target.url.clone())
            .collect();
        let workload = built.workload.as_deref();
        let sink = JtlSink::for_group(shared.clone(), group, index, active.clone(), workload, urls);
        RequestLogOptions {
            // The URL column is the URL each sample sent, templates rendered.
            request_targets: true,
            ..RequestLogOptions::new(Box::new(sink))
        }
    });
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
    let result = run_plan_in(&built.plan, built.notices, &context);
    active.ended(index);
    let mut result = result?;
    result.plan.name = Some(plan_name(o, plan, index));
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

/// What the reports title group `index`'s run with: the TestPlan's name
/// (the .jmx file's name when it has none), and the group's with several.
fn plan_name(o: &JmeterOptions, plan: &Plan, index: usize) -> String {
    let name = test_plan_name(o, plan);
    match plan.groups.len() {
        1 => name,
        _ => format!("{name} · {}", plan.groups[index].name),
    }
}

/// The TestPlan's name, or the .jmx file's name when it has none.
fn test_plan_name(o: &JmeterOptions, plan: &Plan) -> String {
    match plan.name.trim() {
        "" => o
            .plan
            .file_name()
            .unwrap_or(o.plan.as_os_str())
            .to_string_lossy()
            .into_owned(),
        name => name.to_string(),
    }
}

/// Runs the plan's groups phase by phase; within a phase, side by side, or
/// one after another when the plan serializes them.
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
        let differ = differences(group);
        if !differ.is_empty() {
            notes.line(&format!(
                "stampede: note: '{}': {}",
                group.name,
                differ.join("; ")
            ));
        }
    }
    let active = ActiveGroups::new(plan.groups.iter().map(|g| g.threads));
    let started = std::time::SystemTime::now();
    let mut out = std::io::stdout();
    report::write_start(&o.plan, started, &mut out)?;
    // setUp, main and tearDown groups, each on its own thread.
    let finished = schedule::run_groups(
        plan,
        &active,
        |i| run_group(o, plan, i, jtl.as_ref(), &active, summariser),
        || anyhow::anyhow!("{TOOL}: a group's run panicked"),
    )?;
    if let (Some(shared), Some(path)) = (&jtl, &o.jtl) {
        close_jtl(shared).map_err(|e| anyhow::anyhow!("{TOOL}: -l {}: {e}", path.display()))?;
    }
    let results: Vec<(&str, &stampede_metrics::RunResult)> = finished
        .iter()
        .map(|(i, g)| (plan.groups[*i].name.as_str(), &g.result))
        .collect();
    if let Some(last) = summariser.finish() {
        writeln!(out, "{last}")?;
    }
    report::write_report(&results, started, &mut out)?;
    out.flush()?;
    let mut status = crate::process::exit::OK;
    for (_, group) in &finished {
        for warning in &group.result.warnings {
            notes.line(&format!("stampede: warning: {warning}"));
        }
        status = status.max(save(group)?);
    }
    if let (Some(dir), true) = (&o.report_dir, plan.groups.len() > 1) {
        write_index(o, dir, plan, &finished)?;
    }
    Ok(status)
}

/// `-o DIR/index.html` of a plan with several thread groups: every group's
/// figures, linked to its `group-N.html`.
fn write_index(
    o: &JmeterOptions,
    dir: &Path,
    plan: &Plan,
    finished: &[(usize, Finished)],
) -> anyhow::Result<()> {
    let hrefs: Vec<(usize, String)> = finished
        .iter()
        .map(|(i, _)| (*i, format!("group-{}.html", i + 1)))
        .collect();
    let pages: Vec<stampede_report::GroupPage<'_>> = finished
        .iter()
        .zip(&hrefs)
        .map(|((i, group), (_, href))| stampede_report::GroupPage {
            name: &plan.groups[*i].name,
            href,
            result: &group.result,
        })
        .collect();
    let path = dir.join("index.html");
    let mut page = Vec::new();
    stampede_report::render_groups_index(&test_plan_name(o, plan), &pages, &mut page)?;
    std::fs::write(&path, page)
        .map_err(|e| anyhow::anyhow!("{TOOL}: writing {}: {e}", path.display()))
}
