//! The workload flags (workload_args.rs) turned into what the engine runs:
//! a scenario group's steps become the plan's mix and its load
//! model the plan's, and every request is compiled into a template against
//! the names it may use, checked before any request is sent. A run whose
//! requests are all fixed bytes and that judges nothing gets no workload,
//! so its requests stay pre-encoded.

use crate::flags::targets_args::with_common_headers;
use crate::flags::workload_args::WorkloadArgs;
use anyhow::Context;
use stampede_engine::http1::encode_request_to;
use stampede_engine::{GroupWork, StepWork, WorkloadSpec};
use stampede_plan::{Header, LoadModel, MixEntry, Plan, RequestSpec, Target};
use stampede_workload::{
    parse_var, Advance, CheckSet, Extractor, Group, GroupLoad, RequestTemplate, Scenario, Scope,
    Script, Sequence, Workload,
};
use std::sync::Arc;

/// A scenario file's groups, for the plan: their steps (the plan's mix,
/// group after group) and load models.
pub struct ScenarioLoad {
    pub groups: Vec<Group>,
}

/// The plan's name of a `--scenario FILE` run: the file's name
/// (`checkout.toml`), for the reports to title the run with.
pub fn scenario_name(args: &WorkloadArgs) -> Option<String> {
    let path = args.scenario.as_ref()?;
    let name = path.file_name().unwrap_or(path.as_os_str());
    Some(name.to_string_lossy().into_owned())
}

/// Reads `--scenario FILE` (errors say file:line:column).
pub fn load_scenario(args: &WorkloadArgs) -> anyhow::Result<Option<ScenarioLoad>> {
    let Some(path) = &args.scenario else {
        return Ok(None);
    };
    if !args.feeds.is_empty() {
        anyhow::bail!(
            "--feed with --scenario: a scenario's feeders go in its group (feed = [{{ file = \"...\" }}])"
        );
    }
    let scenario = Scenario::load(path, &vars_of(args)?)?;
    ScenarioLoad::new(&path.display().to_string(), scenario).map(Some)
}

/// `--var NAME=VALUE`s as a scenario takes them.
pub fn vars_of(args: &WorkloadArgs) -> anyhow::Result<Vec<(String, String)>> {
    args.vars
        .iter()
        .map(|v| {
            parse_var(v)
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .map_err(anyhow::Error::new)
        })
        .collect()
}

impl ScenarioLoad {
    /// A validated scenario's groups for a run; `name` (its file) names it
    /// in the one refusal: steps that go to more than one origin.
    pub fn new(name: &str, scenario: Scenario) -> anyhow::Result<ScenarioLoad> {
        if let Some(first) = scenario.groups.iter().flat_map(|g| &g.steps).next() {
            let origin = |t: &Target| (t.scheme, t.authority.to_ascii_lowercase());
            let other = scenario
                .groups
                .iter()
                .flat_map(|g| &g.steps)
                .find(|s| origin(&s.target) != origin(&first.target));
            if let Some(other) = other {
                anyhow::bail!(
                    "{name}: step {} goes to {}, step {} to {}: a scenario's steps go to one origin (scheme, host and port) for now",
                    first.name,
                    first.target.authority,
                    other.name,
                    other.target.authority
                );
            }
        }
        let steps = || scenario.groups.iter().flat_map(|g| &g.steps);
        if let Some(ws) = steps().find(|s| s.send.is_some()) {
            if let Some(http) = steps().find(|s| s.send.is_none()) {
                anyhow::bail!(
                    "{name}: step {} sends on WebSocket, step {} over HTTP: a scenario's steps are all one or the other for now",
                    ws.name,
                    http.name
                );
            }
            let url = &ws.target.path_and_query;
            if let Some(other) = steps().find(|s| &s.target.path_and_query != url) {
                anyhow::bail!(
                    "{name}: steps {} and {} upgrade different URLs: a WebSocket scenario's steps send on one URL for now",
                    ws.name,
                    other.name
                );
            }
            if let Some(open) =
                (scenario.groups.iter()).find(|g| !matches!(g.load, GroupLoad::Closed { .. }))
            {
                anyhow::bail!(
                    "{name}: group {} has a rate: a WebSocket scenario's groups run with connections = N for now",
                    open.name
                );
            }
        }
        Ok(ScenarioLoad {
            groups: scenario.groups,
        })
    }

    /// True when the steps send WebSocket messages (`send`, a `ws://` URL).
    pub fn is_websocket(&self) -> bool {
        (self.groups.iter()).any(|g| g.steps.iter().any(|s| s.send.is_some()))
    }
}

