//! `stampede replay FILE --base URL`: an access log's requests sent again.
//! The log is made into a run by flags/replay_args.rs; the run
//! goes through run's session and delivery, its open model at the log's
//! listed offsets (`Arrival::Listed`), or the closed model for
//! `--speed max`; the result carries the `replay` object.

use crate::flags::plan_args::build_run;
use crate::flags::replay_args::ReplayArgs;
use crate::flags::workload_plan::build_workload;
use crate::process::{interrupt, output};
use crate::session::delivery::{self, deliver_to, Delivery};
use crate::session::{run_plan_in, RunContext};
use stampede_plan::{Arrival, LoadModel};

pub fn execute(args: ReplayArgs) -> anyhow::Result<i32> {
    let replay = args.build()?;
    let run = &replay.args;
    let delivery = Delivery {
        json: run.json.clone(),
        format: run.output,
        exports: run.exports.clone(),
    };
    output::preflight(&delivery.outputs())?;
    let built = build_run(run)?;
    let mut plan = built.plan;
    let mut workload = built.workload;
    if let Some(patterns) = &replay.patterns {
        // One mix entry per pattern, each the `{{path}}` template with its
        // method; checked as the plan was, and the workload compiled for them.
        plan.mix = patterns.mix(&plan);
        if let Some(first) = plan.mix.first() {
            plan.request = first.request.clone();
        }
        // The plan's notices were given when it was built; a mix adds none.
        plan.validate()?;
        workload = build_workload(&run.workload, &plan, None, None, None)?;
        let spec = workload
            .as_mut()
            .and_then(std::sync::Arc::get_mut)
            .ok_or_else(|| {
                anyhow::anyhow!("internal: the replay's workload is shared before its run")
            })?;
        spec.mix_sequence = Some(patterns.sequence.clone());
        // Each entry's figures are its pattern's: named so in `targets`.
        for (step, name) in spec.steps.iter_mut().zip(patterns.names()) {
            step.name = Some(name.to_string());
        }
    }
    if let (Some(offsets), LoadModel::Rate { arrival, .. }) = (&replay.offsets, &mut plan.model) {
        *arrival = Arrival::Listed(offsets.clone());
    }
    let mut notices = replay.notices;
    notices.extend(built.notices);
    interrupt::stop_handle()?;
    let run_id = stampede_metrics::new_run_id();
    let context = RunContext {
        quiet: run.quiet,
        pids: &[],
        exports: Some(&run.exports),
        salvage: Some(&delivery),
        stdout_taken: delivery.stdout_taken(),
        run_id: Some(&run_id),
        workload: workload.clone(),
        ..RunContext::default()
    };
    let mut result = run_plan_in(&plan, notices, &context)?;
    let mut summary = replay.summary;
    summary.requests_sent = result.requests.sent;
    if let Some(patterns) = &replay.patterns {
        // Each mix entry is one pattern's (the session named the result's
        // targets after the steps): its figures are the pattern's replayed ones.
        for group in &mut summary.groups {
            let entry = patterns.names().position(|name| name == group.pattern);
            if let Some(target) = entry.and_then(|i| result.targets.get(i)) {
                group.latency_us = Some(target.latency_us);
                group.status = target.status.clone();
            }
        }
    }
    result.replay = Some(summary);
    delivery::arm_result(result.clone(), delivery.clone());
    deliver_to(&result, &delivery)
}
