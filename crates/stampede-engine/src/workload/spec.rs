//! What the engine is told about a run's workload ([`WorkloadSpec`]):
//! compiled before the run by its caller (templates against the plan,
//! checks and extractors parsed), so that every usage error is found
//! before a request is sent, and shared read-only by all workers.

use stampede_metrics::CheckName;
use stampede_plan::LoadModel;
use stampede_workload::{
    CheckSet, Counter, Extractor, Feeder, GroupLimits, RequestTemplate, Script, Sequence,
    StepOptions, Template, ThinkTime,
};
use std::ops::Range;
use std::sync::Arc;

/// One request of the run (the single request, an entry of the `--targets`
/// mix, or a scenario step, by the plan's mix index): how it is rendered
/// and how its responses are judged.
#[derive(Debug, Clone, Default)]
pub struct StepWork {
    /// The step's name in results (scenario steps only).
    pub name: Option<String>,
    /// `None`: the request is fixed bytes, pre-encoded as without a workload.
    pub template: Option<RequestTemplate>,
    /// The step's checks on each response.
    pub checks: CheckSet,
    /// What the step saves from each response into the user's variables.
    pub extracts: Vec<Extractor>,
    /// A scenario step's own settings (`think`, `once`, timeouts, …).
    pub options: StepOptions,
    /// A WebSocket run's message (`--ws-message`, a scenario step's
    /// `send`), rendered by the user's session as a request's template is;
    /// `template` is then `None`.
    pub message: Option<Template>,
    /// A WebSocket step's `close = true`: after its reply the client closes
    /// the connection (1000), and the next step upgrades a new one.
    pub close_after: bool,
}

impl StepWork {
    fn judges(&self) -> usize {
        self.checks.checks().len() + self.extracts.len()
    }
}

/// A group of virtual users (a scenario's `[[group]]`; one group covers
/// every request of a run without a scenario): its steps, feeders, values
/// and, when it differs from the plan's, its own load model.
#[derive(Debug, Clone, Default)]
pub struct GroupWork {
    /// The group's name in results (scenarios only).
    pub name: Option<String>,
    /// Its steps: this range of the plan's target indices.
    pub steps: Range<usize>,
    /// Loaded feeders, in the order the group's templates index their rows.
    pub feeders: Vec<Arc<Feeder>>,
    /// Slots of each virtual user's extracted values (and counters' values).
    pub extract_slots: usize,
    /// Counters advanced at the start of each of a user's iterations
    /// (a scenario's `counter = [...]` with `advance = "iteration"`).
    pub counters: Vec<Arc<Counter>>,
    /// Scenario: each virtual user walks the steps in order, one iteration
    /// after another (else each request picks the next of the mix).
    pub sequential: bool,
    /// Scenario: a pause between a user's steps.
    pub think: Option<ThinkTime>,
    /// The group's own load (connections, rate or stages); `None`: the
    /// plan's. Several groups run side by side, each on its own workers.
    pub model: Option<LoadModel>,
    /// Scenario: `iterations`, `duration`, `start_delay`, `phase`,
    /// `on_error` (the defaults: unbounded, at once, carry on).
    pub limits: GroupLimits,
}

impl GroupWork {
    /// True when the group ends by itself (its iterations or its duration).
    pub fn is_bounded(&self) -> bool {
        let l = &self.limits;
        l.iterations.is_some() || l.total_iterations.is_some() || l.duration.is_some()
    }
}

/// A run's workload, shared by its workers.
#[derive(Debug)]
pub struct WorkloadSpec {
    /// By the plan's target index: one entry without a mix, one per mix
    /// entry (or scenario step) otherwise.
    pub steps: Vec<StepWork>,
    /// At least one; their step ranges cover `steps` in order.
    pub groups: Vec<GroupWork>,
    /// Largest head or body kept for checks (`--capture-max`).
    /// The most bytes of a response body kept for checks, extractors and
    /// scripts to read (they see the first this many of a longer one).
    pub capture_max: usize,
    /// This agent and how many share the run (`{{seq}}` and unique rows
    /// stay distinct across agents); 0 of 1 alone.
    pub agent: u32,
    /// How many agents share the run (1 alone).
    pub agents: u32,
    /// The run-wide `{{seq}}`.
    pub sequence: Sequence,
    /// `--cookie-jar`: each virtual user keeps the cookies it is sent and
    /// sends them back (workload/cookie_jar.rs).
    pub cookie_jar: bool,
    /// A script that builds requests and reads responses (wrk's
    /// Lua): each worker gets its own [`stampede_workload::ScriptThread`].
    pub script: Option<Arc<dyn Script>>,
    /// The plan's requests in this order, one after another, instead of
    /// round-robin by weight (a replayed log: line k's request is entry
    /// `sequence[k]`). Worker w of W sends entries w, w + W, …, as its
    /// pacer takes the listed instants and a listed feeder its rows; in
    /// the closed model, `-n` is split the same way.
    pub mix_sequence: Option<Arc<[u16]>>,
}

