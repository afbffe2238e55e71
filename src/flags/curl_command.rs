//! `stampede run --curl 'curl …'`: a curl command line, as a browser's
//! "Copy as cURL (bash)" or a bug report gives it, read onto run's typed
//! arguments, so the load sends the request curl would send. The options
//! are read as curl's src/tool_getparam.c reads them (a short option's
//! value attached or next, long options never with `=`), and what they
//! send follows curl's documentation (docs/cmdline-opts): `-d` joins its
//! parts with `&`, reads `@file` without its newlines and makes the
//! request a form POST; `-G` moves the data into the query; `-L` follows
//! up to 50 redirects. Options that only shape curl's own output are
//! accepted and change nothing; any other is refused in one line naming it.

use crate::flags::bash_words;
use crate::flags::run_args::RunArgs;
use anyhow::{bail, Context};
use stampede_plan::{parse_header, Header};
// Run's URL, headers and body are templates: what curl sends goes in as is.
use stampede_workload::escape_literal as literal;
use stampede_workload::{spanned, GroupToml, ScenarioToml, StepToml};

/// curl's `--max-redirs` default (docs/cmdline-opts/max-redirs.md).
const CURL_MAX_REDIRS: u32 = 50;
/// curl's Content-Type for `-d` data when the command gives none.
const FORM_TYPE: &str = "application/x-www-form-urlencoded";

/// What a curl command asks to send.
#[derive(Debug, Default, PartialEq)]
pub struct CurlRequest {
    pub url: String,
    pub method: Option<String>,
    pub headers: Vec<Header>,
    /// The `-d`-family parts, each already as it is sent.
    pub data: Vec<Vec<u8>>,
    /// `--json`: the data is JSON (its Content-Type and Accept).
    pub json: bool,
    /// `-G`: the data goes into the URL's query.
    pub get: bool,
    pub cookie: Option<String>,
    pub user: Option<String>,
    pub user_agent: Option<String>,
    pub referer: Option<String>,
    pub head: bool,
    pub compressed: bool,
    pub insecure: bool,
    pub http2: bool,
    /// `--http2-prior-knowledge`: h2c without an Upgrade over http.
    pub prior_knowledge: bool,
    pub http10: bool,
    /// `-L`, with `--max-redirs` when given.
    pub redirects: Option<u32>,
    max_redirs: Option<u32>,
}

/// Options that change only what curl prints or where; nothing sent.
const OUTPUT_ONLY: &[&str] = &[
    "-s",
    "--silent",
    "-S",
    "--show-error",
    "-v",
    "--verbose",
    "-i",
    "--include",
    "-f",
    "--fail",
    "-g",
    "--globoff",
    "-#",
    "--progress-bar",
    "--no-progress-meter",
    "-O",
    "--remote-name",
];
/// The same, taking a value.
const OUTPUT_ONLY_WITH_VALUE: &[&str] = &["-o", "--output", "-w", "--write-out"];

impl CurlRequest {
    /// Reads a whole command line (`curl` first), or says why not.
    pub fn parse(command: &str) -> anyhow::Result<CurlRequest> {
        let words =
            bash_words::split(command).map_err(|why| anyhow::anyhow!("curl command: {why}"))?;
        let Some((program, rest)) = words.split_first() else {
            bail!("curl command: the command is empty");
        };
        if program != "curl" && !program.ends_with("/curl") {
            bail!("curl command: the command must start with curl, not '{program}'");
        }
        CurlRequest::from_words(rest)
    }

