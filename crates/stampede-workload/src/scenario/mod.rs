//! Scenario files (`--scenario FILE`, TOML): groups of steps, each group with
//! its own load model and feeders. Every template is validated against the
//! variables its step can see (built-ins, `--var`s, the group's feeder
//! columns, extracts of earlier steps) before any request is sent.

mod counters;
mod file;
mod options;

pub use file::{spanned, CounterToml, FeedToml, GroupToml, ScenarioToml, StepToml};
pub use options::{GroupLimits, OnError, Phase, RendezvousSpec, StepOptions};

use crate::check::{CheckSet, ParseError};
use crate::extract::Extractor;
use crate::feeder::{FeedMode, FeedSpec, Feeder};
use crate::scope::Scope;
use crate::template::{parse_url_template, Template};
use stampede_plan::{
    parse_duration, parse_header, parse_stages, Header, RequestSpec, Stage, Target,
};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use toml::Spanned;

/// A scenario file problem: `file:line:column: message` (`file: message`
/// when it has no place in the file, such as a file that cannot be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file, as named.
    pub file: String,
    /// The line, from 1; 0 when the problem has no place in the file.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file, self.message),
            line => write!(f, "{}:{line}:{}: {}", self.file, self.column, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// A group's load model.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupLoad {
    /// `connections = N`: N virtual users, each walking the steps.
    Closed {
        /// Virtual users.
        connections: u32,
    },
    /// `rate = R`: R iterations started per second.
    Open {
        /// Iterations started per second.
        rate: f64,
    },
    /// `stages = "30s:100,1m:400"`: an open-model rate moving through stages.
    Stages(Vec<Stage>),
}

/// `think = "50ms..150ms"`: a uniform pause between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkTime {
    /// The shortest pause.
    pub min: Duration,
    /// The longest pause.
    pub max: Duration,
}

impl ThinkTime {
    /// Parses `50ms..150ms`, or one duration for a fixed pause; `None` when it does not parse or the minimum is above the maximum.
    pub fn parse(text: &str) -> Option<ThinkTime> {
        let (min, max) = match text.split_once("..") {
            Some((min, max)) => (parse_duration(min).ok()?, parse_duration(max).ok()?),
            None => {
                let fixed = parse_duration(text).ok()?;
                (fixed, fixed)
            }
        };
        (min <= max).then_some(ThinkTime { min, max })
    }

    /// One pause, uniform in [min, max].
    pub fn sample(&self, rng: &mut fastrand::Rng) -> Duration {
        let span = (self.max - self.min).as_nanos() as u64;
        self.min + Duration::from_nanos(if span == 0 { 0 } else { rng.u64(0..=span) })
    }
}

/// One step of a group: a request, its checks and its extracts.
#[derive(Debug, Clone)]
pub struct Step {
    /// The step's name.
    pub name: String,
    /// The HTTP method.
    pub method: String,
    /// The destination; `path_and_query` may hold template slots.
    pub target: Target,
    /// The step's headers, in the order written.
    pub headers: Vec<Header>,
    /// The body; may hold template slots.
    pub body: Vec<u8>,
    /// The step's checks.
    pub checks: CheckSet,
    /// The step's extractors.
    pub extracts: Vec<Extractor>,
    /// `think`, `transaction`, `once`, redirects, keep-alive and timeouts.
    pub options: StepOptions,
    /// A WebSocket step (`url` is `ws://` or `wss://`, `target` its HTTP
    /// form, whose GET upgrades): the message it sends (`send`; may hold
    /// template slots).
    pub send: Option<Vec<u8>>,
    /// A WebSocket step's `close = true`: the connection closes after its reply.
    pub close: bool,
}

impl Step {
    /// The request in the plan's form, for [`RequestTemplate::from_plan`](crate::RequestTemplate::from_plan).
    pub fn request_spec(&self) -> RequestSpec {
        RequestSpec {
            method: self.method.clone(),
            headers: self.headers.clone(),
            body: self.body.clone(),
            http10: false,
        }
    }

    /// True when a check or an extractor of the step reads headers.
    pub fn needs_headers(&self) -> bool {
        self.checks.needs_headers() || self.extracts.iter().any(Extractor::needs_headers)
    }

    /// True when a check or an extractor of the step reads the body.
    pub fn needs_body(&self) -> bool {
        self.checks.needs_body() || self.extracts.iter().any(Extractor::needs_body)
    }
}

