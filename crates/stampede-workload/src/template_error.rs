//! Why a template or a variable name was refused. A leaf: the scope of
//! names (scope.rs) and the templates (template/) both report these.

/// Why a template (or a name for one) was refused; `field` names where it was
/// written ("url", "body", "header Authorization").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A template names a variable that is not defined.
    #[error("{field}: unknown variable {{{{{name}}}}}; known: {known}")]
    Unknown {
        /// Where the template was written.
        field: String,
        /// The unknown name.
        name: String,
        /// The names that are defined, in words.
        known: String,
    },
    /// A `{{` without its `}}`.
    #[error("{field}: unclosed {{{{ at byte {at} (write \\{{{{ for a literal {{{{)")]
    Unclosed {
        /// Where the template was written.
        field: String,
        /// Byte offset of the `{{`.
        at: usize,
    },
    /// A slot whose arguments cannot be used.
    #[error("{field}: {{{{{slot}}}}}: {reason}")]
    BadSlot {
        /// Where the template was written.
        field: String,
        /// The slot as written.
        slot: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// `{{env.NAME}}` of an environment variable that is not set.
    #[error("{field}: environment variable {name} is not set")]
    MissingEnv {
        /// Where the template was written.
        field: String,
        /// The environment variable's name.
        name: String,
    },
    /// A variable named like a built-in (`seq`, `uuid`, …): the name.
    #[error("variable {0} is a built-in; choose another name")]
    Shadows(String),
    /// A variable defined twice: the name.
    #[error("variable {0} is defined twice")]
    Duplicate(String),
    /// A variable name with other characters than letters, digits, `_`, `-` and `.`.
    #[error("invalid variable name '{0}': use letters, digits, _, - and .")]
    BadName(String),
    /// A complete message, shown as is.
    #[error("{0}")]
    Invalid(String),
}
