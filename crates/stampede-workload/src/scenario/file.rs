//! The scenario file as TOML sees it: every key known (`deny_unknown_fields`),
//! values kept with their byte spans so later checks can say file:line:column.
//!
//! These are also the typed values of a scenario that a program builds
//! rather than reads (stampede jmeter maps a .jmx onto them):
//! [`Scenario::from_toml`](super::Scenario::from_toml) validates them as a
//! file's are, and `toml::to_string` prints them as the file that parses
//! back to the same values. The fields are in the order a printed file
//! shows them; an absent key is `None` (or empty) and not printed. A
//! value built in a program has no place in a file: [`spanned`] gives it
//! an empty span (spans are not compared).

use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A value without a place in a file, for scenarios built in a program.
pub fn spanned<T>(value: T) -> Spanned<T> {
    Spanned::new(0..0, value)
}

/// The whole file: `[[group]]` tables.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioToml {
    /// The `[[group]]` tables, in file order.
    pub group: Vec<GroupToml>,
}

/// One `[[group]]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GroupToml {
    /// `name`: required.
    pub name: Spanned<String>,
    /// `connections = N`: closed model, N virtual users.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<Spanned<i64>>,
    /// `rate = R`: open model, R iterations started per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<Spanned<toml::Value>>,
    /// `stages = "30s:100,1m:400"`: open model, the rate moving through stages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stages: Option<Spanned<String>>,
    // options.rs: an open-model group's cap on requests in flight.
    /// `max_connections = N`: with a rate, at most N requests in flight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<Spanned<i64>>,
    /// `ramp_up = "10s"`: users (or the rate) rise over this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp_up: Option<Spanned<String>>,
    /// `think = "50ms..150ms"`: a uniform pause after each step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<Spanned<String>>,
    // options.rs: a group's bounds and order.
    /// `iterations = N`: each user walks the steps N times (closed model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Spanned<i64>>,
    /// `total_iterations = N`: with a rate, N iterations in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_iterations: Option<Spanned<i64>>,
    /// `duration = "60s"`: the group stops this long after it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<Spanned<String>>,
    /// `start_delay = "5s"`: the group starts this long after its phase began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_delay: Option<Spanned<String>>,
    /// `phase = "setup" | "main" | "teardown"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Spanned<String>>,
    /// `on_error = "continue" | "next_iteration" | "stop_user" | "stop_run"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_error: Option<Spanned<String>>,
    /// `cookies = true`: each user keeps and sends back its cookies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cookies: Option<bool>,
    /// `feed = [...]`: the group's feeders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feed: Vec<FeedToml>,
    // counters.rs: the group's counters.
    /// `counter = [...]`: the group's counters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counter: Vec<CounterToml>,
    /// The `[[group.step]]` tables, in order.
    pub step: Vec<StepToml>,
}

impl GroupToml {
    /// A group named `name` with no key set and no step yet.
    pub fn named(name: impl Into<String>) -> GroupToml {
        GroupToml {
            name: spanned(name.into()),
            connections: None,
            rate: None,
            stages: None,
            max_connections: None,
            ramp_up: None,
            think: None,
            iterations: None,
            total_iterations: None,
            duration: None,
            start_delay: None,
            phase: None,
            on_error: None,
            cookies: None,
            feed: Vec::new(),
            counter: Vec::new(),
            step: Vec::new(),
        }
    }
}

/// One `counter = [...]` entry of a group.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CounterToml {
    /// `name`: required; a variable name.
    pub name: Spanned<String>,
    /// `start`: the first value (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<i64>,
    /// `incr`: added at each advance (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incr: Option<i64>,
    /// `end`: past this value the counter starts over (default: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
    /// `shared = true`: one sequence over all the group's users.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared: Option<bool>,
    /// `width = 3`: written with at least 3 digits, zero-padded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<Spanned<i64>>,
    /// `advance = "iteration" | "use"` (default `iteration`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advance: Option<Spanned<String>>,
}

/// One `feed = [...]` entry of a group.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FeedToml {
    /// `file`: required; relative to the scenario file's directory.
    pub file: Spanned<String>,
    /// `mode = "circular" | "random" | "unique"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Spanned<String>>,
    /// `delimiter = ","`: the CSV field delimiter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<Spanned<String>>,
    // options.rs: a CSV without a header line.
    /// `columns = ["user", "pass"]`: a CSV without a header line, its column names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<Spanned<Vec<String>>>,
    /// `skip_first_line = true`: with `columns`, the file's first line is skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_first_line: Option<Spanned<bool>>,
}

/// One `[[group.step]]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StepToml {
    /// `name`: required.
    pub name: Spanned<String>,
    /// `method` (default `GET`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Spanned<String>>,
    /// `url`: required; may hold templates.
    pub url: Spanned<String>,
    /// `headers = { Name = "value" }`, in the order written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Spanned<toml::Table>>,
    /// `body`: may hold templates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Spanned<String>>,
    /// `check = [...]`: the step's checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check: Vec<Spanned<String>>,
    /// `extract = { NAME = "SOURCE" }`: the step's extractors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extract: Option<Spanned<toml::Table>>,
    // options.rs: the step's own settings.
    /// `think = "100ms..300ms"`: the pause before this step, in place of the group's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<Spanned<String>>,
    /// `transaction = "Checkout"`: steps sharing the name are also counted together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction: Option<Spanned<String>>,
    /// `once = true`: only in each user's first iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub once: Option<bool>,
    /// `rendezvous = N | "all"`: users wait before this step, then send together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendezvous: Option<Spanned<toml::Value>>,
    /// `rendezvous_timeout = "2s"`: releases whoever waited that long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendezvous_timeout: Option<Spanned<String>>,
    /// `follow_redirects`: this step follows redirects, or not, whatever `--redirects` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_redirects: Option<bool>,
    /// `keep_alive`: `false` closes the connection after this step; `true` keeps it open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<bool>,
    /// `connect_timeout`: this step's connect timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<Spanned<String>>,
    /// `timeout`: this step's response timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Spanned<String>>,
    /// `send`: a WebSocket step's message (its `url` is `ws://` or
    /// `wss://`); may hold templates. Its reply is judged by `check` and
    /// read by `extract`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send: Option<Spanned<String>>,
    /// `close = true`: after this WebSocket step's reply the connection
    /// closes (1000); the next step upgrades a new one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close: Option<bool>,
}

impl StepToml {
    /// A GET step named `name` to `url`, no other key set.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> StepToml {
        StepToml {
            name: spanned(name.into()),
            method: None,
            url: spanned(url.into()),
            headers: None,
            body: None,
            check: Vec::new(),
            extract: None,
            think: None,
            transaction: None,
            once: None,
            rendezvous: None,
            rendezvous_timeout: None,
            follow_redirects: None,
            keep_alive: None,
            connect_timeout: None,
            timeout: None,
            send: None,
            close: None,
        }
    }
}
