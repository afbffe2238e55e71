//! What the agent modules' tests share: a plan as `stampede run` builds it,
//! a result of it, and the `--agent` options.

use super::{AgentArgs, Share};
use stampede_metrics::RunResult;
use stampede_plan::{LoadModel, Plan, Schedule, StopCondition};
use std::time::{Duration, SystemTime};

/// A plan as `stampede run http://127.0.0.1:3000/ -t 2` builds it, with
/// the model and stop condition under test. Made here rather than by
/// plan_args.rs, which applies the agent's share and so imports this
/// module (no import cycle, tests/module_cycles.rs).
pub(super) fn plan(model: LoadModel, stop: StopCondition) -> Plan {
    Plan {
        model,
        threads: 2,
        stop,
        connect_timeout: Duration::from_secs(3),
        timeout: Duration::from_secs(10),
        ..Plan::minimal(stampede_plan::Target::parse("http://127.0.0.1:3000/").unwrap())
    }
}

pub(super) fn result() -> RunResult {
    let recording = stampede_metrics::Recording::of(
        SystemTime::now(),
        Duration::from_secs(1),
        stampede_plan::EventLoop::Epoll,
        Default::default(),
    );
    let p = plan(closed(1.0), StopCondition::Duration(Duration::from_secs(1)));
    RunResult::from_recording(&p, &recording, Default::default(), "test", vec![])
}

pub(super) fn agent(index: u32, count: u32) -> AgentArgs {
    AgentArgs {
        agent: Some(Share { index, count }),
        ..AgentArgs::default()
    }
}

pub(super) fn closed(connections: f64) -> LoadModel {
    LoadModel::Closed {
        connections: Schedule::constant(connections, Duration::from_secs(10)),
    }
}
