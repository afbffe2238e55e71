//! `plan.http_version` of a result: the one place its values are named.
//! `"1.1"`, `"1.0"`, `"2"` (`--http2`) and `"h3"` (`--http3`, the name
//! ALPN gives HTTP/3); a file written before HTTP/3 was named
//! so says `"3"`, read back as `"h3"`, so that `compare` of an old and a
//! new HTTP/3 result finds no difference in the protocol.

use serde::{Deserialize, Deserializer};
use stampede_plan::Plan;

/// HTTP/3's value.
const HTTP3: &str = "h3";

/// The protocol `plan` speaks, as the result names it.
pub(crate) fn of(plan: &Plan) -> &'static str {
    if plan.transport.http2 {
        "2"
    } else if plan.transport.http3 {
        HTTP3
    } else if plan.request.http10 {
        "1.0"
    } else {
        "1.1"
    }
}

/// Reads the field, older files' `"3"` as `"h3"`.
pub(crate) fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    Ok(if text == "3" { HTTP3.to_string() } else { text })
}

/// The version number people write after `HTTP/`: `3` for `"h3"`.
pub(crate) fn number(version: &str) -> &str {
    if version == HTTP3 {
        "3"
    } else {
        version
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http3_is_h3_and_its_number_is_3() {
        assert_eq!(number("h3"), "3");
        assert_eq!(number("2"), "2");
        assert_eq!(number("1.1"), "1.1");
    }

    #[test]
    fn an_older_files_3_reads_as_h3() {
        #[derive(Deserialize)]
        struct Field {
            #[serde(deserialize_with = "read")]
            v: String,
        }
        let field = |json: &str| serde_json::from_str::<Field>(json).unwrap().v;
        assert_eq!(field(r#"{"v": "3"}"#), "h3");
        assert_eq!(field(r#"{"v": "h3"}"#), "h3");
        assert_eq!(field(r#"{"v": "2"}"#), "2");
    }
}
