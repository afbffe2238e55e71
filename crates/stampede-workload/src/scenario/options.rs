//! The scenario keys that bound and order a group and tune one step, added
//! for JMeter plans but plain scenario keys for anyone:
//! a group's `iterations`, `total_iterations`, `duration`, `start_delay`, `phase`, `on_error`,
//! `cookies` and `max_connections`; a step's `think`, `transaction`, `once`,
//! `follow_redirects`, `keep_alive`, `connect_timeout`, `timeout`,
//! `rendezvous` and `rendezvous_timeout`; a
//! feed's `columns` and `skip_first_line` (a CSV without a header line).

use super::file::{FeedToml, GroupToml, StepToml};
use super::{Context, Group, ScenarioError, ThinkTime};
use crate::feeder::{FeedData, FeedSpec, Feeder};
use stampede_plan::parse_duration;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

/// When a group runs, relative to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// Before every `main` group starts (JMeter's setUp Thread Group).
    Setup,
    /// With the other main groups (the default).
    #[default]
    Main,
    /// After every `main` group has finished (JMeter's tearDown Thread Group).
    Teardown,
}

/// What a virtual user does when a step fails (an error or a failed check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// Go on with the next step.
    #[default]
    Continue,
    /// Abandon this iteration and start the next one.
    NextIteration,
    /// This virtual user stops.
    StopUser,
    /// The whole run stops.
    StopRun,
}

/// A group's bounds and order; the defaults are what a scenario without
/// these keys always meant (run for the run's duration, all groups at once).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupLimits {
    /// `iterations = N`: each virtual user walks the steps N times, then stops.
    pub iterations: Option<u64>,
    /// `total_iterations = N`: an open-model group (rate or stages) starts
    /// N iterations in all, paced by its rate, then ends (JMeter's loop
    /// count under a throughput timer: threads × loops).
    pub total_iterations: Option<u64>,
    /// `duration = "60s"`: the group stops this long after it started.
    pub duration: Option<Duration>,
    /// `start_delay = "5s"`: the group starts this long after the run (or its phase) began.
    pub start_delay: Option<Duration>,
    /// `phase = "setup" | "main" | "teardown"`.
    pub phase: Phase,
    /// `on_error = "continue" | "next_iteration" | "stop_user" | "stop_run"`.
    pub on_error: OnError,
    /// `cookies = true`: each virtual user keeps the cookies it is sent and
    /// sends them back (JMeter's HTTP Cookie Manager).
    pub cookies: bool,
    /// `max_connections = N`: an open-model group's requests in flight
    /// never exceed N (`-r` with `-c`); arrivals beyond wait in the
    /// backlog, their wait counted in latency (a JMeter thread group's
    /// threads under a throughput timer).
    pub max_connections: Option<u64>,
}

/// One step's own settings; None: the run's setting applies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepOptions {
    /// `think = "100ms..300ms"`: a pause before this step, in place of the group's think.
    pub think: Option<ThinkTime>,
    /// `transaction = "Checkout"`: steps sharing a name are also counted together.
    pub transaction: Option<String>,
    /// `once = true`: only in each virtual user's first iteration.
    pub once: bool,
    /// Follow redirects (`true`) or not (`false`), whatever `--redirects` says.
    pub follow_redirects: Option<bool>,
    /// `false`: close the connection after this step; `true`: keep it open under `--no-keepalive`.
    pub keep_alive: Option<bool>,
    /// The connect timeout.
    pub connect_timeout: Option<Duration>,
    /// The response timeout.
    pub timeout: Option<Duration>,
    /// `rendezvous = N | "all"`: users wait before this step until N of
    /// them are there, then all send together (JMeter's Synchronizing Timer).
    pub rendezvous: Option<RendezvousSpec>,
}

/// A step's rendezvous: how many users it gathers and how long the first
/// of them waits for the others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RendezvousSpec {
    /// Users released together; `None`: every user of the group.
    pub users: Option<u32>,
    /// `rendezvous_timeout`: after this long from the first arrival, the
    /// users waiting go without the rest; `None`: they wait for all.
    pub timeout: Option<Duration>,
}

