//! `stampede run`: build a plan from the arguments (plan_args.rs), start a
//! `--spawn` server and wait for an agent's start time, then run it once
//! (session/mod.rs) and deliver the result (delivery.rs), or run it in rounds
//! (`--repeat`, `--until-stable`: repeat.rs). With `--metrics` the endpoint
//! is bound first and lingers after the delivery (metrics_endpoint.rs);
//! `--remote-write` is checked first and makes its final push after the
//! delivery (remote_write.rs); `--web` is bound first, shows the final
//! report once the result is delivered and lingers (web.rs).

use crate::flags::agent;
use crate::flags::plan_args::build_run;
use crate::flags::run_args::RunArgs;
use crate::process::{interrupt, output};
use crate::session::delivery::{self, deliver_to, Delivery};
use crate::session::repeat::{self, RepeatOutput, Rounds};
use crate::session::spawn::SpawnedServer;
use crate::session::{check_pids, run_plan_in, RunContext};
use stampede_exporters::metrics_endpoint::MetricsEndpoint;
use stampede_exporters::metrics_feed::Board;
use stampede_exporters::metrics_series::run_labels;
use stampede_exporters::remote_write::RemoteWriter;
use stampede_exporters::web::WebServer;
use std::time::Duration;

pub fn execute(args: RunArgs) -> anyhow::Result<i32> {
    let delivery = Delivery {
        json: args.json.clone(),
        format: args.output,
        exports: args.exports.clone(),
    };
    // A script's print() (from setup and init on) must not land in a
    // result written to stdout.
    stampede_lua::print_to_stderr(
        delivery.stdout_taken() || args.output == output::OutputFormat::Json,
    );
    let rounds = args.repeat.is_some() || args.until_stable.is_some();
    // Before build_run: a script's setup() and init() run there (and may
    // print); a refused flag or a bad output path must cost nothing, as
    // with `stampede wrk`.
    if rounds && args.script.script.is_some() {
        anyhow::bail!("--script runs once (setup, init, done): drop --repeat or --until-stable");
    }
    output::preflight(&delivery.outputs())?;
    let built = build_run(&args)?;
    let (plan, notices, workload) = (built.plan, built.notices, built.workload);
    if rounds {
        crate::flags::run_args::refuse_in(&args.metrics, "--repeat or --until-stable")?;
        if args.seed.is_some() {
            anyhow::bail!(
                "--seed repeats one run's arrivals: with --repeat or --until-stable every round would draw the same ones; drop --seed"
            );
        }
    }
    // Installed first, so a signal while a --spawn server starts still
    // stops it (the run then ends at once, interrupted).
    interrupt::stop_handle()?;
    check_pids(&args.server.pids)?;
    // Bound before any load (a bad address is refused up front); the id
    // labels the series and names the result.
    let run_id = stampede_metrics::new_run_id();
    let run_labels = run_labels(&run_id, args.agent.agent.map(|share| share.index));
    let board = (args.metrics.metrics.is_some() || args.metrics.remote_write.is_some())
        .then(Board::default);
    let no_board = Board::default();
    let shared = board.as_ref().unwrap_or(&no_board);
    stampede_exporters::web_http::refuse_one_address_for_two(
        ("--metrics", args.metrics.metrics.as_deref()),
        ("--web", args.metrics.web.as_deref()),
    )?;
    let metrics = MetricsEndpoint::start(
        args.metrics.metrics.as_deref(),
        args.metrics.metrics_linger,
        &run_labels,
        shared,
    )?;
    let remote = RemoteWriter::start(args.metrics.remote_write.as_deref(), &run_labels, shared)?;
    let live = args
        .metrics
        .web
        .is_some()
        .then(stampede_exporters::web_state::LiveBoard::default);
    let running = stampede_metrics::Running {
        run_id: run_id.clone(),
        plan: plan.clone(),
        notices: notices.clone(),
        environment: stampede_metrics::Environment::capture(),
        started_at: std::time::SystemTime::now(),
        version: env!("CARGO_PKG_VERSION"),
    };
    let web = WebServer::start(
        args.metrics.web.as_deref(),
        args.metrics.web_linger,
        running,
        workload.clone(),
        live.clone().unwrap_or_default(),
        interrupt::stop_handle()?,
    )?;
    let mut pids = args.server.pids.clone();
    let spawned = match &args.server.spawn {
        Some(command) => {
            let addr = stampede_engine::resolve(&plan)?;
            let server = SpawnedServer::start(command, addr)?;
            pids.push(server.pid());
            Some(server)
        }
        None => None,
    };
    agent::wait_for_start(&args.agent)?;
    let rounds = match (args.repeat, args.until_stable) {
        (Some(n), _) => Some(Rounds::Fixed(n)),
        (None, Some(target)) => Some(Rounds::UntilStable {
            target,
            round: args.round,
            budget: args.duration.unwrap_or(Duration::from_secs(60)),
        }),
        (None, None) => None,
    };
    if let Some(rounds) = rounds {
        let output = RepeatOutput {
            json: args.json.as_ref(),
            quiet: args.quiet,
            exports: &args.exports,
        };
        let plan = repeat::Planned {
            plan,
            workload,
            name: crate::flags::workload_plan::scenario_name(&args.workload),
        };
        return repeat::execute(plan, notices, rounds, &pids, args.slo.as_ref(), output);
    }
    let context = RunContext {
        quiet: args.quiet,
        pids: &pids,
        slo: args.slo.as_ref(),
        exports: Some(&args.exports),
        salvage: Some(&delivery),
        stdout_taken: delivery.stdout_taken(),
        metrics: board,
        web: live,
        run_id: Some(&run_id),
        seed: args.seed,
        workload,
        ..RunContext::default()
    };
    let result = run_plan_in(&plan, notices, &context).map(|mut result| {
        agent::annotate(&args.agent, &mut result);
        crate::flags::script_args::annotate(built.script.as_deref(), &mut result);
        result.plan.name = crate::flags::workload_plan::scenario_name(&args.workload);
        result
    });
    if let Ok(result) = &result {
        // Stopping a spawned server may take its grace period: a forced
        // exit meanwhile still writes the whole result.
        delivery::arm_result(result.clone(), delivery.clone());
    }
    drop(spawned);
    let result = result?;
    let status = deliver_to(&result, &delivery)?;
    let status = crate::flags::script_args::finish(built.script.as_deref(), &result, None, status)?;
    if let Some(remote) = remote {
        remote.finish();
    }
    if let Some(web) = &web {
        web.finish(&result);
        web.linger(interrupt::signalled);
    }
    if let Some(endpoint) = &metrics {
        endpoint.linger(interrupt::signalled);
    }
    Ok(status)
}
