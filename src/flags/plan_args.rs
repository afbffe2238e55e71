//! Args → Plan: the one place `stampede run`'s arguments become a validated
//! [`Plan`] (with the notices for the user), shared by every command that
//! builds on run. Running the plan is session/mod.rs.

use crate::flags::agent;
use crate::flags::run_args::{ArrivalArg, RunArgs, StagesArg};
use crate::flags::targets_args::read_mix;
use crate::flags::workload_plan::{build_workload, load_scenario, ScenarioLoad};
use anyhow::Context;
use stampede_engine::WorkloadSpec;
use stampede_plan::{
    parse_header, Arrival, LoadModel, Plan, RequestSpec, Schedule, StopCondition,
    DEFAULT_PACE_WINDOW,
};
use stampede_workload::{Group, GroupLoad};
use std::sync::Arc;
use std::time::Duration;

/// Connections allowed in the open model when `-c` is not given.
const DEFAULT_RATE_CONNECTIONS: usize = 1000;
/// Connections in the closed model when `-c` is not given.
const DEFAULT_CONNECTIONS: usize = 50;
/// The longest `--pace-window`: a window is a choice of lateness, not a
/// way to send a second's requests in one burst.
const MAX_PACE_WINDOW: Duration = Duration::from_secs(1);

/// The load model the arguments describe, and how long it runs.
fn build_model(args: &RunArgs) -> anyhow::Result<(LoadModel, Option<Duration>)> {
    let duration = match &args.stages {
        Some(StagesArg(stages)) => Some(stages.iter().map(|s| s.duration).sum()),
        None if args.requests.is_some() => args.duration,
        None => Some(args.duration.unwrap_or(Duration::from_secs(10))),
    };
    let shape = |target: f64| -> anyhow::Result<Schedule> {
        if let Some(StagesArg(stages)) = &args.stages {
            return Ok(Schedule {
                start: 0.0,
                stages: stages.clone(),
            });
        }
        let total = duration.unwrap_or(Duration::from_secs(3600));
        Ok(match args.ramp_up {
            Some(ramp) if ramp >= total => anyhow::bail!(
                "--ramp-up {} must be shorter than the run ({})",
                stampede_plan::format_duration(ramp),
                stampede_plan::format_duration(total)
            ),
            Some(ramp) => Schedule::ramp(target, ramp, total - ramp),
            None => Schedule::constant(target, total),
        })
    };
    let model = match args.rate {
        Some(rate) => {
            if !(rate.is_finite() && rate > 0.0) {
                anyhow::bail!("rate must be a number above zero (-r {rate})");
            }
            LoadModel::Rate {
                per_s: shape(rate)?,
                max_connections: args.connections.unwrap_or(DEFAULT_RATE_CONNECTIONS),
                arrival: match args.arrival {
                    ArrivalArg::Uniform => Arrival::Uniform,
                    ArrivalArg::Poisson => Arrival::Poisson,
                },
                pace_window: args.pace_window.unwrap_or(DEFAULT_PACE_WINDOW),
                batch_reads: args.batch_reads,
            }
        }
        None => {
            if args.stages.is_some() && args.connections.is_some() {
                anyhow::bail!(
                    "--stages targets are the connections; drop -c (or add -r to make them rates)"
                );
            }
            let connections = args.connections.unwrap_or(DEFAULT_CONNECTIONS);
            LoadModel::Closed {
                connections: shape(connections as f64)?,
            }
        }
    };
    Ok((model, duration))
}

/// A validated plan with its workload (templates, checks, steps) and the
/// notices for the user.
pub struct BuiltRun {
    pub plan: Plan,
    pub notices: Vec<String>,
    pub workload: Option<Arc<WorkloadSpec>>,
    /// `--script`, prepared (its `done` runs after the report).
    pub script: Option<Arc<stampede_lua::LuaScript>>,
}

/// Builds and validates the plan of a command that sends fixed requests
/// only (sweep, the compat front-ends): a templated URL is refused there.
pub fn build_plan(args: &RunArgs) -> anyhow::Result<(Plan, Vec<String>)> {
    if args.script.script.is_some() {
        anyhow::bail!("--script is for `stampede run` and `stampede wrk -s`");
    }
    let built = build_run(args)?;
    if built.workload.is_some() {
        anyhow::bail!(
            "templates, feeders, checks and scenarios are for `stampede run` (this command sends fixed requests)"
        );
    }
    Ok((built.plan, built.notices))
}