/// One `[[group]]`.
#[derive(Debug)]
pub struct Group {
    /// The group's name.
    pub name: String,
    /// The group's load model.
    pub load: GroupLoad,
    /// Users (or the rate) rise over this time.
    pub ramp_up: Option<Duration>,
    /// The pause after each step.
    pub think: Option<ThinkTime>,
    /// Loaded feeders, in the order of `feed`; rows are passed to templates in this order.
    pub feeders: Vec<Arc<Feeder>>,
    /// Every name the group's templates may use (compile its steps against it);
    /// its extract slots size each virtual user's [`VarStore`](crate::VarStore).
    pub scope: Scope,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// `iterations`, `duration`, `start_delay`, `phase`, `on_error`, `cookies`.
    pub limits: GroupLimits,
}

/// A parsed and validated scenario file.
#[derive(Debug)]
pub struct Scenario {
    /// The groups, in file order.
    pub groups: Vec<Group>,
}

impl Scenario {
    /// Reads and validates `path`; feeds load relative to its directory.
    /// `vars` are the `--var NAME=VALUE` constants.
    pub fn load(path: &Path, vars: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: name.clone(),
            line: 0,
            column: 0,
            message: format!("cannot read: {e}"),
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::parse(&name, &text, &base, vars)
    }

    /// Parses scenario `text`; `file` names it in errors and `base` is where
    /// relative feed paths start.
    pub fn parse(
        file: &str,
        text: &str,
        base: &Path,
        vars: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        let context = Context {
            file,
            text: Some(text),
        };
        let parsed: ScenarioToml = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            context.error(e.span().unwrap_or(0..0), message)
        })?;
        context.scenario(parsed, base, vars)
    }

    /// Validates a scenario built as typed values (the ones a file parses
    /// into) exactly as a file's; `file` names it in errors, which have no
    /// line and column.
    pub fn from_toml(
        file: &str,
        scenario: ScenarioToml,
        base: &Path,
        vars: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        Context { file, text: None }.scenario(scenario, base, vars)
    }
}

impl Context<'_> {
    fn scenario(
        &self,
        parsed: ScenarioToml,
        base: &Path,
        vars: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        let context = self;
        if parsed.group.is_empty() {
            return Err(context.error(0..0, "no [[group]] given"));
        }
        // Results name groups and steps: each name must tell one apart.
        for (i, group) in parsed.group.iter().enumerate() {
            if parsed.group[..i]
                .iter()
                .any(|g| g.name.get_ref() == group.name.get_ref())
            {
                let name = group.name.get_ref();
                return Err(context.at(&group.name, format!("a second group named {name}")));
            }
            for (j, step) in group.step.iter().enumerate() {
                if group.step[..j]
                    .iter()
                    .any(|s| s.name.get_ref() == step.name.get_ref())
                {
                    let (name, in_group) = (step.name.get_ref(), group.name.get_ref());
                    return Err(context.at(
                        &step.name,
                        format!("group {in_group}: a second step named {name}"),
                    ));
                }
            }
        }
        let names: Vec<Range<usize>> = parsed.group.iter().map(|g| g.name.span()).collect();
        let groups = parsed
            .group
            .into_iter()
            .map(|group| context.group(group, base, vars))
            .collect::<Result<Vec<_>, _>>()?;
        context.teardown_follows_bounded_main(&groups, &names)?;
        Ok(Scenario { groups })
    }
}

struct Context<'a> {
    file: &'a str,
    /// The file's text; None for typed values, whose errors have no place.
    text: Option<&'a str>,
}

