//! The global `wrk` table of every state: the URL's parts as wrk splits
//! them (`scheme`, `host`, `port` as a string or nil, `path` with its
//! query), `method`, `headers` (the `-H` lines of the form `Name: value`),
//! `body`, and the functions `format`, `lookup`, `connect`.
//!
//! `wrk.format` is Lua (lua/format.lua): counter.lua-style scripts call it
//! for every request, and inside LuaJIT that is cheaper than a call out to
//! Rust and back for every table access. It keeps wrk's side effects on the
//! headers table it formats (a missing `Host` is copied from `wrk.headers`,
//! `Content-Length` is set to the body's length, or removed without a body).

use mlua::{Function, Lua, Table, Value};

/// `wrk.format`, in Lua (lua/format.lua).
const FORMAT: &str = include_str!("../lua/format.lua");

/// A URL split as wrk's http_parser splits it: the literal text of each part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UrlParts {
    pub scheme: String,
    /// Without IPv6 brackets.
    pub host: String,
    pub port: Option<String>,
    /// From the first `/` after the authority to the end (query included);
    /// `/` when the URL has no path.
    pub path: String,
}

impl UrlParts {
    /// Splits `url`; None when it has no `scheme://host`.
    pub fn parse(url: &str) -> Option<UrlParts> {
        let (scheme, rest) = url.split_once("://")?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let authority = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (host, after) = bracketed.split_once(']')?;
            (host, after.strip_prefix(':'))
        } else {
            match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if scheme.is_empty() || host.is_empty() {
            return None;
        }
        Some(UrlParts {
            scheme: scheme.to_string(),
            host: host.to_string(),
            port: port.filter(|p| !p.is_empty()).map(str::to_string),
            path: if tail.starts_with('/') { tail } else { "/" }.to_string(),
        })
    }
}

/// The request the `wrk` table starts with: wrk's `-H` lines, and (from
/// `stampede run`'s -m, -b) a method and a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestDefaults {
    /// `Name: value` lines.
    pub headers: Vec<String>,
    /// `wrk.method` (`GET` unless -m says otherwise).
    pub method: String,
    /// `wrk.body`; None leaves it nil.
    pub body: Option<Vec<u8>>,
}

impl Default for RequestDefaults {
    fn default() -> Self {
        RequestDefaults {
            headers: Vec::new(),
            method: "GET".into(),
            body: None,
        }
    }
}

