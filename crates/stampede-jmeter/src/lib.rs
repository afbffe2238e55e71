//! JMeter test plans on stampede: a .jmx file (the
//! `jmeterTestPlan`/`hashTree` format of JMeter 2.13 to 5.6) read into a
//! typed [`Plan`] and mapped onto a stampede scenario's typed values, which
//! then run through the same validation as a user's scenario; JMeter's JTL
//! CSV format for the results (jtl.rs); and the runtime around the engine
//! ([`runtime`]: the JTL writer, completion order, transactions,
//! `allThreads`, the Summariser, thread-group scheduling, the report).
//!
//! Pipeline: tree.rs (XML to elements) → build.rs (scoping, with
//! sampler.rs, rules.rs, csv_feed.rs, variables.rs (Counter, Random
//! Variable), dns.rs, ignored.rs and functions.rs for `${...}`) →
//! emit.rs (the scenario's values, printed as TOML for `--dry-run`).
//! Nothing here sends a request: the binary runs each group.

mod build;
mod call_syntax;
mod classify;
mod counter_book;
mod csv_feed;
mod dns;
pub mod emit;
pub mod failure;
pub mod functions;
mod http_args;
mod http_url;
mod ignored;
pub(crate) mod jtl;
pub mod model;
mod rules;
pub mod runtime;
mod sampler;
mod sync_timer;
mod thread_group;
pub(crate) mod tree;
mod variables;

pub use emit::{scenario, scenario_text};
pub use model::{Plan, Unsupported};

use std::collections::HashMap;
use std::path::Path;

/// Bad input (exit 2): one line naming the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JmxError(pub String);

impl JmxError {
    pub(crate) fn new(message: impl Into<String>) -> JmxError {
        JmxError(message.into())
    }
}

/// Why one element did not map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MapError {
    /// No stampede equivalent: listed, and the run refused unless skipped.
    Unsupported(String),
    /// The plan is wrong (a missing required property, a bad number).
    Bad(String),
}

impl MapError {
    pub(crate) fn missing(e: &tree::Element, prop: &str) -> MapError {
        MapError::Bad(format!(
            "{}: the required property {prop} is missing or empty",
            e.describe()
        ))
    }
}

/// Reads `path` and maps it; `props` are the `-J`/`-q` properties.
pub fn load(path: &Path, props: HashMap<String, String>) -> Result<Plan, JmxError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| JmxError::new(format!("{shown}: cannot read: {e}")))?;
    // Absolute, so the mapped scenario's feed paths hold wherever it is written.
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let base = std::path::absolute(dir.unwrap_or(Path::new(".")))
        .map_err(|e| JmxError::new(format!("{shown}: {e}")))?;
    parse(&shown, &text, &base, props)
}

/// Maps plan `text`; `file` names it in errors, `base` is where relative
/// paths in the plan start (the .jmx's directory).
pub fn parse(
    file: &str,
    text: &str,
    base: &Path,
    props: HashMap<String, String>,
) -> Result<Plan, JmxError> {
    let top = tree::parse_jmx(file, text)?;
    let names = functions::Names {
        props,
        base: base.to_path_buf(),
        ..functions::Names::default()
    };
    build::build(&top, names, base).map_err(|e| JmxError::new(format!("{file}: {e}")))
}

/// Reads a `-q` property file (Java .properties syntax), later keys winning.
pub fn read_properties(path: &Path) -> Result<HashMap<String, String>, JmxError> {
    let file = std::fs::File::open(path)
        .map_err(|e| JmxError::new(format!("-q {}: cannot read: {e}", path.display())))?;
    java_properties::read(std::io::BufReader::new(file))
        .map_err(|e| JmxError::new(format!("-q {}: {e}", path.display())))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod http_tests;

#[cfg(test)]
mod element_tests;

#[cfg(test)]
mod extractor_tests;

#[cfg(test)]
mod assertion_tests;
