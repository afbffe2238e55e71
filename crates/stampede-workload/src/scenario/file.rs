//! The scenario file as TOML sees it: every key known (`deny_unknown_fields`),
//! values kept with their byte spans so later checks can say file:line:column.

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileToml {
    pub group: Vec<GroupToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GroupToml {
    pub name: Spanned<String>,
    pub connections: Option<Spanned<i64>>,
    pub rate: Option<Spanned<toml::Value>>,
    pub stages: Option<Spanned<String>>,
    pub ramp_up: Option<Spanned<String>>,
    pub think: Option<Spanned<String>>,
    #[serde(default)]
    pub feed: Vec<FeedToml>,
    // options.rs: a group's bounds and order.
    pub iterations: Option<Spanned<i64>>,
    pub total_iterations: Option<Spanned<i64>>,
    pub duration: Option<Spanned<String>>,
    pub start_delay: Option<Spanned<String>>,
    pub phase: Option<Spanned<String>>,
    pub on_error: Option<Spanned<String>>,
    pub cookies: Option<bool>,
    pub max_connections: Option<Spanned<i64>>,
    // counters.rs: the group's counters.
    #[serde(default)]
    pub counter: Vec<CounterToml>,
    pub step: Vec<StepToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CounterToml {
    pub name: Spanned<String>,
    pub start: Option<i64>,
    pub incr: Option<i64>,
    pub end: Option<i64>,
    pub shared: Option<bool>,
    pub width: Option<Spanned<i64>>,
    pub advance: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FeedToml {
    pub file: Spanned<String>,
    pub mode: Option<Spanned<String>>,
    pub delimiter: Option<Spanned<String>>,
    // options.rs: a CSV without a header line.
    pub columns: Option<Spanned<Vec<String>>>,
    pub skip_first_line: Option<Spanned<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StepToml {
    pub name: Spanned<String>,
    pub method: Option<Spanned<String>>,
    pub url: Spanned<String>,
    pub headers: Option<Spanned<toml::Table>>,
    pub body: Option<Spanned<String>>,
    #[serde(default)]
    pub check: Vec<Spanned<String>>,
    pub extract: Option<Spanned<toml::Table>>,
    // options.rs: the step's own settings.
    pub think: Option<Spanned<String>>,
    pub transaction: Option<Spanned<String>>,
    pub once: Option<bool>,
    pub follow_redirects: Option<bool>,
    pub keep_alive: Option<bool>,
    pub connect_timeout: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    pub rendezvous: Option<Spanned<toml::Value>>,
    pub rendezvous_timeout: Option<Spanned<String>>,
}
