//! Real workloads for stampede: templated requests, data feeders,
//! response checks, extracted values and multi-step scenario files.
//!
//! Engine-independent: everything here is compiled once before the run
//! (templates into literal pieces and slots, checks into matchers, feeders
//! into shared rows) so the engine's per-request work is rendering into a
//! reused buffer and evaluating prepared checks.

pub mod check;
pub mod counter;
pub mod extract;
pub mod feeder;
pub mod har;
pub mod json_path;
pub mod replay;
pub mod request_bytes;
pub mod response;
pub mod scenario;
pub mod scope;
pub mod script;
pub mod store;
pub mod template;
mod template_error;
pub mod workload;

pub use check::{parse_size, Check, CheckSet, ParseError, Verdict};
pub use counter::{Advance, Counter, CounterSpec};
pub use extract::{ExtractError, Extractor};
pub use feeder::{Exhausted, FeedCursor, FeedData, FeedMode, FeedSpec, Feeder, FeederError};
pub use response::{HeaderFields, ListFields, ResponseView};
pub use scenario::{
    spanned, CounterToml, FeedToml, Group, GroupLimits, GroupLoad, GroupToml, OnError, Phase,
    RendezvousSpec, Scenario, ScenarioError, ScenarioToml, Step, StepOptions, StepToml, ThinkTime,
};
pub use scope::{Binding, Scope, BUILTINS};
pub use script::{Script, ScriptError, ScriptThread};
pub use store::VarStore;
pub use template::{
    escape_literal, parse_url_template, websocket_url, RenderContext, RequestTemplate, Sequence,
    Template, TemplateError,
};
pub use workload::{parse_var, Workload, WorkloadError};