/// Builds and validates `stampede run`'s plan and workload.
pub fn build_run(args: &RunArgs) -> anyhow::Result<BuiltRun> {
    let with_curl;
    let args = match &args.curl {
        Some(command) => {
            let mut applied = args.clone();
            crate::flags::curl_command::CurlRequest::parse(command)?.apply(&mut applied)?;
            with_curl = applied;
            &with_curl
        }
        None => args,
    };
    if let Some((scenario, rest, notes)) = crate::flags::har_run::load(args)? {
        let mut built = build_run_with(&rest, Some(scenario))?;
        built.notices.extend(notes);
        return Ok(built);
    }
    let scenario = load_scenario(&args.workload)?;
    build_run_with(args, scenario)
}

/// Builds and validates the plan and workload of a scenario given as typed
/// values (stampede jmeter's mapped plan), `args` holding no `--scenario`:
/// the same checks and defaults as `stampede run --scenario FILE`.
pub fn build_scenario_run(args: &RunArgs, scenario: ScenarioLoad) -> anyhow::Result<BuiltRun> {
    if args.workload.scenario.is_some() {
        anyhow::bail!("a scenario is given twice: as values and as --scenario");
    }
    build_run_with(args, Some(scenario))
}

fn build_run_with(args: &RunArgs, scenario: Option<ScenarioLoad>) -> anyhow::Result<BuiltRun> {
    let scenario_args;
    let mut models = Vec::new();
    let bounded_args;
    let args = match &scenario {
        Some(scenario)
            if scenario.ends_by_itself() && args.duration.is_none() && args.requests.is_none() =>
        {
            // Every group ends by itself: the run ends when they are done.
            let mut capped = args.clone();
            capped.duration = Some(crate::flags::workload_plan::GROUPS_DONE_CAP);
            bounded_args = capped;
            &bounded_args
        }
        _ => args,
    };
    let args = match &scenario {
        Some(scenario) => {
            scenario.refuse_with(args.warmup.is_some())?;
            if args.url.is_some()
                || args.connections.is_some()
                || args.rate.is_some()
                || args.stages.is_some()
            {
                anyhow::bail!(
                    "--scenario sets the URLs and the load (each group's connections, rate or stages): drop the URL, -c, -r and --stages"
                );
            }
            if args.transport.pipeline > 1 {
                // Before the plan's own check, which would name --targets.
                anyhow::bail!("--scenario sends one request at a time per user: drop --pipeline");
            }
            if args.body.is_some() || args.body_file.is_some() || args.method != "GET" {
                anyhow::bail!(
                    "--scenario sets each step's method and body: drop -m, -b and -D (put them in the steps)"
                );
            }
            for group in &scenario.groups {
                let group_args = with_group_load(args, group);
                let (mut model, _) =
                    build_model(&group_args).with_context(|| format!("group {}", group.name))?;
                agent::share_model(&args.agent, &mut model)
                    .with_context(|| format!("group {}", group.name))?;
                models.push(model);
            }
            scenario_args = with_group_load(args, scenario.first());
            &scenario_args
        }
        None => args,
    };
    let (mut plan, mut notices) = build_fixed_plan(args, scenario.as_ref())?;
    if let Some(scenario) = &scenario {
        // Each group runs on its own threads, one at least.
        let groups = scenario.groups.len();
        if groups > plan.threads {
            if let Some(asked) = args.threads {
                notices.push(format!(
                    "{groups} groups run side by side on {groups} threads (one each at least; -t {asked} asked for fewer)"
                ));
            }
            plan.threads = groups;
        }
    }
    let agent = args.agent.agent.map(|share| (share.index, share.count));
    let scenario = scenario.as_ref().map(|s| (s, models));
    let script = (args.script).prepare(args.url.as_deref(), &plan)?;
    let engine_script = script
        .clone()
        .map(|s| s as Arc<dyn stampede_workload::Script>);
    let workload = build_workload(&args.workload, &plan, scenario, agent, engine_script)?;
    Ok(BuiltRun {
        plan,
        notices,
        workload,
        script,
    })
}

