//! A thread group's own settings: threads, ramp-up, the loop count, the
//! scheduler's duration and delay, what to do on a sample error, and the
//! load model a throughput timer sets; its timers shared by every step
//! become the group's think time.

use crate::functions::{constant, element_name, Names};
use crate::model::{Feed, Group, Load, OnError, Phase, Step};
use crate::rules::throughput;
use crate::tree::Element;
use crate::MapError;

/// What the group's scope holds that its settings need.
pub(crate) struct GroupScope<'e> {
    pub throughput: Option<&'e Element>,
    pub cookies: bool,
    /// Samplers left out (each listed as unsupported).
    pub dropped: usize,
}

pub(crate) fn settings(
    e: &Element,
    names: &Names,
    notes: &mut Vec<String>,
    scope: GroupScope<'_>,
    mut steps: Vec<Step>,
    feeds: Vec<(Feed, Vec<String>)>,
) -> Result<Option<Group>, MapError> {
    let count = |prop: &str| -> Result<Option<u64>, MapError> {
        let Some(raw) = e.text(prop) else {
            return Ok(None);
        };
        let value = constant(raw, names, prop)?;
        value
            .trim()
            .parse::<i64>()
            .map(|n| u64::try_from(n).ok())
            .map_err(|_| {
                MapError::Bad(format!(
                    "{}: {prop} is '{value}', not a whole number",
                    e.describe()
                ))
            })
    };
    let threads = count("ThreadGroup.num_threads")?
        .ok_or_else(|| MapError::missing(e, "ThreadGroup.num_threads"))?;
    let empty = match (threads, steps.is_empty(), scope.dropped) {
        (0, _, _) => Some("0 threads".to_string()),
        (_, true, 0) => Some("no HTTP samplers".to_string()),
        (_, true, n) => Some(format!(
            "each of its {n} HTTP sampler(s) was left out (listed as unsupported)"
        )),
        _ => None,
    };
    if let Some(why) = empty {
        notes.push(format!("{}: {why}; the group is left out", e.describe()));
        return Ok(None);
    }
    let threads = u32::try_from(threads)
        .map_err(|_| MapError::Bad(format!("{}: too many threads", e.describe())))?;
    let loop_controller = e.element("ThreadGroup.main_controller");
    // loops -1 is forever (the scheduler's duration, if any, ends it).
    let iterations = match loop_controller.and_then(|lc| lc.text("LoopController.loops")) {
        Some(raw) => {
            let value = constant(raw, names, "LoopController.loops")?;
            match value.trim().parse::<i64>() {
                Ok(n) if n < 0 => None,
                Ok(0) => {
                    // JMeter starts the threads and runs no sampler.
                    let from = match raw.trim() == value.trim() {
                        true => String::new(),
                        false => format!(" (from {})", raw.trim()),
                    };
                    return Err(MapError::Bad(format!(
                        "{}: LoopController.loops is 0{from}: the group would send nothing; give -1 (forever) or at least 1",
                        e.describe()
                    )));
                }
                Ok(n) => Some(n as u64),
                Err(_) => {
                    return Err(MapError::Bad(format!(
                        "{}: LoopController.loops is '{value}', not a whole number",
                        e.describe()
                    )))
                }
            }
        }
        None => Some(1),
    };
    let scheduler = e.flag("ThreadGroup.scheduler") == Some(true);
    let (duration_s, delay_s) = if scheduler {
        (count("ThreadGroup.duration")?, count("ThreadGroup.delay")?)
    } else {
        (None, None)
    };
    if iterations.is_none() && duration_s.is_none() {
        // A CSV Data Set read once (recycle=false) ends the run at its
        // last row (csv_feed.rs), so the loop is not endless then.
        let ends_at_eof = feeds.iter().any(|(feed, _)| feed.mode == "unique");
        let ends = match ends_at_eof {
            true => "it ends when the CSV file's rows run out (recycle=false)",
            false => "it runs until interrupted (Ctrl-C), as in JMeter",
        };
        notes.push(format!(
            "{}: loops forever with no scheduler duration: {ends}",
            e.describe()
        ));
    }
    let on_error = match e.text("ThreadGroup.on_sample_error").map(str::trim) {
        None | Some("continue") => OnError::Continue,
        Some("startnextloop") => OnError::NextIteration,
        Some("stopthread") => OnError::StopUser,
        Some("stoptest" | "stoptestnow") => OnError::StopRun,
        Some(other) => {
            return Err(MapError::Unsupported(format!(
                "on_sample_error {other} is not mapped"
            )))
        }
    };
    let load = match scope.throughput {
        Some(timer) => throughput(timer, names, threads, steps.len())?,
        None => Load::Threads,
    };
    for step in &steps {
        if let Some(rendezvous) = &step.rendezvous {
            crate::sync_timer::check_in_group(rendezvous, threads, &step.name)?;
        }
    }
    // A throughput timer only delays each sample (ConstantThroughputTimer
    // .delay()); the loop controller still counts (LoopController.java):
    // the open model has no per-user loop count, so the group starts
    // threads × loops iterations in all, paced by the timer.
    let (iterations, total_iterations) = match (&load, iterations) {
        (Load::Threads, _) | (_, None) => (iterations, None),
        (Load::Rate(_) | Load::Stages(_), Some(loops)) => {
            (None, Some(loops.saturating_mul(u64::from(threads))))
        }
    };
    // Timers every step has are written once, as the group's think time.
    let think = steps.first().and_then(|s| s.think);
    let shared = steps.iter().all(|s| s.think == think);
    if shared {
        for step in &mut steps {
            step.think = None;
        }
    }
    Ok(Some(Group {
        name: element_name(&e.name, names),
        phase: match e.class.as_str() {
            "SetupThreadGroup" => Phase::Setup,
            "PostThreadGroup" => Phase::Teardown,
            _ => Phase::Main,
        },
        threads,
        load,
        ramp_up_s: count("ThreadGroup.ramp_time")?.unwrap_or(0),
        iterations,
        total_iterations,
        duration_s,
        delay_s: delay_s.filter(|d| *d > 0),
        on_error,
        cookies: scope.cookies,
        feeds: feeds.into_iter().map(|f| f.0).collect(),
        think: if shared { think } else { None },
        steps,
        resolve: Vec::new(),
        counters: Vec::new(),
    }))
}
