//! `-H 'Name: value'` arguments, checked against the HTTP token and field rules.

use crate::PlanError;

/// One request header as the user gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The header name, an RFC 9110 token.
    pub name: String,
    /// The value, trimmed; may be empty.
    pub value: String,
}

/// True for an RFC 9110 `token` (header names, methods).
pub(crate) fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Parses `Name: value`; the value may be empty, the name must be a token, and
/// neither may contain CR or LF (no header injection).
pub fn parse_header(text: &str) -> Result<Header, PlanError> {
    let err = || PlanError::Header(text.to_string());
    let (name, value) = text.split_once(':').ok_or_else(err)?;
    let name = name.trim();
    let value = value.trim();
    if !is_token(name) || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(err());
    }
    Ok(Header {
        name: name.to_string(),
        value: value.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_name_and_value() {
        let header = parse_header("X-A:  1 ").unwrap();
        assert_eq!((header.name.as_str(), header.value.as_str()), ("X-A", "1"));
        assert_eq!(parse_header("X-Empty:").unwrap().value, "");
    }

    #[test]
    fn rejects_malformed() {
        for text in ["NoColon", ": v", "Bad Name: v", "X: a\r\nInjected: 1"] {
            assert!(parse_header(text).is_err(), "{text:?}");
        }
    }
}