    /// Reads curl's arguments (the words after `curl`).
    pub fn from_words(words: &[String]) -> anyhow::Result<CurlRequest> {
        let mut request = CurlRequest::default();
        let mut urls = Vec::new();
        let mut refused = Vec::new();
        let mut at = 0;
        while at < words.len() {
            let word = &words[at];
            at += 1;
            if !word.starts_with('-') || word == "-" {
                urls.push(word.clone());
                continue;
            }
            // A short option's value may be attached (-XPOST, -HName: v).
            let (option, attached) = if !word.starts_with("--") && word.len() > 2 {
                let split = word.char_indices().nth(2).map_or(word.len(), |(i, _)| i);
                (&word[..split], Some(word[split..].to_string()))
            } else {
                (word.as_str(), None)
            };
            let mut value = |name: &str| -> anyhow::Result<String> {
                if let Some(value) = attached.clone() {
                    return Ok(value);
                }
                let value = words
                    .get(at)
                    .cloned()
                    .with_context(|| format!("curl command: {name} needs a value"))?;
                at += 1;
                Ok(value)
            };
            match option {
                "--url" => urls.push(value(option)?),
                "-X" | "--request" => request.method = Some(value(option)?),
                "-H" | "--header" => {
                    if let Some(header) = header(&value(option)?)? {
                        request.headers.push(header);
                    }
                }
                "-d" | "--data" | "--data-ascii" => {
                    request.data.push(data_ascii(&value(option)?)?);
                }
                "--data-raw" => request.data.push(value(option)?.into_bytes()),
                "--data-binary" => request.data.push(data_binary(&value(option)?)?),
                "--data-urlencode" => request.data.push(data_urlencode(&value(option)?)?),
                "--json" => {
                    request.data.push(data_binary(&value(option)?)?);
                    request.json = true;
                }
                "-G" | "--get" => request.get = true,
                "-b" | "--cookie" => {
                    let cookie = value(option)?;
                    if !cookie.contains('=') {
                        bail!(
                            "curl command: -b '{cookie}' names a cookie file; give the cookies as NAME=VALUE"
                        );
                    }
                    request.cookie = Some(match request.cookie.take() {
                        Some(earlier) => format!("{earlier}; {cookie}"),
                        None => cookie,
                    });
                }
                "-u" | "--user" => {
                    let user = value(option)?;
                    if !user.contains(':') {
                        bail!("curl command: -u '{user}' has no password (curl would ask for it); give USER:PASS");
                    }
                    request.user = Some(user);
                }
                "-A" | "--user-agent" => request.user_agent = Some(value(option)?),
                "-e" | "--referer" => request.referer = Some(value(option)?),
                "-I" | "--head" => request.head = true,
                "--compressed" => request.compressed = true,
                "-k" | "--insecure" => request.insecure = true,
                "--http2" => request.http2 = true,
                "--http2-prior-knowledge" => {
                    request.http2 = true;
                    request.prior_knowledge = true;
                }
                "--http1.1" => request.http2 = false,
                "-0" | "--http1.0" => request.http10 = true,
                "-L" | "--location" => request.redirects = Some(CURL_MAX_REDIRS),
                "--max-redirs" => {
                    let text = value(option)?;
                    request.max_redirs = Some(text.parse().map_err(|_| {
                        anyhow::anyhow!("curl command: --max-redirs '{text}' is not a count")
                    })?);
                }
                known if OUTPUT_ONLY.contains(&known) => {}
                known if OUTPUT_ONLY_WITH_VALUE.contains(&known) => {
                    value(option)?;
                }
                other => refused.push(other.to_string()),
            }
        }
        if !refused.is_empty() {
            bail!(
                "curl command: stampede does not read curl's {} (it reads -X, -H, -b, -d, --data-raw, --data-binary, --data-urlencode, --json, -G, --compressed, -u, -A, -e, -I, -k, --http2, -L)",
                refused.join(", ")
            );
        }
        if request.head && !request.data.is_empty() {
            // curl: "You can only select one HTTP request method!"
            bail!("curl command: -I (HEAD) and data (-d, --data-raw, --json…) are two methods; curl refuses them together");
        }
        request.url = match urls.as_slice() {
            [url] => url.clone(),
            [] => bail!("curl command: the command has no URL"),
            several => bail!(
                "curl command: the command has {} URLs; stampede loads one ({})",
                several.len(),
                several.join(", ")
            ),
        };
        if let (Some(_), Some(most)) = (request.redirects, request.max_redirs) {
            request.redirects = Some(most);
        }
        Ok(request)
    }