/// The arguments with a scenario group's load in place of `-c`, `-r`,
/// `--stages` and `--ramp-up`.
fn with_group_load(args: &RunArgs, group: &Group) -> RunArgs {
    let mut args = args.clone();
    match &group.load {
        GroupLoad::Closed { connections } => args.connections = Some(*connections as usize),
        GroupLoad::Open { rate } => args.rate = Some(*rate),
        GroupLoad::Stages(stages) => {
            args.stages = Some(StagesArg(stages.clone()));
            // A staged group is an open model: its targets are rates.
            args.rate = Some(stages.iter().map(|s| s.target).fold(0.0, f64::max).max(1.0));
        }
    }
    if let (Some(cap), false) = (
        group.limits.max_connections,
        matches!(group.load, GroupLoad::Closed { .. }),
    ) {
        args.connections = Some(cap as usize);
    }
    if group.ramp_up.is_some() {
        args.ramp_up = group.ramp_up;
    }
    args
}

/// The HTTP URL a `ws://` (`wss://`) URL upgrades from, and whether it
/// was one (stampede-workload's rule, which scenario steps share); any
/// other URL as it is. A scheme `run` does not speak is refused here,
/// where all four it speaks can be named.
fn websocket_url(url: &str) -> anyhow::Result<(String, bool)> {
    let (http_url, is_ws) = stampede_workload::websocket_url(url);
    if !is_ws {
        if let Some((scheme, _)) = url.split_once("://") {
            let known = ["http", "https", "ws", "wss"];
            if !known.iter().any(|k| k.eq_ignore_ascii_case(scheme)) && !scheme.contains(['/', '{'])
            {
                anyhow::bail!("unsupported scheme '{scheme}' (supported: http, https, ws, wss)");
            }
        }
    }
    Ok((http_url, is_ws))
}

/// A WebSocket upgrade is written once per connection from the URL and the
/// headers as given (drive/ws_conn.rs): a `{{…}}` there would reach the
/// server as typed, so it is refused; per-message values go in the message.
fn upgrade_without_templates(
    url: &str,
    is_ws: bool,
    headers: &[stampede_plan::Header],
    scenario: Option<&ScenarioLoad>,
) -> anyhow::Result<()> {
    let not_yet = "templates are not rendered in a WebSocket upgrade yet (it would send them as written); put per-message values in the message";
    if is_ws && url.contains("{{") {
        anyhow::bail!("{url}: {not_yet}");
    }
    if let Some(header) = headers.iter().find(|h| h.value.contains("{{")) {
        anyhow::bail!("-H {}: {not_yet}", header.name);
    }
    let steps = scenario
        .into_iter()
        .flat_map(|s| &s.groups)
        .flat_map(|g| &g.steps);
    if let Some(step) = steps
        .filter(|s| s.send.is_some())
        .find(|s| s.target.url.contains("{{"))
    {
        anyhow::bail!(
            "scenario step {:?} {}: {not_yet}",
            step.name,
            step.target.url
        );
    }
    Ok(())
}

