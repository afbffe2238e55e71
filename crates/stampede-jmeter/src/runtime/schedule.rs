//! Thread-group scheduling, as StandardJMeterEngine.run orders the groups:
//! setUp groups first, then the ordinary ones, then tearDown groups; within
//! a phase side by side, or one after another in plan order when the plan
//! serializes them (`TestPlan.serialize_threadgroups`: the engine waits
//! `group.waitThreadsStopped()` before the next). Each group runs on a
//! thread of its own; the caller's `run` runs one group to its end, and
//! JTL `allThreads` learns when each batch starts (active.rs).

use super::active::ActiveGroups;
use crate::model::{Phase, Plan};

/// Runs every group of `plan` through `run(index)`, batch by batch. A batch
/// is a phase's groups (one group when serialized), started together and
/// awaited together; the first error of a batch (`panicked()` for a run
/// that panicked) is returned once the whole batch has ended, and no later
/// batch starts. The outcomes come back in the order the groups ran.
pub fn run_groups<T, E>(
    plan: &Plan,
    active: &ActiveGroups,
    run: impl Fn(usize) -> Result<T, E> + Sync,
    panicked: impl Fn() -> E,
) -> Result<Vec<(usize, T)>, E>
where
    T: Send,
    E: Send,
{
    let mut finished = Vec::with_capacity(plan.groups.len());
    for together in batches(plan) {
        let delays = together
            .iter()
            .map(|&i| (i, plan.groups[i].delay_s.unwrap_or(0) * 1000));
        active.phase_started(delays);
        let run = &run;
        let outcomes: Vec<(usize, Option<Result<T, E>>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = together
                .iter()
                .map(|&i| (i, scope.spawn(move || run(i))))
                .collect();
            handles
                .into_iter()
                .map(|(i, handle)| (i, handle.join().ok()))
                .collect()
        });
        for (i, outcome) in outcomes {
            finished.push((i, outcome.unwrap_or_else(|| Err(panicked()))?));
        }
    }
    Ok(finished)
}

/// The groups started together, in order: each phase's groups, or each
/// group alone when the plan serializes them.
fn batches(plan: &Plan) -> Vec<Vec<usize>> {
    let mut batches = Vec::new();
    for phase in [Phase::Setup, Phase::Main, Phase::Teardown] {
        let indexes: Vec<usize> = (0..plan.groups.len())
            .filter(|&i| plan.groups[i].phase == phase)
            .collect();
        // Serialized (StandardJMeterEngine.run, `serialized`): each group
        // alone, in plan order; else the phase's groups together.
        let batch = match plan.serialize_groups {
            true => 1,
            false => indexes.len().max(1),
        };
        batches.extend(indexes.chunks(batch).map(<[usize]>::to_vec));
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Group, Load, OnError};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::time::Duration;

    fn group(name: &str, phase: Phase) -> Group {
        Group {
            name: name.into(),
            phase,
            threads: 1,
            load: Load::Threads,
            ramp_up_s: 0,
            iterations: Some(1),
            total_iterations: None,
            duration_s: None,
            delay_s: None,
            on_error: OnError::Continue,
            cookies: false,
            feeds: Vec::new(),
            think: None,
            steps: Vec::new(),
            resolve: Vec::new(),
            counters: Vec::new(),
        }
    }

    /// A teardown, two main and a setUp group, listed out of phase order.
    fn plan(serialize_groups: bool) -> Plan {
        Plan {
            groups: vec![
                group("down", Phase::Teardown),
                group("a", Phase::Main),
                group("up", Phase::Setup),
                group("b", Phase::Main),
            ],
            serialize_groups,
            ..Plan::default()
        }
    }

    /// StandardJMeterEngine.run: setUp groups, then the others, then
    /// tearDown; `serialized` starts each group when the one before it
    /// has stopped, in plan order.
    #[test]
    fn phases_run_in_order_and_serialized_groups_one_at_a_time() {
        assert_eq!(batches(&plan(false)), [vec![2], vec![1, 3], vec![0]]);
        assert_eq!(batches(&plan(true)), [vec![2], vec![1], vec![3], vec![0]]);
        for serialize in [false, true] {
            let plan = plan(serialize);
            let active = ActiveGroups::new(plan.groups.iter().map(|g| g.threads));
            let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let order = Mutex::new(Vec::new());
            let ran = run_groups(
                &plan,
                &active,
                |i| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    order.lock().unwrap().push(i);
                    // Long enough for a side-by-side group to start too.
                    std::thread::sleep(Duration::from_millis(200));
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, String>(plan.groups[i].name.clone())
                },
                || "panicked".to_string(),
            )
            .unwrap();
            let names: Vec<&str> = ran.iter().map(|(_, name)| name.as_str()).collect();
            assert_eq!(names, ["up", "a", "b", "down"], "serialized: {serialize}");
            let order = order.into_inner().unwrap();
            assert_eq!((order[0], order[3]), (2, 0), "{order:?}");
            let together = if serialize { 1 } else { 2 };
            assert_eq!(most.into_inner(), together, "serialized: {serialize}");
        }
    }

    /// A batch's error (or panic) ends the run once the batch has ended:
    /// no later phase starts.
    #[test]
    fn an_error_stops_the_later_batches() {
        let plan = plan(false);
        let active = ActiveGroups::new(plan.groups.iter().map(|g| g.threads));
        let started = Mutex::new(Vec::new());
        let error = run_groups(
            &plan,
            &active,
            |i| {
                started.lock().unwrap().push(i);
                match i {
                    1 => panic!("group a"),
                    _ => Ok(i),
                }
            },
            || "a group's run panicked".to_string(),
        )
        .unwrap_err();
        assert_eq!(error, "a group's run panicked");
        let mut started = started.into_inner().unwrap();
        started.sort_unstable();
        assert_eq!(started, [1, 2, 3], "the teardown group never started");
    }
}