    /// The method curl sends: `-X`'s, else HEAD for `-I`, POST with data
    /// (not `-G`), else GET.
    pub fn method(&self) -> &str {
        match &self.method {
            Some(method) => method,
            None if self.head => "HEAD",
            None if !self.data.is_empty() && !self.get => "POST",
            None => "GET",
        }
    }

    /// The data parts joined as curl joins them (`&`).
    fn joined_data(&self) -> Vec<u8> {
        self.data.join(&b'&')
    }

    /// What the command sends, as stampede's template fields hold it (see
    /// [`literal`]): the one reading both `--curl` and `stampede import
    /// curl` use.
    pub fn parts(&self) -> anyhow::Result<CurlParts> {
        let mut url = self.url.clone();
        let data = self.joined_data();
        if self.get && !data.is_empty() {
            let data = String::from_utf8(data.clone())
                .map_err(|_| anyhow::anyhow!("curl command: -G data that is not text"))?;
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&data);
        }
        if self.http2 && !self.prior_knowledge && url.starts_with("http://") {
            // curl --http2 over http asks for an Upgrade to h2c and may stay
            // on HTTP/1.1; stampede speaks h2c only with prior knowledge.
            bail!("curl command: --http2 over http:// is an Upgrade stampede does not send; use --http2-prior-knowledge or https");
        }
        let has = |name: &str| {
            self.headers
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case(name))
        };
        let mut headers = Vec::new();
        let mut add = |name: &str, value: &str| -> anyhow::Result<()> {
            headers.push(parse_header(&format!("{name}: {}", literal(value)))?);
            Ok(())
        };
        let mut body = None;
        if !data.is_empty() && !self.get {
            let text = String::from_utf8(data)
                .map_err(|_| anyhow::anyhow!("curl command: the data is not UTF-8 text"))?;
            body = Some(literal(&text));
            let content_type = if self.json {
                "application/json"
            } else {
                FORM_TYPE
            };
            if !has("content-type") {
                add("Content-Type", content_type)?;
            }
            if self.json && !has("accept") {
                add("Accept", "application/json")?;
            }
        }
        for header in &self.headers {
            add(&header.name, &header.value)?;
        }
        // A Cookie header given with -H is sent instead of -b's cookies,
        // as curl does.
        if let Some(cookie) = self.cookie.as_ref().filter(|_| !has("cookie")) {
            add("Cookie", cookie)?;
        }
        if let Some(referer) = &self.referer {
            add("Referer", referer)?;
        }
        if let Some(user) = &self.user {
            use base64::Engine as _;
            let token = base64::engine::general_purpose::STANDARD.encode(user);
            add("Authorization", &format!("Basic {token}"))?;
        }
        if let Some(agent) = &self.user_agent {
            add("User-Agent", agent)?;
        }
        Ok(CurlParts {
            url: literal(&url),
            method: self.method().to_string(),
            headers,
            body,
        })
    }

    /// Sets what this command sends on `args`; run's own options (load,
    /// output) stay the user's, and headers given with `-H` besides
    /// `--curl` come after curl's.
    pub fn apply(&self, args: &mut RunArgs) -> anyhow::Result<()> {
        let parts = self.parts()?;
        args.url = Some(parts.url);
        args.method = parts.method;
        args.body = parts.body;
        // Run's own -H replaces the command's header of that name.
        let mut headers = parts.headers;
        headers.retain(|h| {
            !args
                .headers
                .iter()
                .any(|own| own.name.eq_ignore_ascii_case(&h.name))
        });
        headers.append(&mut args.headers);
        args.headers = headers;
        if self.compressed && args.transport.compressed.is_none() {
            args.transport.compressed =
                Some(crate::flags::transport_args::DEFAULT_ACCEPT_ENCODING.into());
        }
        args.transport.insecure |= self.insecure;
        args.transport.http2 |= self.http2;
        args.http10 |= self.http10;
        if let Some(most) = self.redirects {
            args.transport.redirects = most;
        }
        Ok(())
    }

    /// The `stampede run` options that send the rest of what the command
    /// asks (those a scenario's steps do not hold).
    pub fn run_options(&self) -> Vec<String> {
        let mut options = Vec::new();
        if self.compressed {
            options.push("--compressed".to_string());
        }
        if self.insecure {
            options.push("--insecure".to_string());
        }
        if self.http2 {
            options.push("--http2".to_string());
        }
        if self.http10 {
            options.push("--http1.0".to_string());
        }
        if let Some(most) = self.redirects {
            options.push(format!("--redirects {most}"));
        }
        options
    }
}