/// "50 connections", "200 iterations/s" (peaks, for stages).
fn describe_load(model: &LoadModel) -> String {
    match model {
        LoadModel::Closed { connections } => match connections.peak().round() {
            1.0 => "1 connection".to_string(),
            n => format!("{n} connections"),
        },
        LoadModel::Rate { per_s, .. } => format!("{} iterations/s", per_s.peak()),
    }
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            steps: Vec::new(),
            groups: Vec::new(),
            capture_max: 64 * 1024,
            agent: 0,
            agents: 1,
            sequence: Sequence::new(0, 1),
            script: None,
            cookie_jar: false,
            mix_sequence: None,
        }
    }
}

impl WorkloadSpec {
    /// A scenario's steps are the mix: each target of `result` takes its
    /// step's name (the finished result and `--web`'s result so far alike).
    pub fn name_steps(&self, result: &mut stampede_metrics::RunResult) {
        for (target, step) in result.targets.iter_mut().zip(&self.steps) {
            target.name.clone_from(&step.name);
        }
    }

    /// True when responses are judged: the result then always carries
    /// `requests.check_failed`.
    pub fn judges_responses(&self) -> bool {
        self.steps.iter().any(|s| s.judges() > 0)
    }

    /// True when some step keeps response headers.
    pub(crate) fn keeps_headers(&self) -> bool {
        self.cookie_jar
            || self.steps.iter().any(|s| {
                s.checks.needs_headers() || s.extracts.iter().any(Extractor::needs_headers)
            })
    }

    /// True when some step keeps response bodies.
    pub(crate) fn keeps_body(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.checks.needs_body() || s.extracts.iter().any(Extractor::needs_body))
    }

    /// True when some request is rendered per send (a template with slots).
    pub fn renders(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.template.is_some() || s.message.as_ref().is_some_and(|m| !m.is_static()))
    }

    /// Where step `index`'s checks start in the run's list of checks.
    pub(crate) fn first_check(&self, index: usize) -> usize {
        self.steps[..index.min(self.steps.len())]
            .iter()
            .map(StepWork::judges)
            .sum()
    }

    /// Every `unique` row free again, for a new round of `--repeat`.
    pub fn rewind(&self) {
        for feeder in self.groups.iter().flat_map(|g| &g.feeders) {
            feeder.rewind();
        }
    }

    /// The groups as the result names them: name, load, steps; with
    /// `several` groups each of them, then each transaction (the steps
    /// sharing a `transaction` name, `load: "transaction"`).
    pub fn group_names(
        &self,
        plan_model: &LoadModel,
        several: bool,
    ) -> Vec<stampede_metrics::GroupName> {
        let step_name = |i: usize| self.steps[i].name.clone().unwrap_or_default();
        let mut names: Vec<stampede_metrics::GroupName> = self
            .groups
            .iter()
            .enumerate()
            .filter(|_| several)
            .map(|(i, group)| stampede_metrics::GroupName {
                name: group
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("group {}", i + 1)),
                load: describe_load(group.model.as_ref().unwrap_or(plan_model)),
                steps: group.steps.clone().collect(),
                step_names: group.steps.clone().map(step_name).collect(),
            })
            .collect();
        let mut transactions: Vec<(&str, Vec<usize>)> = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            let Some(name) = step.options.transaction.as_deref() else {
                continue;
            };
            match transactions.iter_mut().find(|(n, _)| *n == name) {
                Some((_, steps)) => steps.push(i),
                None => transactions.push((name, vec![i])),
            }
        }
        names.extend(
            transactions
                .into_iter()
                .map(|(name, steps)| stampede_metrics::GroupName {
                    name: name.to_string(),
                    load: stampede_metrics::TRANSACTION_LOAD.to_string(),
                    step_names: steps.iter().copied().map(step_name).collect(),
                    steps,
                }),
        );
        names
    }

    /// Every check and extractor of the run, in order, with its step: the
    /// names of the result's `checks`.
    pub fn check_names(&self) -> Vec<CheckName> {
        let mut names = Vec::new();
        for step in &self.steps {
            for check in step.checks.checks() {
                names.push(CheckName {
                    check: check.as_str().to_string(),
                    step: step.name.clone(),
                });
            }
            for extract in &step.extracts {
                names.push(CheckName {
                    check: format!("extract {}", extract.name()),
                    step: step.name.clone(),
                });
            }
        }
        names
    }
}