/// How long a run whose groups all end by themselves may last when no
/// `-d` or `-n` is given: it ends when they are done (`stop_reason:
/// "groups_done"`), this is only the cap.
pub const GROUPS_DONE_CAP: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

impl ScenarioLoad {
    /// True when every group ends by itself (its iterations or duration).
    pub fn ends_by_itself(&self) -> bool {
        self.groups.iter().all(|g| {
            g.limits.iterations.is_some()
                || g.limits.total_iterations.is_some()
                || g.limits.duration.is_some()
        })
    }

    /// Refuses what the group keys cannot be combined with: `--warmup`
    /// (the groups' clock starts with the run, and a warm-up would drop
    /// iterations from the results).
    pub fn refuse_with(&self, warmup: bool) -> anyhow::Result<()> {
        let keyed = self.groups.iter().find(|g| {
            let l = &g.limits;
            l.iterations.is_some()
                || l.total_iterations.is_some()
                || l.duration.is_some()
                || l.start_delay.is_some()
                || l.phase != Default::default()
        });
        if let (true, Some(group)) = (warmup, keyed) {
            anyhow::bail!(
                "--warmup with group {}'s iterations, duration, start_delay or phase: the groups' clock starts with the run; drop --warmup",
                group.name
            );
        }
        Ok(())
    }
}

impl ScenarioLoad {
    /// True when a group asks for a cookie jar (`cookies = true`).
    pub fn wants_cookies(&self) -> bool {
        self.groups.iter().any(|g| g.limits.cookies)
    }
}

impl ScenarioLoad {
    /// Every group's steps as the plan's mix (one entry per step, in
    /// order). The command line's `common` headers (-H, -T, auth, cookies)
    /// apply to every step as to every `--targets` block; a step's own
    /// header of the same name wins; `--http1.0` applies to every step.
    pub fn mix(&self, common: &[Header], http10: bool) -> Vec<MixEntry> {
        self.groups
            .iter()
            .flat_map(|group| &group.steps)
            .map(|step| {
                let mut request = step.request_spec();
                request.headers = with_common_headers(common, request.headers);
                request.http10 = http10;
                let says_connection = |h: &Header| h.name.eq_ignore_ascii_case("connection");
                if let Some(keep) = step.options.keep_alive {
                    if !request.headers.iter().any(says_connection) {
                        // The step's own keep-alive, told to the server as
                        // the run's is (the engine closes after it).
                        let value = if keep { "keep-alive" } else { "close" };
                        request.headers.push(Header {
                            name: "Connection".into(),
                            value: value.into(),
                        });
                    }
                }
                MixEntry {
                    target: step.target.clone(),
                    request,
                    weight: 1,
                }
            })
            .collect()
    }

    /// The first group's load: the plan's model (the others' are each
    /// group's own, [`build_workload`]'s `models`).
    pub fn first(&self) -> &Group {
        &self.groups[0]
    }
}

/// The engine's workload for `plan`, or `None` when every request is fixed
/// bytes and nothing judges responses. A `script` (wrk's Lua, `--script`)
/// builds the requests itself; checks still judge its responses. `models`:
/// a scenario's load model per group (the plan's is the first's).
pub fn build_workload(
    args: &WorkloadArgs,
    plan: &Plan,
    scenario: Option<(&ScenarioLoad, Vec<LoadModel>)>,
    agent: Option<(u32, u32)>,
    script: Option<Arc<dyn Script>>,
) -> anyhow::Result<Option<Arc<WorkloadSpec>>> {
    let (agent, agents) = agent.unwrap_or((0, 1));
    let has_scenario = scenario.is_some();
    let has_script = script.is_some();
    let scenario_cookies = scenario.as_ref().is_some_and(|(s, _)| s.wants_cookies());
    let spec = match scenario {
        Some((scenario, models)) => Some(scenario_spec(args, plan, &scenario.groups, models)?),
        None => flags_spec(args, plan)?,
    };
    let cookie_jar = args.cookie_jar || scenario_cookies;
    let spec = match (spec, script.is_some() || cookie_jar) {
        (None, true) => Some(WorkloadSpec {
            steps: vec![StepWork::default(); requests_of(plan).len()],
            groups: vec![GroupWork {
                steps: 0..requests_of(plan).len(),
                ..GroupWork::default()
            }],
            ..WorkloadSpec::default()
        }),
        (spec, _) => spec,
    };
    let Some(mut spec) = spec else {
        return Ok(None);
    };
    if script.is_some() && (has_scenario || spec.renders()) {
        anyhow::bail!(
            "a script builds the requests itself: drop --scenario and the {{{{...}}}} templates"
        );
    }
    spec.script = script;
    spec.cookie_jar = cookie_jar;
    spec.capture_max = args.capture_max;
    spec.agent = agent;
    spec.agents = agents;
    spec.sequence = Sequence::new(agent, agents);
    let given = workload_given(args, has_scenario, has_script, &spec);
    refuse_unsupported(plan, &spec, &given)?;
    refuse_for_websocket(plan, &spec)?;
    Ok(Some(Arc::new(spec)))
}