impl CurlRequest {
    /// The request as a scenario's one step (one group of `connections`
    /// users), for `stampede import curl`: what it prints is what `--curl`
    /// sends, with [`CurlRequest::run_options`] on the run's command line.
    pub fn scenario(&self, connections: i64) -> anyhow::Result<ScenarioToml> {
        let parts = self.parts()?;
        let mut step = StepToml::new("request", parts.url);
        if parts.method != "GET" {
            step.method = Some(spanned(parts.method));
        }
        if !parts.headers.is_empty() {
            let mut table = toml::Table::new();
            for header in parts.headers {
                let value = toml::Value::String(header.value);
                if table.insert(header.name.clone(), value).is_some() {
                    bail!("import curl: the header {} is given twice; a scenario step holds one value per name", header.name);
                }
            }
            step.headers = Some(spanned(table));
        }
        step.body = parts.body.map(spanned);
        let mut group = GroupToml::named("curl");
        group.connections = Some(spanned(connections));
        group.step = vec![step];
        Ok(ScenarioToml { group: vec![group] })
    }
}

/// A curl command's request in stampede's template fields.
#[derive(Debug, PartialEq)]
pub struct CurlParts {
    pub url: String,
    pub method: String,
    /// Every header curl sends beyond its defaults, in curl's order of
    /// options: the data's Content-Type (and Accept for `--json`) first.
    pub headers: Vec<Header>,
    pub body: Option<String>,
}

/// `-H`'s value: `Name: value`, or `Name;` for an empty value. `Name:`
/// (curl: remove an internal header) is refused.
fn header(text: &str) -> anyhow::Result<Option<Header>> {
    if let Some(name) = text.strip_suffix(';') {
        if !name.contains(':') {
            return Ok(Some(parse_header(&format!("{name}:"))?));
        }
    }
    match text.split_once(':') {
        Some((name, value)) if value.trim().is_empty() => bail!(
            "curl command: -H '{text}' removes curl's own {name} header; stampede cannot remove its defaults (give a value)"
        ),
        Some(_) => Ok(Some(parse_header(text)?)),
        None => bail!("curl command: -H '{text}' is not a 'Name: value' header"),
    }
}

/// `-d`: `@file` is the file's content without its carriage returns and
/// newlines; anything else as given.
fn data_ascii(value: &str) -> anyhow::Result<Vec<u8>> {
    match value.strip_prefix('@') {
        Some(path) => {
            let mut bytes = read_file(path)?;
            bytes.retain(|b| *b != b'\r' && *b != b'\n');
            Ok(bytes)
        }
        None => Ok(value.as_bytes().to_vec()),
    }
}

/// `--data-binary`: `@file` is the file's content as it is.
fn data_binary(value: &str) -> anyhow::Result<Vec<u8>> {
    match value.strip_prefix('@') {
        Some(path) => read_file(path),
        None => Ok(value.as_bytes().to_vec()),
    }
}

