//! A URL whose path and query may hold `{{...}}` slots: the scheme and
//! authority are parsed as any target; the path is kept raw (URL parsing
//! would percent-encode the braces) and compiled as a template later. A
//! slot right after the authority (`http://h:8080{{path}}`) begins the
//! path: the request gets a `/` before it unless its value starts with one.

use super::TemplateError;
use stampede_plan::Target;

/// The HTTP URL a `ws://` (`wss://`) URL upgrades from, and whether it
/// was one; any other URL as it is (a run's URL and a scenario step's).
pub fn websocket_url(url: &str) -> (String, bool) {
    for (ws, http) in [("ws://", "http://"), ("wss://", "https://")] {
        if url.len() >= ws.len() && url[..ws.len()].eq_ignore_ascii_case(ws) {
            return (format!("{http}{}", &url[ws.len()..]), true);
        }
    }
    (url.to_string(), false)
}

/// Parses `url`; a URL without `{{` is exactly [`Target::parse`]. With slots,
/// `path_and_query` holds the raw path template.
pub fn parse_url_template(url: &str) -> Result<Target, TemplateError> {
    let invalid = |e: stampede_plan::PlanError| TemplateError::Invalid(e.to_string());
    if !url.contains("{{") {
        return Target::parse(url).map_err(invalid);
    }
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let slash_at = url[after_scheme..]
        .find(['/', '?'])
        .map_or(url.len(), |i| after_scheme + i);
    // A slot before any `/` or `?` ends a non-empty authority.
    let slot_at = url[after_scheme..]
        .find("{{")
        .map(|i| after_scheme + i)
        .filter(|&at| at < slash_at && at > after_scheme && !url[..at].ends_with('\\'));
    let path_at = slot_at.unwrap_or(slash_at);
    let (base, path) = url.split_at(path_at);
    if base.contains("{{") {
        return Err(TemplateError::Invalid(format!(
            "url '{url}': {{{{...}}}} may appear in the path and query, not the scheme or host"
        )));
    }
    let mut target = Target::parse(base).map_err(invalid)?;
    target.url = url.to_string();
    target.path_and_query = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_urls_are_targets() {
        let target = parse_url_template("http://127.0.0.1:3000/a b").unwrap();
        assert_eq!(target, Target::parse("http://127.0.0.1:3000/a b").unwrap());
    }

    #[test]
    fn slots_stay_raw_in_the_path() {
        let target = parse_url_template("127.0.0.1:3000/item/{{seq}}?u={{rand_int 1 9}}").unwrap();
        assert_eq!(target.authority, "127.0.0.1:3000");
        assert_eq!(target.path_and_query, "/item/{{seq}}?u={{rand_int 1 9}}");
        let target = parse_url_template("http://h?q={{seq}}").unwrap();
        assert_eq!(target.path_and_query, "/?q={{seq}}");
    }

    #[test]
    fn a_slot_right_after_the_host_begins_the_path() {
        let target = parse_url_template("http://127.0.0.1:3000{{path}}?q=1").unwrap();
        assert_eq!(target.authority, "127.0.0.1:3000");
        assert_eq!(target.path_and_query, "{{path}}?q=1");
        let target = parse_url_template("https://h{{seq}}/x").unwrap();
        assert_eq!(
            (target.port, target.path_and_query.as_str()),
            (443, "{{seq}}/x")
        );
    }

    #[test]
    fn slots_in_the_host_are_refused() {
        assert!(parse_url_template("http://{{host}}/x").is_err());
        assert!(parse_url_template("ftp://h/{{seq}}").is_err());
    }
}
