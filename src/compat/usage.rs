//! What the front-ends share when they read a foreign command line: the
//! stampede-only `--stampede-json`, the one URL, usage errors and refusals
//! (one line, exit status 2), the typed `stampede run` defaults to start
//! from, headers as `stampede run -H` reads them, and base64 for Basic
//! authentication.

use super::getopt::OptSpec;
use crate::flags::run_args::RunArgs;

/// The stampede-only option every front-end accepts: the full result as JSON.
pub const STAMPEDE_JSON: OptSpec = OptSpec::long("stampede-json", "stampede-json", true);

/// The one URL a front-end's command line must hold; `missing` is the
/// tool's own message when there is none.
pub fn one_url(tool: &str, urls: Vec<String>, missing: &str) -> anyhow::Result<String> {
    match <[String; 1]>::try_from(urls) {
        Ok([url]) => Ok(url),
        Err(urls) if urls.is_empty() => Err(usage(tool, missing)),
        Err(urls) => Err(usage(tool, format!("one URL expected, got {}", urls.len()))),
    }
}

/// A usage error of `tool`: one line, exit status 2.
pub fn usage(tool: &str, message: impl std::fmt::Display) -> anyhow::Error {
    // The press tool's help is `-?`/`--help`; the others all know `-h`.
    let help = if tool == "press" { "--help" } else { "-h" };
    anyhow::anyhow!("{tool}: {message} (see `stampede {tool} {help}`)")
}

/// `stampede run URL`'s arguments at their defaults, for a front-end to set
/// fields on; an invalid environment default is a usage error of `tool`.
pub fn base_args(tool: &str, url: &str) -> anyhow::Result<RunArgs> {
    RunArgs::for_url(url).map_err(|error| {
        let text = error.to_string();
        let first = text.lines().next().unwrap_or_default();
        usage(tool, first.strip_prefix("error: ").unwrap_or(first))
    })
}

/// Headers as `stampede run -H` reads them; a malformed one is a usage
/// error naming the tool's `flag`.
pub fn headers(
    tool: &str,
    flag: &str,
    headers: &[String],
) -> anyhow::Result<Vec<stampede_plan::Header>> {
    headers
        .iter()
        .map(|h| stampede_plan::parse_header(h).map_err(|e| usage(tool, format!("{flag}: {e}"))))
        .collect()
}

/// A flag stampede cannot honour: one line naming it and why, exit status 2.
pub fn refuse(tool: &str, flag: &str, why: &str) -> anyhow::Error {
    anyhow::anyhow!("{tool} {flag}: not supported: {why}")
}

/// Standard base64 with padding (RFC 4648), for Basic authentication headers
/// (the `base64` crate, as `--basic-auth` of `stampede run` uses it).
pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let table = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("Aladdin:open sesame", "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
        ];
        for (text, encoded) in table {
            assert_eq!(base64(text.as_bytes()), encoded, "{text:?}");
        }
    }
}