impl Context<'_> {
    fn error(&self, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        let Some(text) = self.text else {
            return ScenarioError {
                file: self.file.to_string(),
                line: 0,
                column: 0,
                message: message.into(),
            };
        };
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    fn at<T>(&self, value: &Spanned<T>, message: impl Into<String>) -> ScenarioError {
        self.error(value.span(), message)
    }

    /// A check or extractor error, its caret aligned under the whole
    /// `file:line:column: step NAME: ` lead.
    fn parse_error(&self, span: Range<usize>, step: &str, error: &ParseError) -> ScenarioError {
        let mut located = self.error(span, "");
        // `file:line:column: ` (`file: ` without a place), as Display writes it.
        let lead = format!("{located}step {step}: ");
        located.message = format!("step {step}: {}", error.after(&lead));
        located
    }

    fn group(
        &self,
        group: GroupToml,
        base: &Path,
        vars: &[(String, String)],
    ) -> Result<Group, ScenarioError> {
        let name = group.name.get_ref().clone();
        let load = match (&group.connections, &group.rate, &group.stages) {
            (Some(connections), None, None) => match u32::try_from(*connections.get_ref()) {
                Ok(n) if n > 0 => GroupLoad::Closed { connections: n },
                _ => {
                    return Err(self.at(connections, "connections is a whole number of at least 1"))
                }
            },
            (None, Some(rate), None) => {
                let value = match rate.get_ref() {
                    toml::Value::Integer(i) => *i as f64,
                    toml::Value::Float(f) => *f,
                    _ => -1.0,
                };
                if !(value.is_finite() && value > 0.0) {
                    return Err(self.at(rate, "rate is a number of iterations per second above 0"));
                }
                GroupLoad::Open { rate: value }
            }
            (None, None, Some(stages)) => GroupLoad::Stages(
                parse_stages(stages.get_ref()).map_err(|e| self.at(stages, e.to_string()))?,
            ),
            _ => {
                return Err(self.at(
                    &group.name,
                    format!("group {name}: give exactly one of connections, rate or stages"),
                ))
            }
        };
        let ramp_up = group
            .ramp_up
            .as_ref()
            .map(|r| parse_duration(r.get_ref()).map_err(|e| self.at(r, e.to_string())))
            .transpose()?;
        let think = group
            .think
            .as_ref()
            .map(|t| {
                ThinkTime::parse(t.get_ref()).ok_or_else(|| {
                    self.at(t, "think is MIN..MAX, e.g. 50ms..150ms, or one duration")
                })
            })
            .transpose()?;
        let limits = self.limits(&group, !matches!(load, GroupLoad::Closed { .. }))?;
        let mut scope = Scope::new();
        for (var, value) in vars {
            scope
                .add_const(var, value)
                .map_err(|e| self.error(0..0, e.to_string()))?;
        }
        let mut feeders = Vec::new();
        for feed in &group.feed {
            let mut spec = FeedSpec::parse(feed.file.get_ref())
                .map_err(|e| self.at(&feed.file, e.to_string()))?;
            if let Some(mode) = &feed.mode {
                spec.mode = FeedMode::parse(mode.get_ref())
                    .ok_or_else(|| self.at(mode, "mode is circular, random or unique"))?;
            }
            if let Some(delimiter) = &feed.delimiter {
                spec.delimiter = match delimiter.get_ref().as_bytes() {
                    [one] => *one,
                    _ => return Err(self.at(delimiter, "delimiter is one character, e.g. \";\"")),
                };
            }
            let feeder = match self.headerless_feed(feed, &spec, base)? {
                Some(feeder) => feeder,
                None => spec
                    .load(Some(base))
                    .map_err(|e| self.at(&feed.file, e.to_string()))?,
            };
            scope
                .add_feed_columns(feeders.len(), feeder.data().columns())
                .map_err(|e| self.at(&feed.file, e.to_string()))?;
            feeders.push(Arc::new(feeder));
        }
        self.counters(&group.counter, &mut scope)?;
        if group.step.is_empty() {
            return Err(self.at(&group.name, format!("group {name} has no [[group.step]]")));
        }
        let open = !matches!(load, GroupLoad::Closed { .. });
        let mut steps = Vec::new();
        for step in group.step {
            if open && step.once == Some(true) {
                return Err(self.at(
                    &step.name,
                    format!(
                        "step {}: once needs connections (in the open model each arrival is a new iteration, not a user's next)",
                        step.name.get_ref()
                    ),
                ));
            }
            let rendezvous = step.rendezvous.as_ref();
            if let Some(value) = rendezvous.filter(|_| open) {
                return Err(self.at(
                    value,
                    format!(
                        "step {}: rendezvous needs connections (in the open model arrivals keep their own schedule)",
                        step.name.get_ref()
                    ),
                ));
            }
            let step_name = step.name.get_ref().clone();
            let span = rendezvous.map(|r| r.span());
            let step = self.step(step, &mut scope)?;
            if let (Some(spec), Some(span), GroupLoad::Closed { connections }) =
                (step.options.rendezvous, span, &load)
            {
                // JMeter's SyncTimer blocks for good when its group size is
                // larger than the threads, unless a timeout releases them.
                if spec.users.is_some_and(|n| n > *connections) && spec.timeout.is_none() {
                    return Err(self.error(
                        span,
                        format!(
                            "step {step_name}: rendezvous of {} users in a group of {connections} would never fill: give at most {connections}, \"all\", or a rendezvous_timeout",
                            spec.users.unwrap_or_default()
                        ),
                    ));
                }
            }
            steps.push(step);
        }
        Ok(Group {
            name,
            load,
            ramp_up,
            think,
            feeders,
            scope,
            steps,
            limits,
        })
    }

    /// Validates one step against `scope`, then adds its extracts to it.
    fn step(&self, step: StepToml, scope: &mut Scope) -> Result<Step, ScenarioError> {
        let name = step.name.get_ref().clone();
        let options = self.step_options(&step)?;
        let here = |e: &dyn std::fmt::Display| format!("step {name}: {e}");
        let method = match &step.method {
            Some(m) => {
                let method = m.get_ref().trim().to_string();
                if method.is_empty()
                    || !method
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
                {
                    return Err(self.at(m, here(&"method is an HTTP token such as GET or POST")));
                }
                method
            }
            None => "GET".to_string(),
        };
        let (url, websocket) = crate::websocket_url(step.url.get_ref());
        let mut target = parse_url_template(&url).map_err(|e| self.at(&step.url, here(&e)))?;
        if websocket {
            // The URL as written names the target in results.
            target.url = step.url.get_ref().clone();
        }
        let send = match (&step.send, websocket) {
            (Some(send), true) => {
                Template::compile("send", send.get_ref().as_bytes(), scope)
                    .map_err(|e| self.at(send, here(&e)))?;
                Some(send.get_ref().as_bytes().to_vec())
            }
            (None, true) => {
                return Err(self.at(
                    &step.url,
                    here(&"a ws:// step sends a message: add send = \"...\""),
                ))
            }
            (Some(send), false) => {
                return Err(self.at(
                    send,
                    here(&"send is a WebSocket step's: its url is ws:// or wss://"),
                ))
            }
            (None, false) => None,
        };
        if websocket && (step.method.is_some() || step.body.is_some() || step.headers.is_some()) {
            return Err(self.at(
                &step.name,
                here(&"a ws:// step sends its message with send: drop method, body and headers"),
            ));
        }
        if step.close.is_some() && !websocket {
            return Err(self.at(
                &step.name,
                here(&"close is a WebSocket step's: its url is ws:// or wss://"),
            ));
        }
        Template::compile(
            crate::template::URL_FIELD,
            target.path_and_query.as_bytes(),
            scope,
        )
        .map_err(|e| self.at(&step.url, here(&e)))?;
        let mut headers = Vec::new();
        if let Some(table) = &step.headers {
            for (header, value) in table.get_ref() {
                let Some(value) = value.as_str() else {
                    return Err(self.at(
                        table,
                        here(&format!("header {header}: the value is a string")),
                    ));
                };
                let parsed = parse_header(&format!("{header}: {value}"))
                    .map_err(|e| self.at(table, here(&e)))?;
                Template::compile(&format!("header {header}"), parsed.value.as_bytes(), scope)
                    .map_err(|e| self.at(table, here(&e)))?;
                headers.push(parsed);
            }
        }
        let body = match &step.body {
            Some(body) => {
                Template::compile("body", body.get_ref().as_bytes(), scope)
                    .map_err(|e| self.at(body, here(&e)))?;
                body.get_ref().as_bytes().to_vec()
            }
            None => Vec::new(),
        };
        let mut checks = Vec::new();
        for check in &step.check {
            checks.push(check.get_ref().as_str());
        }
        let checks = match CheckSet::parse(&checks) {
            Ok(set) => set,
            Err(e) => {
                let bad = step
                    .check
                    .iter()
                    .find(|c| c.get_ref() == &e.expr)
                    .map_or(step.name.span(), |c| c.span());
                return Err(self.parse_error(bad, &name, &e));
            }
        };
        let mut extracts = Vec::new();
        if let Some(table) = &step.extract {
            for (var, source) in table.get_ref() {
                let Some(source) = source.as_str() else {
                    return Err(self.at(
                        table,
                        here(&format!("extract {var}: the source is a string")),
                    ));
                };
                let slot = scope
                    .add_extract(var)
                    .map_err(|e| self.at(table, here(&e)))?;
                extracts.push(
                    Extractor::parse(var, source, slot)
                        .map_err(|e| self.parse_error(table.span(), &name, &e))?,
                );
            }
        }
        Ok(Step {
            name,
            method,
            target,
            headers,
            body,
            checks,
            extracts,
            options,
            send,
            close: step.close.unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests;
