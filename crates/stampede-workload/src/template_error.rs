//! Why a template or a variable name was refused. A leaf: the scope of
//! names (scope.rs) and the templates (template/) both report these.

/// Why a template (or a name for one) was refused; `field` names where it was
/// written ("url", "body", "header Authorization").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("{field}: unknown variable {{{{{name}}}}}; known: {known}")]
    Unknown {
        field: String,
        name: String,
        known: String,
    },
    #[error("{field}: unclosed {{{{ at byte {at} (write \\{{{{ for a literal {{{{)")]
    Unclosed { field: String, at: usize },
    #[error("{field}: {{{{{slot}}}}}: {reason}")]
    BadSlot {
        field: String,
        slot: String,
        reason: String,
    },
    #[error("{field}: environment variable {name} is not set")]
    MissingEnv { field: String, name: String },
    #[error("variable {0} is a built-in; choose another name")]
    Shadows(String),
    #[error("variable {0} is defined twice")]
    Duplicate(String),
    #[error("invalid variable name '{0}': use letters, digits, _, - and .")]
    BadName(String),
    #[error("{0}")]
    Invalid(String),
}
