//! `stampede replay FILE --base URL`: an access log's requests sent again
//! (issue 39). The log is made into a run by flags/replay_args.rs; the run
//! goes through run's session and delivery, its open model at the log's
//! listed offsets (`Arrival::Listed`), or the closed model for
//! `--speed max`; the result carries the `replay` object.

use crate::flags::plan_args::build_run;
use crate::flags::replay_args::ReplayArgs;
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
    // The feeder holds its rows now.
    drop(replay.feed);
    let mut plan = built.plan;
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
        workload: built.workload,
        ..RunContext::default()
    };
    let mut result = run_plan_in(&plan, notices, &context)?;
    let mut summary = replay.summary;
    summary.requests_sent = result.requests.sent;
    result.replay = Some(summary);
    delivery::arm_result(result.clone(), delivery.clone());
    deliver_to(&result, &delivery)
}