/// `--data-urlencode`: `content`, `=content`, `name=content`, `@file` and
/// `name@file`, the content percent-encoded, a space as `+`
/// (docs/cmdline-opts/data-urlencode.md).
fn data_urlencode(value: &str) -> anyhow::Result<Vec<u8>> {
    let encode = |bytes: &[u8]| -> String {
        bytes
            .iter()
            .map(|&b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                // curl's tool writes a space as '+' (what the real curl sent
                // in tests/compat/compat_frontends.rs run_curl_sends_what_curl_sends).
                b' ' => "+".to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let equals = value.find('=');
    // An '@' before any '=' names a file: `@file` or `name@file`.
    let file_at = value.find('@').filter(|&a| equals.is_none_or(|e| a < e));
    let text = match (file_at, equals) {
        (Some(a), _) => {
            let (name, path) = (&value[..a], &value[a + 1..]);
            let content = encode(&read_file(path)?);
            if name.is_empty() {
                content
            } else {
                format!("{name}={content}")
            }
        }
        (None, Some(0)) => encode(&value.as_bytes()[1..]),
        (None, Some(e)) => format!("{}={}", &value[..e], encode(&value.as_bytes()[e + 1..])),
        (None, None) => encode(value.as_bytes()),
    };
    Ok(text.into_bytes())
}

fn read_file(path: &str) -> anyhow::Result<Vec<u8>> {
    if path == "-" {
        bail!("curl command: data from standard input (@-) cannot be read for every request; put it in a file");
    }
    std::fs::read(path).with_context(|| format!("curl command: reading {path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(command: &str) -> CurlRequest {
        CurlRequest::parse(command).unwrap()
    }

    fn applied(command: &str) -> RunArgs {
        let mut args = RunArgs::for_scenario().unwrap();
        parse(command).apply(&mut args).unwrap();
        args
    }

    fn headers(args: &RunArgs) -> Vec<String> {
        args.headers
            .iter()
            .map(|h| format!("{}: {}", h.name, h.value))
            .collect()
    }

    #[test]
    fn a_copied_chrome_post() {
        let args = applied(
            "curl 'http://127.0.0.1:8080/api/items' \\\n  -H 'accept: application/json' \\\n  -H 'content-type: application/json' \\\n  -b 'session=abc; theme=dark' \\\n  --data-raw $'{\"name\":\"caf\\u00e9\"}' \\\n  --compressed",
        );
        assert_eq!(args.url.as_deref(), Some("http://127.0.0.1:8080/api/items"));
        assert_eq!(args.method, "POST");
        assert_eq!(args.body.as_deref(), Some("{\"name\":\"café\"}"));
        assert_eq!(args.content_type, None, "the command's own content-type");
        assert_eq!(
            headers(&args),
            [
                "accept: application/json",
                "content-type: application/json",
                "Cookie: session=abc; theme=dark"
            ]
        );
        assert!(args.transport.compressed.is_some());
    }

    #[test]
    fn data_parts_join_with_ampersands_and_make_a_form_post() {
        let args = applied(
            "curl http://h/ -d a=1 --data b=2 --data-urlencode 'c=x y&z' --data-urlencode =é",
        );
        assert_eq!(args.method, "POST");
        assert_eq!(args.body.as_deref(), Some("a=1&b=2&c=x+y%26z&%C3%A9"));
        assert_eq!(headers(&args), [format!("Content-Type: {FORM_TYPE}")]);
    }

    #[test]
    fn data_from_a_file_loses_its_newlines_only_with_d() {
        let dir = std::env::temp_dir().join(format!("curl-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("body.txt");
        std::fs::write(&file, "line1\r\nline2\n").unwrap();
        let path = file.display();
        assert_eq!(
            applied(&format!("curl h -d @{path}")).body.as_deref(),
            Some("line1line2")
        );
        assert_eq!(
            applied(&format!("curl h --data-binary @{path}"))
                .body
                .as_deref(),
            Some("line1\r\nline2\n")
        );
        assert_eq!(
            applied(&format!("curl h --data-raw @{path}")).body,
            Some(format!("@{path}"))
        );
        assert_eq!(
            applied(&format!("curl h --data-urlencode n@{path}"))
                .body
                .as_deref(),
            Some("n=line1%0D%0Aline2%0A")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn methods_as_curl_picks_them() {
        assert_eq!(applied("curl h").method, "GET");
        assert_eq!(applied("curl -I h").method, "HEAD");
        assert_eq!(applied("curl -XPUT h -d x").method, "PUT");
        assert_eq!(applied("curl -X DELETE h").method, "DELETE");
        let get = applied("curl -G 'http://h/s?q=1' -d a=2 -d b=3");
        assert_eq!(get.method, "GET");
        assert_eq!(get.url.as_deref(), Some("http://h/s?q=1&a=2&b=3"));
        assert_eq!(get.body, None);
    }

    #[test]
    fn the_other_options_it_reads() {
        let args = applied(
            "curl -k -L --max-redirs 3 -u 'me:secret' -A 'bot/1' -e http://from/ --json '{}' https://h/ -sS -o /dev/null",
        );
        assert!(args.transport.insecure);
        assert_eq!(args.transport.redirects, 3);
        assert_eq!(
            headers(&args),
            [
                "Content-Type: application/json",
                "Accept: application/json",
                "Referer: http://from/",
                "Authorization: Basic bWU6c2VjcmV0",
                "User-Agent: bot/1",
            ]
        );
        assert_eq!(applied("curl -L h").transport.redirects, CURL_MAX_REDIRS);
        assert!(applied("curl --http2 https://h/").transport.http2);
        assert!(
            applied("curl --http2-prior-knowledge http://h/")
                .transport
                .http2
        );
        assert!(applied("curl -0 h").http10);
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let error = |command: &str| CurlRequest::parse(command).unwrap_err().to_string();
        assert!(error("curl -x http://proxy:3128 --retry 3 h").contains("curl's -x, --retry"));
        assert!(error("curl -I -d a=1 h").contains("two methods"));
        assert!(error("wget h").contains("must start with curl"));
        assert!(error("curl").contains("no URL"));
        assert!(error("curl a b").contains("2 URLs"));
        assert!(error("curl -b cookies.txt h").contains("cookie file"));
        assert!(error("curl -u me h").contains("no password"));
        assert!(error("curl -H 'X-Gone:' h").contains("cannot remove"));
        assert!(error("curl h -H").contains("-H needs a value"));
        assert!(error("curl $URL").contains("bash would not run"));
        let mut args = RunArgs::for_scenario().unwrap();
        let refused = parse("curl --http2 http://h/")
            .apply(&mut args)
            .unwrap_err();
        assert!(refused.to_string().contains("Upgrade"), "{refused}");
    }

    #[test]
    fn braces_are_sent_as_they_are_not_as_template_slots() {
        let args = applied("curl 'http://h/{{p}}' -H 'X: {{v}}' --data-raw '{\"a\":\"{{seq}}\"}'");
        assert_eq!(args.url.as_deref(), Some("http://h/\\{{p}}"));
        assert_eq!(
            headers(&args),
            [format!("Content-Type: {FORM_TYPE}"), "X: \\{{v}}".into()]
        );
        assert_eq!(args.body.as_deref(), Some("{\"a\":\"\\{{seq}}\"}"));
    }

    #[test]
    fn an_empty_header_value_with_a_semicolon() {
        assert_eq!(headers(&applied("curl -H 'X-Empty;' h")), ["X-Empty: "]);
    }

    #[test]
    fn a_cookie_header_wins_over_b_and_runs_own_header_over_the_commands() {
        let args = applied("curl -b a=1 -H 'Cookie: c=3' -H 'X: 1' h");
        assert_eq!(headers(&args), ["Cookie: c=3", "X: 1"]);
        let mut args = RunArgs::for_scenario().unwrap();
        args.headers = vec![parse_header("x: 2").unwrap()];
        parse("curl -H 'X: 1' -H 'Y: 1' h")
            .apply(&mut args)
            .unwrap();
        assert_eq!(headers(&args), ["Y: 1", "x: 2"]);
    }
}
