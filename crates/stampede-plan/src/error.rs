//! The one error type of plan building: each variant names what the user typed.

/// Why a plan could not be built from what the user gave.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("invalid duration '{0}': expected a number with a unit, e.g. 500ms, 10s, 2m, 1h")]
    Duration(String),
    #[error("invalid URL '{url}': {reason}")]
    Url { url: String, reason: String },
    #[error("unsupported scheme '{0}' (supported: http, https)")]
    Scheme(String),
    #[error("invalid header '{0}': expected 'Name: value'")]
    Header(String),
    #[error("invalid method '{0}': expected an HTTP token such as GET or POST")]
    Method(String),
    #[error("{0}")]
    Invalid(String),
}
