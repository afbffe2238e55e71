//! Real workloads for stampede (issue 18): templates, checks (feeders, extractors and scenarios follow).
pub mod check;
pub mod extract;
pub mod feeder;
pub mod json_path;
pub mod response;
pub mod scope;
pub mod store;
pub mod template;
pub use check::{Check, CheckSet, ParseError, Verdict};
pub use response::ResponseView;
pub use scope::{Binding, Scope, BUILTINS};
pub use store::VarStore;
pub use template::{
    parse_url_template, RenderContext, RequestTemplate, Sequence, Template, TemplateError,
};