fn build_fixed_plan(
    args: &RunArgs,
    scenario: Option<&ScenarioLoad>,
) -> anyhow::Result<(Plan, Vec<String>)> {
    if args.seed.is_some() && !(args.rate.is_some() && args.arrival == ArrivalArg::Poisson) {
        anyhow::bail!("--seed draws the gaps of Poisson arrivals: add -r RATE --arrival poisson");
    }
    if args.batch_reads {
        if args.rate.is_none() {
            anyhow::bail!("--batch-reads batches the open model's reads: add -r RATE");
        }
        if args.pace_window.is_some_and(|w| w.is_zero()) {
            anyhow::bail!("--batch-reads reads once per --pace-window, and a window of 0 has none");
        }
    }
    if let Some(window) = args.pace_window {
        if args.rate.is_none() {
            anyhow::bail!("--pace-window paces the open model: add -r RATE");
        }
        if window > MAX_PACE_WINDOW {
            anyhow::bail!(
                "--pace-window {} is more than 1s: it is the most a request may be sent late on purpose",
                stampede_plan::format_duration(window)
            );
        }
    }
    let url = match (&args.url, &args.targets) {
        (Some(url), None) => url.clone(),
        (Some(_), Some(_)) => anyhow::bail!("give either a URL or --targets, not both"),
        (None, Some(_)) => String::new(),
        (None, None) if scenario.is_some() => String::new(),
        (None, None) => anyhow::bail!("no URL given"),
    };
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(path)) => {
            std::fs::read(path).with_context(|| format!("reading body file {}", path.display()))?
        }
        (None, None) => Vec::new(),
    };
    let mut headers = args.headers.clone();
    if let Some(content_type) = &args.content_type {
        headers.push(parse_header(&format!("Content-Type: {content_type}"))?);
    }
    let extra = args.request_extras.headers(&headers)?;
    headers.extend(extra);
    let (compression, accept_encoding) = args.transport.compression(&headers);
    headers.extend(accept_encoding);
    let method = if args.request_extras.head {
        "HEAD".to_string()
    } else {
        args.method.to_ascii_uppercase()
    };
    let mix = match (&args.targets, scenario) {
        (Some(path), _) => read_mix(path, &headers, args.http10)?,
        (None, Some(scenario)) => scenario.mix(&headers, args.http10),
        (None, None) => Vec::new(),
    };
    // A ws:// URL is an HTTP/1.1 URL whose one GET upgrades; the URL as
    // given stays the target's, for reports.
    let (http_url, is_ws) = websocket_url(&url)?;
    let ws_scenario = scenario.is_some_and(ScenarioLoad::is_websocket);
    let websocket = args
        .transport
        .websocket(is_ws || ws_scenario, ws_scenario, &mut headers)?;
    if websocket.is_some() {
        upgrade_without_templates(&url, is_ws, &headers, scenario)?;
    }
    let (target, request) = match mix.first() {
        Some(first) => (first.target.clone(), first.request.clone()),
        None => (
            {
                // An error quotes the URL as the user gave it, not the
                // http:// one a ws:// URL upgrades from.
                let mut target = stampede_workload::parse_url_template(&http_url)
                    .map_err(|e| anyhow::anyhow!(e.to_string().replace(&http_url, &url)))?;
                target.url = url.clone();
                target
            },
            RequestSpec {
                method,
                headers,
                body,
                http10: args.http10,
            },
        ),
    };
    let (model, duration) = build_model(args)?;
    let stop = match (args.requests, duration) {
        (Some(count), limit) => StopCondition::Requests { count, limit },
        (None, duration) => StopCondition::Duration(duration.unwrap_or(Duration::from_secs(10))),
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut plan = Plan {
        target,
        request,
        model,
        threads,
        stop,
        warmup: args.warmup,
        source_addrs: args.source_addrs.clone().map(|a| a.0).unwrap_or_default(),
        transport: args.transport.spec()?,
        mix,
        keepalive: !args.no_keepalive,
        connect_timeout: args.connect_timeout,
        timeout: args.timeout,
    };
    plan.transport.compression = compression;
    plan.transport.websocket = websocket;
    let mut notices = agent::apply_share(&args.agent, &mut plan)?;
    notices.extend(plan.validate()?);
    if args.batch_reads && plan.event_loop() == stampede_plan::EventLoop::Tokio {
        anyhow::bail!(
            "--batch-reads is the epoll and io_uring reactors' way of reading, and this run is on tokio{}",
            plan.reactor_limitation()
                .map_or(String::new(), |why| format!(" ({why})"))
        );
    }
    // A staged scenario group sets the rate itself (the stages' peak).
    if let (Some(rate), Some(_), None) = (args.rate, &args.stages, scenario) {
        notices.push(format!(
            "-r {rate} sets no rate with --stages: the stages' targets are the rates"
        ));
    }
    if let Some(asked) = args.threads.filter(|&t| t > plan.threads) {
        notices.push(format!(
            "threads capped at {}: -t {asked} is more than the {} (each thread needs one)",
            plan.threads,
            stampede_report::counted(plan.connections() as u64, "connection")
        ));
    }
    Ok((plan, notices))
}

#[cfg(test)]
mod tests {
    use super::build_plan;
    use crate::flags::run_args::parse_run_args;