/// What the user gave that makes this run a workload run, in their words
/// ("--script", "--check and --feed", ...), for the refusals to name.
fn workload_given(
    args: &WorkloadArgs,
    has_scenario: bool,
    has_script: bool,
    spec: &WorkloadSpec,
) -> String {
    let given: Vec<&str> = [
        (has_script, "--script"),
        (has_scenario, "--scenario"),
        (!args.vars.is_empty(), "--var"),
        (
            !args.feeds.is_empty() || !args.built_feeders.is_empty(),
            "--feed",
        ),
        (!args.checks.is_empty(), "--check"),
        (!args.extracts.is_empty(), "--extract"),
        (!has_scenario && spec.renders(), "{{...}} templates"),
        (args.cookie_jar, "--cookie-jar"),
    ]
    .into_iter()
    .filter_map(|(present, name)| present.then_some(name))
    .collect();
    match given.as_slice() {
        [] => "templates, feeders and checks".into(),
        [one] => (*one).into(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What the workload paths do not carry yet, refused in one line each,
/// naming what the user gave (`given`, from [`workload_given`]).
fn refuse_unsupported(plan: &Plan, spec: &WorkloadSpec, given: &str) -> anyhow::Result<()> {
    if plan.transport.http3 {
        anyhow::bail!("with {given}, a run goes over HTTP/1.1 or HTTP/2 for now: drop --http3");
    }
    if plan.transport.http2 {
        // HTTP/2 streams share their connection: it stays open.
        if let Some(step) = spec.steps.iter().find(|s| s.options.keep_alive.is_some()) {
            anyhow::bail!(
                "step {}: keep_alive is HTTP/1.1's: drop it or --http2",
                step.name.as_deref().unwrap_or("1")
            );
        }
    }
    if plan.transport.pipeline > 1 {
        anyhow::bail!("with {given}, each connection sends one request at a time: drop --pipeline");
    }
    Ok(())
}

/// `--var`, `--feed`, `--check`, `--extract` on the URL (or each request
/// of a `--targets` mix).
fn flags_spec(args: &WorkloadArgs, plan: &Plan) -> anyhow::Result<Option<WorkloadSpec>> {
    crate::flags::workload_args::refuse_misspelt_feed_modes(&args.feeds)?;
    let mut workload = Workload::from_flags(&args.vars, &args.feeds, &args.checks, &args.extracts)?;
    for feeder in &args.built_feeders {
        workload.add_feeder(feeder.clone())?;
    }
    let requests = requests_of(plan);
    let mut steps = Vec::with_capacity(requests.len());
    let websocket = plan.transport.websocket.as_ref();
    for (target, request) in &requests {
        let (template, message) = match websocket {
            // The upgrade is fixed; the message is the template.
            Some(ws) => (
                None,
                Some(ws_message(
                    ws,
                    "--ws-message",
                    &ws.message,
                    &workload.scope,
                )?),
            ),
            None => (template_for(plan, target, request, &workload.scope)?, None),
        };
        steps.push(StepWork {
            name: None,
            template,
            checks: workload.checks.clone(),
            extracts: workload.extracts.clone(),
            options: Default::default(),
            message,
            close_after: false,
        });
    }
    // A WebSocket message with built-in names only is rendered by the
    // connection itself (plan/ws_plan.rs): no user session per message.
    let needed = workload.judges_responses()
        || !workload.feeders.is_empty()
        || (websocket.is_some() && (!args.vars.is_empty() || args.cookie_jar))
        || steps.iter().any(|s| s.template.is_some());
    Ok(needed.then(|| WorkloadSpec {
        groups: vec![GroupWork {
            steps: 0..steps.len(),
            feeders: workload.feeders,
            extract_slots: workload.scope.extract_slots(),
            ..GroupWork::default()
        }],
        steps,
        ..WorkloadSpec::default()
    }))
}

/// A scenario's groups: each group's steps in order, each step with its
/// own checks and extracts (and the command line's `--check`/`--extract`
/// on every step); each group with its own load model from `models`.
fn scenario_spec(
    args: &WorkloadArgs,
    plan: &Plan,
    groups: &[Group],
    models: Vec<LoadModel>,
) -> anyhow::Result<WorkloadSpec> {
    let cli_checks = CheckSet::parse(&args.checks)?;
    // The plan's mix is the steps in order, with the command line's headers.
    let requests = requests_of(plan);
    let mut steps = Vec::new();
    let mut group_works = Vec::with_capacity(groups.len());
    for (group, model) in groups.iter().zip(models) {
        let mut scope = group.scope.clone();
        let cli_extracts = args
            .extracts
            .iter()
            .map(|e| Extractor::parse_assignment(e, &mut scope))
            .collect::<Result<Vec<_>, _>>()?;
        let first = steps.len();
        for step in &group.steps {
            let Some((target, request)) = requests.get(steps.len()) else {
                anyhow::bail!(
                    "step {} of group {} is not in the plan",
                    step.name,
                    group.name
                );
            };
            let (template, message) = match (&step.send, &plan.transport.websocket) {
                (Some(send), Some(ws)) => (None, Some(ws_message(ws, "send", send, &scope))),
                _ => (
                    template_for(plan, target, request, &scope).transpose(),
                    None,
                ),
            };
            let here = || format!("group {}: step {}", group.name, step.name);
            let template = template.transpose().with_context(here)?;
            let message = message.transpose().with_context(here)?;
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
                name: Some(step_name(groups.len(), &group.name, &step.name)),
                template,
                checks: CheckSet::parse(&checks)?,
                extracts,
                options: step.options.clone(),
                message,
                close_after: step.close,
            });
        }
        group_works.push(GroupWork {
            name: Some(group.name.clone()),
            steps: first..steps.len(),
            feeders: group.feeders.clone(),
            extract_slots: scope.extract_slots(),
            counters: scope
                .counters()
                .filter(|c| c.spec.advance == Advance::Iteration)
                .cloned()
                .collect(),
            sequential: true,
            think: group.think,
            model: Some(model),
            limits: group.limits.clone(),
        });
    }
    Ok(WorkloadSpec {
        steps,
        groups: group_works,
        ..WorkloadSpec::default()
    })
}

/// A WebSocket message (`--ws-message`, a step's `send`) compiled against
/// the workload's names, as a request body is; a binary one is its bytes.
fn ws_message(
    ws: &stampede_plan::WebSocketSpec,
    field: &str,
    text: &[u8],
    scope: &Scope,
) -> anyhow::Result<stampede_workload::Template> {
    Ok(match ws.binary {
        true => stampede_workload::Template::literal(text),
        false => stampede_workload::Template::compile(field, text, scope)?,
    })
}

/// What a WebSocket run's checks and extractors cannot read, refused in
/// one line each: a message has no status or header, a binary one is not
/// JSON; and a script, which builds HTTP requests.
fn refuse_for_websocket(plan: &Plan, spec: &WorkloadSpec) -> anyhow::Result<()> {
    let Some(ws) = &plan.transport.websocket else {
        return Ok(());
    };
    if spec.script.is_some() {
        anyhow::bail!(
            "a ws:// URL sends messages, and a script builds HTTP requests: drop --script"
        );
    }
    for step in &spec.steps {
        let named = step
            .name
            .as_deref()
            .map_or(String::new(), |n| format!("step {n}: "));
        let fixed = step.message.as_ref().and_then(|m| m.static_bytes());
        if let (Some(source), Some(fixed)) = (&ws.match_id, fixed) {
            crate::flags::transport_args::refuse_without_id(source, &fixed)
                .map_err(|e| anyhow::anyhow!("{named}{e}"))?;
        }
        for check in step.checks.checks() {
            if let Some(why) = check.cannot_judge_message(ws.binary) {
                anyhow::bail!("{named}check '{}': {why}", check.as_str());
            }
        }
        for extract in &step.extracts {
            if let Some(why) = extract.cannot_read_message(ws.binary) {
                anyhow::bail!("{named}extract {}: {why}", extract.name());
            }
        }
    }
    Ok(())
}

/// A step's name in results: `group/step` when the file has several groups.
fn step_name(groups: usize, group: &str, step: &str) -> String {
    if groups > 1 {
        format!("{group}/{step}")
    } else {
        step.to_string()
    }
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
