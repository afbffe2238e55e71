//! The workload flags (workload_args.rs) turned into what the engine runs
//! (issue 18): a scenario group's steps become the plan's mix and its load
//! model the plan's, and every request is compiled into a template against
//! the names it may use, checked before any request is sent. A run whose
//! requests are all fixed bytes and that judges nothing gets no workload,
//! so its requests stay pre-encoded.

use crate::workload_args::WorkloadArgs;
use anyhow::Context;
use stampede_engine::http1::encode_request_to;
use stampede_engine::{StepWork, WorkloadSpec};
use stampede_plan::{MixEntry, Plan, RequestSpec, Target};
use stampede_workload::{
    parse_var, CheckSet, Extractor, Group, GroupLoad, RequestTemplate, Scenario, Scope, Sequence,
    Workload,
};
use std::sync::Arc;

/// A scenario file's load, for the plan: its group's steps and model.
pub struct ScenarioLoad {
    pub group: Group,
}

/// Reads `--scenario FILE` (errors say file:line:column). One group per
/// run for now: several groups with their own load models are refused.
pub fn load_scenario(args: &WorkloadArgs) -> anyhow::Result<Option<ScenarioLoad>> {
    let Some(path) = &args.scenario else {
        return Ok(None);
    };
    if !args.feeds.is_empty() {
        anyhow::bail!(
            "--feed with --scenario: a scenario's feeders go in its group (feed = [{{ file = \"...\" }}])"
        );
    }
    let vars = args
        .vars
        .iter()
        .map(|v| {
            parse_var(v)
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .map_err(anyhow::Error::new)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut scenario = Scenario::load(path, &vars)?;
    if scenario.groups.len() > 1 {
        let names: Vec<&str> = scenario.groups.iter().map(|g| g.name.as_str()).collect();
        anyhow::bail!(
            "{}: {} groups ({}): a run takes one group for now; put each group in its own file and run them side by side",
            path.display(),
            names.len(),
            names.join(", ")
        );
    }
    let group = scenario.groups.remove(0);
    Ok(Some(ScenarioLoad { group }))
}

impl ScenarioLoad {
    /// The group's steps as the plan's mix (one entry per step, in order).
    pub fn mix(&self) -> Vec<MixEntry> {
        self.group
            .steps
            .iter()
            .map(|step| MixEntry {
                target: step.target.clone(),
                request: step.request_spec(),
                weight: 1,
            })
            .collect()
    }

    /// The group's load as `-c`, `-r` or `--stages` would give it.
    pub fn load(&self) -> &GroupLoad {
        &self.group.load
    }
}

/// The engine's workload for `plan`, or `None` when every request is fixed
/// bytes and nothing judges responses.
pub fn build_workload(
    args: &WorkloadArgs,
    plan: &Plan,
    scenario: Option<&ScenarioLoad>,
    agent: Option<(u32, u32)>,
) -> anyhow::Result<Option<Arc<WorkloadSpec>>> {
    let (agent, agents) = agent.unwrap_or((0, 1));
    let spec = match scenario {
        Some(scenario) => scenario_spec(args, plan, &scenario.group)?,
        None => flags_spec(args, plan)?,
    };
    let Some(mut spec) = spec else {
        return Ok(None);
    };
    spec.capture_max = args.capture_max;
    spec.agent = agent;
    spec.agents = agents;
    spec.sequence = Sequence::new(agent, agents);
    refuse_unsupported(plan)?;
    Ok(Some(Arc::new(spec)))
}

/// What the workload paths do not carry yet, refused in one line each.
fn refuse_unsupported(plan: &Plan) -> anyhow::Result<()> {
    if plan.transport.http2 {
        anyhow::bail!(
            "templates, feeders, checks and scenarios run over HTTP/1.1 for now: drop --http2"
        );
    }
    if plan.transport.pipeline > 1 {
        anyhow::bail!(
            "templates, feeders, checks and scenarios send one request at a time: drop --pipeline"
        );
    }
    Ok(())
}

/// `--var`, `--feed`, `--check`, `--extract` on the URL (or each request
/// of a `--targets` mix).
fn flags_spec(args: &WorkloadArgs, plan: &Plan) -> anyhow::Result<Option<WorkloadSpec>> {
    let workload = Workload::from_flags(&args.vars, &args.feeds, &args.checks, &args.extracts)?;
    let requests = requests_of(plan);
    let mut steps = Vec::with_capacity(requests.len());
    for (target, request) in &requests {
        steps.push(StepWork {
            name: None,
            template: template_for(plan, target, request, &workload.scope)?,
            checks: workload.checks.clone(),
            extracts: workload.extracts.clone(),
        });
    }
    let needed = workload.judges_responses()
        || !workload.feeders.is_empty()
        || steps.iter().any(|s| s.template.is_some());
    Ok(needed.then(|| WorkloadSpec {
        steps,
        feeders: workload.feeders,
        extract_slots: workload.scope.extract_slots(),
        ..WorkloadSpec::default()
    }))
}

/// A scenario group: its steps in order, each with its own checks and
/// extracts (and the command line's `--check`/`--extract` on every step).
fn scenario_spec(
    args: &WorkloadArgs,
    plan: &Plan,
    group: &Group,
) -> anyhow::Result<Option<WorkloadSpec>> {
    let mut scope = group.scope.clone();
    let cli_checks = CheckSet::parse(&args.checks)?;
    let cli_extracts = args
        .extracts
        .iter()
        .map(|e| Extractor::parse_assignment(e, &mut scope))
        .collect::<Result<Vec<_>, _>>()?;
    let mut steps = Vec::with_capacity(group.steps.len());
    for step in &group.steps {
        let request = step.request_spec();
        let template = template_for(plan, &step.target, &request, &scope)
            .with_context(|| format!("step {}", step.name))?;
        let mut checks: Vec<String> = step
            .checks
            .checks()
            .iter()
            .map(|c| c.as_str().to_string())
            .collect();
        checks.extend(cli_checks.checks().iter().map(|c| c.as_str().to_string()));
        let mut extracts = step.extracts.clone();
        extracts.extend(cli_extracts.iter().cloned());
        steps.push(StepWork {
            name: Some(step.name.clone()),
            template,
            checks: CheckSet::parse(&checks)?,
            extracts,
        });
    }
    Ok(Some(WorkloadSpec {
        steps,
        feeders: group.feeders.clone(),
        extract_slots: scope.extract_slots(),
        sequential: true,
        think: group.think,
        ..WorkloadSpec::default()
    }))
}

/// The plan's requests by target index: the mix's, or the one request.
fn requests_of(plan: &Plan) -> Vec<(Target, RequestSpec)> {
    if plan.mix.is_empty() {
        vec![(plan.target.clone(), plan.request.clone())]
    } else {
        plan.mix
            .iter()
            .map(|e| (e.target.clone(), e.request.clone()))
            .collect()
    }
}

/// The request compiled against `scope`, or `None` when it renders the
/// very bytes the engine pre-encodes (nothing to do per request).
fn template_for(
    plan: &Plan,
    target: &Target,
    request: &RequestSpec,
    scope: &Scope,
) -> anyhow::Result<Option<RequestTemplate>> {
    let template = RequestTemplate::from_plan(plan, target, request, scope)?;
    let fixed = template
        .static_bytes()
        .is_some_and(|bytes| bytes == encode_request_to(plan, target, request));
    Ok((!fixed).then_some(template))
}