    fn built(words: &[&str]) -> anyhow::Result<stampede_plan::Plan> {
        let args = parse_run_args(words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
        build_plan(&args).map(|(plan, _)| plan)
    }

    fn refusal(words: &[&str]) -> String {
        match built(words) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{words:?} was accepted"),
        }
    }

    #[test]
    fn a_websocket_url_is_quoted_as_given_and_its_schemes_are_named() {
        let says = refusal(&["ws://127.0.0.1:99999/ws/echo", "-n", "1"]);
        assert!(says.contains("'ws://127.0.0.1:99999/ws/echo'"), "{says}");
        assert!(!says.contains("http://"), "{says}");
        let says = refusal(&["ws:/127.0.0.1:1/ws/echo", "-n", "1"]);
        assert!(says.contains("expected // after the scheme"), "{says}");
        let says = refusal(&["ftp://127.0.0.1:1/", "-n", "1"]);
        assert!(says.contains("(supported: http, https, ws, wss)"), "{says}");
        let says = refusal(&["ws://127.0.0.1:1/", "--ws-message", "@", "-n", "1"]);
        assert!(says.contains("@ needs a file name"), "{says}");
    }

    /// A browser's "Copy as cURL" of a WebSocket carries the offer in
    /// headers: the subprotocols offered are the ones checked.
    #[test]
    fn a_subprotocol_header_is_the_offer() {
        let plan = built(&[
            "ws://127.0.0.1:1/",
            "-H",
            "Sec-WebSocket-Protocol: chat, graphql-ws",
            "-n",
            "1",
        ])
        .unwrap();
        let ws = plan.transport.websocket.as_ref().unwrap();
        assert_eq!(ws.subprotocols, ["chat", "graphql-ws"]);
        let sent = &plan.request.headers;
        assert!(
            !sent
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case("sec-websocket-protocol")),
            "{sent:?}"
        );
        let both = refusal(&[
            "ws://127.0.0.1:1/",
            "-H",
            "Sec-WebSocket-Protocol: chat",
            "--ws-subprotocol",
            "chat",
        ]);
        assert!(both.contains("give one of them"), "{both}");
        let ext = refusal(&[
            "ws://127.0.0.1:1/",
            "-H",
            "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits",
        ]);
        assert!(ext.contains("--ws-deflate"), "{ext}");
        // An HTTP run sends such a header as any other.
        let http = built(&["http://127.0.0.1:1/", "-H", "Sec-WebSocket-Protocol: x"]).unwrap();
        assert_eq!(http.request.headers.len(), 1);
    }

    /// The upgrade is written from the URL and headers as given: a
    /// template there would reach the server as typed, where over HTTP it
    /// is rendered, so it is refused in one line.
    #[test]
    fn templates_in_a_websocket_upgrade_are_refused_not_sent_as_typed() {
        let says = refusal(&["ws://127.0.0.1:1/room/{{conn}}", "-n", "1"]);
        assert!(
            says.starts_with("ws://127.0.0.1:1/room/{{conn}}: templates are not rendered"),
            "{says}"
        );
        let says = refusal(&["ws://127.0.0.1:1/", "-H", "X-Token: t{{seq}}", "-n", "1"]);
        assert!(
            says.starts_with("-H X-Token: templates are not rendered"),
            "{says}"
        );
        // The message is where templates go.
        built(&["ws://127.0.0.1:1/", "--ws-message", "{{seq}}", "-n", "1"]).unwrap();
    }

    #[test]
    fn flags_a_websocket_run_would_ignore_are_refused() {
        for (flag, value) in [
            ("--conn-max-requests", Some("3")),
            ("--conn-max-age", Some("300ms")),
            ("--decode", None),
            ("--compressed", None),
            ("--head", None),
        ] {
            let mut words = vec!["ws://127.0.0.1:1/ws/echo", "-n", "1", flag];
            words.extend(value);
            let says = refusal(&words);
            assert!(says.contains("drop"), "{flag}: {says}");
            assert!(says.contains(flag), "{flag}: {says}");
        }
        let says = refusal(&["ws://127.0.0.1:1/ws/echo", "--http3"]);
        assert!(says.contains("drop --http3"), "{says}");
    }
}
