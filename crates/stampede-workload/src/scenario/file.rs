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
    pub group: Vec<GroupToml>,
}

/// One `[[group]]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GroupToml {
    pub name: Spanned<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<Spanned<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<Spanned<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stages: Option<Spanned<String>>,
    // options.rs: an open-model group's cap on requests in flight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<Spanned<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp_up: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<Spanned<String>>,
    // options.rs: a group's bounds and order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Spanned<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_iterations: Option<Spanned<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_delay: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_error: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cookies: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feed: Vec<FeedToml>,
    // counters.rs: the group's counters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counter: Vec<CounterToml>,
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
    pub name: Spanned<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incr: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<Spanned<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advance: Option<Spanned<String>>,
}

/// One `feed = [...]` entry of a group.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FeedToml {
    pub file: Spanned<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<Spanned<String>>,
    // options.rs: a CSV without a header line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<Spanned<Vec<String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_first_line: Option<Spanned<bool>>,
}

/// One `[[group.step]]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StepToml {
    pub name: Spanned<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Spanned<String>>,
    pub url: Spanned<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Spanned<toml::Table>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check: Vec<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extract: Option<Spanned<toml::Table>>,
    // options.rs: the step's own settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub once: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendezvous: Option<Spanned<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendezvous_timeout: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_redirects: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Spanned<String>>,
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
        }
    }
}