impl Context<'_> {
    fn duration(&self, value: &Option<Spanned<String>>) -> Result<Option<Duration>, ScenarioError> {
        value
            .as_ref()
            .map(|d| parse_duration(d.get_ref()).map_err(|e| self.at(d, e.to_string())))
            .transpose()
    }

    pub(super) fn limits(
        &self,
        group: &GroupToml,
        open: bool,
    ) -> Result<GroupLimits, ScenarioError> {
        let iterations = match &group.iterations {
            Some(n) if open => {
                return Err(self.at(n, "iterations needs connections (a closed-model group)"))
            }
            Some(n) => match u64::try_from(*n.get_ref()) {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(self.at(n, "iterations is a whole number of at least 1")),
            },
            None => None,
        };
        let total_iterations = match &group.total_iterations {
            Some(n) if !open => {
                return Err(self.at(
                    n,
                    "total_iterations needs rate or stages (an open-model group); a closed group counts each user's: iterations",
                ))
            }
            Some(n) => match u64::try_from(*n.get_ref()) {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(self.at(n, "total_iterations is a whole number of at least 1")),
            },
            None => None,
        };
        let phase = match &group.phase {
            None => Phase::Main,
            Some(p) => match p.get_ref().as_str() {
                "setup" => Phase::Setup,
                "main" => Phase::Main,
                "teardown" => Phase::Teardown,
                _ => return Err(self.at(p, "phase is setup, main or teardown")),
            },
        };
        let on_error = match &group.on_error {
            None => OnError::Continue,
            Some(o) => match o.get_ref().as_str() {
                "continue" => OnError::Continue,
                "next_iteration" => OnError::NextIteration,
                "stop_user" => OnError::StopUser,
                "stop_run" => OnError::StopRun,
                _ => {
                    return Err(self.at(
                        o,
                        "on_error is continue, next_iteration, stop_user or stop_run",
                    ))
                }
            },
        };
        let duration = self.duration(&group.duration)?;
        if let (Some(p), Phase::Setup | Phase::Teardown) = (&group.phase, phase) {
            if iterations.is_none() && total_iterations.is_none() && duration.is_none() {
                return Err(self.at(
                    p,
                    format!(
                        "phase = \"{}\" needs iterations or duration (the next phase starts when this group has ended)",
                        p.get_ref()
                    ),
                ));
            }
        }
        if let (Some(o), true, OnError::StopUser) = (&group.on_error, open, on_error) {
            return Err(self.at(
                o,
                "on_error = \"stop_user\" needs connections (in the open model each arrival is a new iteration, not a user)",
            ));
        }
        let max_connections = match &group.max_connections {
            Some(n) if !open => {
                return Err(self.at(
                    n,
                    "max_connections caps an open-model group (rate or stages); a closed group's connections are its count",
                ))
            }
            Some(n) => match u64::try_from(*n.get_ref()) {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(self.at(n, "max_connections is a whole number of at least 1")),
            },
            None => None,
        };
        Ok(GroupLimits {
            iterations,
            total_iterations,
            duration,
            start_delay: self.duration(&group.start_delay)?,
            phase,
            on_error,
            cookies: group.cookies.unwrap_or(false),
            max_connections,
        })
    }

    /// A teardown group starts when every main group has ended: each main
    /// group must end by itself (`names`: the groups' name spans).
    pub(super) fn teardown_follows_bounded_main(
        &self,
        groups: &[Group],
        names: &[std::ops::Range<usize>],
    ) -> Result<(), ScenarioError> {
        let Some(teardown) = groups.iter().find(|g| g.limits.phase == Phase::Teardown) else {
            return Ok(());
        };
        let unbounded = groups.iter().zip(names).find(|(g, _)| {
            g.limits.phase == Phase::Main
                && g.limits.iterations.is_none()
                && g.limits.total_iterations.is_none()
                && g.limits.duration.is_none()
        });
        match unbounded {
            Some((main, span)) => Err(self.error(
                span.clone(),
                format!(
                    "group {}: teardown group {} starts when every main group has ended: give {} iterations or duration",
                    main.name, teardown.name, main.name
                ),
            )),
            None => Ok(()),
        }
    }

    pub(super) fn step_options(&self, step: &StepToml) -> Result<StepOptions, ScenarioError> {
        let name = step.name.get_ref();
        let think = step
            .think
            .as_ref()
            .map(|t| {
                ThinkTime::parse(t.get_ref()).ok_or_else(|| {
                    self.at(
                        t,
                        format!(
                            "step {name}: think is MIN..MAX, e.g. 50ms..150ms, or one duration"
                        ),
                    )
                })
            })
            .transpose()?;
        let transaction = match &step.transaction {
            Some(t) if t.get_ref().trim().is_empty() => {
                return Err(self.at(t, format!("step {name}: transaction is a name")))
            }
            t => t.as_ref().map(|t| t.get_ref().clone()),
        };
        Ok(StepOptions {
            rendezvous: self.rendezvous(step)?,
            think,
            transaction,
            once: step.once.unwrap_or(false),
            follow_redirects: step.follow_redirects,
            keep_alive: step.keep_alive,
            connect_timeout: self.duration(&step.connect_timeout)?,
            timeout: self.duration(&step.timeout)?,
        })
    }

    /// `rendezvous` and `rendezvous_timeout` (checked against the group's
    /// load in [`Context::group`]).
    fn rendezvous(&self, step: &StepToml) -> Result<Option<RendezvousSpec>, ScenarioError> {
        let name = step.name.get_ref();
        let Some(value) = &step.rendezvous else {
            if let Some(timeout) = &step.rendezvous_timeout {
                return Err(self.at(
                    timeout,
                    format!("step {name}: rendezvous_timeout needs rendezvous"),
                ));
            }
            return Ok(None);
        };
        let users = match value.get_ref() {
            toml::Value::String(all) if all == "all" => None,
            toml::Value::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => Some(*n as u32),
            _ => {
                return Err(self.at(
                    value,
                    format!(
                        "step {name}: rendezvous is a number of users of at least 1, or \"all\""
                    ),
                ))
            }
        };
        let timeout = self.duration(&step.rendezvous_timeout)?;
        if let (Some(t), Some(d)) = (&step.rendezvous_timeout, timeout) {
            if d.is_zero() {
                return Err(self.at(
                    t,
                    format!(
                        "step {name}: rendezvous_timeout is above 0 (leave it out to wait for all)"
                    ),
                ));
            }
        }
        Ok(Some(RendezvousSpec { users, timeout }))
    }

    /// A feed with `columns`: the file has no header line (with
    /// `skip_first_line`, its first line is skipped), the names are given;
    /// a row's fields past them are ignored.
    pub(super) fn headerless_feed(
        &self,
        feed: &FeedToml,
        spec: &FeedSpec,
        base: &Path,
    ) -> Result<Option<Feeder>, ScenarioError> {
        let Some(columns) = &feed.columns else {
            if let Some(skip) = &feed.skip_first_line {
                return Err(self.at(
                    skip,
                    "skip_first_line needs columns (the file has a header line otherwise)",
                ));
            }
            return Ok(None);
        };
        if columns.get_ref().is_empty() {
            return Err(self.at(columns, "columns names at least one column"));
        }
        let path = base.join(&spec.path);
        let shown = path.display().to_string();
        let text = std::fs::read(&path)
            .map_err(|e| self.at(&feed.file, format!("{shown}: cannot read: {e}")))?;
        let skip = feed.skip_first_line.as_ref().is_some_and(|s| *s.get_ref());
        let rows = if skip {
            text.iter()
                .position(|&b| b == b'\n')
                .map_or(&[][..], |i| &text[i + 1..])
        } else {
            &text[..]
        };
        let first_line = 1 + usize::from(skip);
        let data = FeedData::from_headerless_csv(
            &shown,
            columns.get_ref().clone(),
            rows,
            spec.delimiter,
            first_line,
        )
        .map_err(|e| self.at(&feed.file, e.to_string()))?;
        Ok(Some(Feeder::new(data, spec.mode)))
    }
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