/// Builds the `wrk` table in `lua` and sets it as the global `wrk`.
pub(crate) fn install(lua: &Lua, url: &UrlParts, request: &RequestDefaults) -> mlua::Result<Table> {
    let wrk = lua.create_table()?;
    wrk.set("scheme", url.scheme.as_str())?;
    wrk.set("host", url.host.as_str())?;
    wrk.set("port", url.port.as_deref())?;
    wrk.set("method", request.method.as_str())?;
    wrk.set("path", url.path.as_str())?;
    let table = lua.create_table()?;
    // wrk takes only `Name: value` (a space after the colon) into the table.
    for line in &request.headers {
        if let Some((name, value)) = line.split_once(": ") {
            table.set(name, value)?;
        }
    }
    wrk.set("headers", table)?;
    match &request.body {
        Some(body) => wrk.set("body", lua.create_string(body)?)?,
        None => wrk.set("body", Value::Nil)?,
    }
    let format: Function = lua.load(FORMAT).set_name("=wrk.format").call(wrk.clone())?;
    wrk.set("format", format)?;
    crate::addr::install(lua, &wrk)?;
    lua.globals().set("wrk", wrk.clone())?;
    Ok(wrk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(url: &str, headers: &[&str]) -> Lua {
        let lua = Lua::new();
        let request = RequestDefaults {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            ..RequestDefaults::default()
        };
        install(&lua, &UrlParts::parse(url).unwrap(), &request).unwrap();
        lua
    }

    fn eval(lua: &Lua, code: &str) -> String {
        lua.load(code)
            .eval::<mlua::String>()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn urls_split_as_wrk_splits_them() {
        let p = UrlParts::parse("http://127.0.0.1:8080/a/b?x=1").unwrap();
        assert_eq!(
            (
                p.scheme.as_str(),
                p.host.as_str(),
                p.port.as_deref(),
                p.path.as_str()
            ),
            ("http", "127.0.0.1", Some("8080"), "/a/b?x=1")
        );
        let p = UrlParts::parse("https://[::1]/").unwrap();
        assert_eq!((p.host.as_str(), p.port.as_deref()), ("::1", None));
        assert_eq!(UrlParts::parse("http://h").unwrap().path, "/");
        assert_eq!(UrlParts::parse("http://u:p@h:1/x").unwrap().host, "h");
        assert!(UrlParts::parse("localhost:8080").is_none());
        assert!(UrlParts::parse("http:///x").is_none());
    }

    #[test]
    fn the_table_holds_the_url_and_header_lines() {
        let lua = state("http://localhost/p?q", &["X-A: 1", "X-B:2"]);
        assert_eq!(
            eval(
                &lua,
                "return wrk.scheme .. wrk.host .. wrk.path .. wrk.method"
            ),
            "httplocalhost/p?qGET"
        );
        assert_eq!(
            eval(&lua, "return tostring(wrk.port) .. tostring(wrk.body)"),
            "nilnil"
        );
        // wrk skips a header line without a space after the colon.
        assert_eq!(
            eval(
                &lua,
                "return wrk.headers['X-A'] .. tostring(wrk.headers['X-B'])"
            ),
            "1nil"
        );
    }

    #[test]
    fn format_merges_with_the_table_and_sets_lengths() {
        let lua = state("http://h:81/", &[]);
        lua.load(r#"wrk.headers.Host = "h:81""#).exec().unwrap();
        assert_eq!(
            eval(&lua, "return wrk.format()"),
            "GET / HTTP/1.1\r\nHost: h:81\r\n\r\n"
        );
        // A number header (counter.lua) prints as Lua prints it.
        let got = eval(
            &lua,
            r#"return wrk.format("POST", "/x", { ["X-N"] = 7 }, "abc")"#,
        );
        assert!(got.starts_with("POST /x HTTP/1.1\r\n"), "{got}");
        assert!(
            got.contains("X-N: 7\r\n") && got.contains("Host: h:81\r\n"),
            "{got}"
        );
        assert!(
            got.contains("Content-Length: 3\r\n") && got.ends_with("\r\n\r\nabc"),
            "{got}"
        );
        // post.lua: the table's method and body; Content-Length lands in wrk.headers.
        lua.load(r#"wrk.method = "PUT" wrk.body = "hello""#)
            .exec()
            .unwrap();
        let got = eval(&lua, "return wrk.format(nil, '/y')");
        assert!(
            got.starts_with("PUT /y HTTP/1.1\r\n") && got.ends_with("hello"),
            "{got}"
        );
        assert_eq!(
            eval(&lua, "return tostring(wrk.headers['Content-Length'])"),
            "5"
        );
        lua.load("wrk.body = nil").exec().unwrap();
        eval(&lua, "return wrk.format()");
        assert_eq!(
            eval(&lua, "return tostring(wrk.headers['Content-Length'])"),
            "nil"
        );
    }

    #[test]
    fn the_table_starts_with_the_runs_method_and_body() {
        let lua = Lua::new();
        let request = RequestDefaults {
            headers: vec!["Content-Type: text/plain".into()],
            method: "PUT".into(),
            body: Some(b"abc".to_vec()),
        };
        install(&lua, &UrlParts::parse("http://h/").unwrap(), &request).unwrap();
        let got = eval(&lua, "return wrk.format()");
        assert!(
            got.starts_with("PUT / HTTP/1.1\r\n") && got.ends_with("\r\n\r\nabc"),
            "{got}"
        );
        assert!(
            got.contains("Content-Type: text/plain\r\n") && got.contains("Content-Length: 3\r\n"),
            "{got}"
        );
    }

    #[test]
    fn format_reads_values_as_string_format_reads_them() {
        let lua = state("http://h/", &["Host: h"]);
        // wrk's string.format("%s: %s"): numbers as tostring prints them,
        // anything else through tostring.
        let got = eval(
            &lua,
            r#"return wrk.format("GET", 1.5, { Host = "h", ["X-B"] = true, ["X-F"] = 0.1 })"#,
        );
        assert!(got.starts_with("GET 1.5 HTTP/1.1\r\n"), "{got}");
        assert!(
            got.contains("X-B: true\r\n") && got.contains("X-F: 0.1\r\n"),
            "{got}"
        );
        // A __tostring that formats a request of its own leaves this one whole.
        let got = eval(
            &lua,
            r#"local inner = setmetatable({}, { __tostring = function() return #wrk.format("PUT", "/in") .. "" end })
               return wrk.format("GET", "/out", { Host = "h", ["X-Len"] = inner })"#,
        );
        assert!(got.starts_with("GET /out HTTP/1.1\r\n"), "{got}");
        assert!(
            got.contains("X-Len: ") && got.ends_with("\r\n\r\n"),
            "{got}"
        );
        // The same request twice is the same string; a body that is not a
        // string is an error, as in wrk (string.len refuses it).
        let same: bool = lua
            .load("return wrk.format(nil, '/s') == wrk.format(nil, '/s')")
            .eval()
            .unwrap();
        assert!(same);
        let err = lua
            .load("return wrk.format(nil, nil, nil, {})")
            .exec()
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad argument #1 to 'len'"), "{err}");
    }

    #[test]
    fn format_refuses_a_non_table_of_headers() {
        let lua = state("http://h/", &[]);
        let err = lua
            .load("return wrk.format(nil, nil, 5)")
            .exec()
            .unwrap_err()
            .to_string();
        assert!(err.contains("headers must be a table, got number"), "{err}");
    }
}
