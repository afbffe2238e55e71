//! `stampede run` words rendered from typed [`RunArgs`] and quoted for a
//! shell: the equivalent command line a compat front-end shows for a foreign
//! one ("full result: stampede run URL -c 10 ... --json result.json"). The
//! one way from typed arguments to words, also for what `stampede k8s`
//! sets on its agents' runs; nothing in the program parses them back (the
//! tests do, to prove that the words describe the same run).
//!
//! An option is written only where it differs from `stampede run URL`'s
//! default, in one fixed order (load, request, connection, TLS, exports).

use crate::flags::agent::StartAt;
use crate::flags::run_args::RunArgs;
use stampede_metrics::format_timestamp;
use stampede_plan::format_duration;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The words (without the leading `run`), URL first.
pub fn run_words(args: &RunArgs) -> Vec<String> {
    let url = args.url.clone().unwrap_or_default();
    let defaults = RunArgs::for_url(&url).ok();
    let mut words = Words(Vec::new());
    if args.url.is_some() {
        words.0.push(url);
    }
    let changed = |field: &dyn Fn(&RunArgs) -> String| match &defaults {
        Some(defaults) => field(args) != field(defaults),
        None => true,
    };
    if let Some(path) = &args.targets {
        words.path("--targets", path);
    }
    words.some("-c", args.connections);
    words.some("-t", args.threads);
    words.some("-r", args.rate);
    words.some_duration("-d", args.duration);
    words.some("-n", args.requests);
    if changed(&|a| a.method.clone()) {
        words.pair("-m", &args.method);
    }
    for header in &args.headers {
        words.pair("-H", &format!("{}: {}", header.name, header.value));
    }
    if let Some(body) = &args.body {
        words.pair("-b", body);
    }
    if let Some(path) = &args.body_file {
        words.path("--body-file", path);
    }
    if let Some(content_type) = &args.content_type {
        words.pair("-T", content_type);
    }
    if changed(&|a| format!("{:?}", a.timeout)) {
        words.duration("--timeout", args.timeout);
    }
    if changed(&|a| format!("{:?}", a.connect_timeout)) {
        words.duration("--connect-timeout", args.connect_timeout);
    }
    if let Some(addrs) = &args.source_addrs {
        let list: Vec<String> = addrs.0.iter().map(|a| a.to_string()).collect();
        words.pair("--source-addrs", &list.join(","));
    }
    let transport = &args.transport;
    if let Some(proxy) = &transport.proxy {
        words.pair("--proxy", proxy);
    }
    if let Some(path) = &transport.cert {
        words.path("--cert", path);
    }
    if let Some(path) = &transport.key {
        words.path("--key", path);
    }
    if let Some(version) = transport.tls_min {
        words.pair("--tls-min", version.label());
    }
    if let Some(version) = transport.tls_max {
        words.pair("--tls-max", version.label());
    }
    if !transport.ciphers.is_empty() {
        words.pair("--ciphers", &transport.ciphers.join(","));
    }
    words.flag("--insecure", transport.insecure);
    words.flag("--http2", transport.http2);
    words.flag("--http1.0", args.http10);
    words.flag("--sse", transport.sse);
    words.some_duration("--sse-for", transport.sse_for);
    words.flag("--sse-reconnect", transport.sse_reconnect);
    if let Some(message) = &transport.ws_message {
        words.pair("--ws-message", message);
    }
    words.flag("--ws-binary", transport.ws_binary);
    for name in &transport.ws_subprotocol {
        words.pair("--ws-subprotocol", name);
    }
    words.flag("--ws-deflate", transport.ws_deflate);
    words.some("--ws-rate", transport.ws_rate);
    if let Some(source) = &transport.ws_match_id {
        words.pair("--ws-match-id", source);
    }
    words.flag("--no-keepalive", args.no_keepalive);
    if let Some(path) = &args.exports.csv {
        words.path("--csv", path);
    }
    if let Some(path) = &args.exports.gnuplot {
        words.path("--gnuplot", path);
    }
    if let Some(path) = &args.exports.html {
        words.path("--html", path);
    }
    if let Some(path) = &args.exports.hlog {
        words.path("--hlog", path);
        if args.exports.hlog_interval != std::time::Duration::from_secs(1) {
            let every = stampede_plan::format_duration(args.exports.hlog_interval);
            words.pair("--hlog-interval", &every);
        }
    }
    if let Some(path) = &args.json {
        words.path("--json", path);
    }
    words.flag("--quiet", args.quiet);
    if changed(&|a| a.workload.capture_max.to_string()) {
        words.pair("--capture-max", &args.workload.capture_max.to_string());
    }
    if let Some(StartAt(time)) = &args.agent.start_at {
        words.pair("--start-at", &timestamp_word(*time));
    }
    if let Some(path) = &args.script.script {
        words.path("--script", path);
        // The script's arguments end the line: everything after `--` is theirs.
        if !args.script.script_args.is_empty() {
            words.0.push("--".into());
            words.0.extend(args.script.script_args.iter().cloned());
        }
    }
    words.0
}

/// `words` with `extra` inserted before a script's `--` arguments (which
/// end the line), or at the end.
pub fn with_words_before_script_args(mut words: Vec<String>, extra: &[&str]) -> Vec<String> {
    let at = words.iter().position(|w| w == "--").unwrap_or(words.len());
    words.splice(at..at, extra.iter().map(|w| w.to_string()));
    words
}

/// Words joined for a POSIX shell, single-quoting those that need it.
pub fn shell_words(words: &[String]) -> String {
    let plain = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_./:=,@%+-".contains(&b))
    };
    words
        .iter()
        .map(|w| {
            if plain(w) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words so far, and how each kind of value is written.
struct Words(Vec<String>);

impl Words {
    fn pair(&mut self, flag: &str, value: &str) {
        self.0.push(flag.to_string());
        self.0.push(value.to_string());
    }
    fn flag(&mut self, flag: &str, given: bool) {
        if given {
            self.0.push(flag.to_string());
        }
    }
    fn some<T: ToString>(&mut self, flag: &str, value: Option<T>) {
        if let Some(value) = value {
            self.pair(flag, &value.to_string());
        }
    }
    fn path(&mut self, flag: &str, path: &Path) {
        self.pair(flag, &path.to_string_lossy());
    }
    fn duration(&mut self, flag: &str, duration: Duration) {
        self.pair(flag, &duration_word(duration));
    }
    fn some_duration(&mut self, flag: &str, duration: Option<Duration>) {
        if let Some(duration) = duration {
            self.duration(flag, duration);
        }
    }
}

/// A wall-clock time as `--start-at` reads it back: RFC 3339 in UTC, a
/// whole second without its `.000` (as people type it).
pub fn timestamp_word(time: SystemTime) -> String {
    let text = format_timestamp(time);
    match text.strip_suffix(".000Z") {
        Some(whole_second) => format!("{whole_second}Z"),
        None => text,
    }
}

/// A duration as `parse_duration` reads it back: `format_duration` for whole
/// milliseconds, microseconds below that.
fn duration_word(duration: Duration) -> String {
    if duration.subsec_nanos().is_multiple_of(1_000_000) {
        format_duration(duration)
    } else {
        format!("{}us", duration.as_nanos() as f64 / 1000.0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::flags::run_args::parse_run_args;

    /// The words parse back into the same arguments.
    pub(crate) fn assert_faithful(args: &RunArgs) {
        let words = run_words(args);
        let back = parse_run_args(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
        assert_eq!(format!("{back:?}"), format!("{args:?}"), "{words:?}");
    }

    #[test]
    fn shell_words_quote_only_what_needs_it() {
        let words: Vec<String> = ["http://x:1/a?b=1", "-H", "A: b's", "-c", "10"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert_eq!(
            shell_words(&words),
            "'http://x:1/a?b=1' -H 'A: b'\\''s' -c 10"
        );
    }

    #[test]
    fn defaults_are_not_written() {
        let args = RunArgs::for_url("http://h/").unwrap();
        assert_eq!(run_words(&args), ["http://h/"]);
        assert_faithful(&args);
    }

    #[test]
    fn a_script_and_its_arguments_read_back_last() {
        let mut args = RunArgs::for_url("http://h/").unwrap();
        args.script.script = Some("counter.lua".into());
        args.script.script_args = vec!["a".into(), "-c".into(), "--json".into()];
        assert_faithful(&args);
        let words = with_words_before_script_args(run_words(&args), &["--json", "r.json"]);
        assert_eq!(
            shell_words(&words),
            "http://h/ --script counter.lua --json r.json -- a -c --json"
        );
    }

    #[test]
    fn every_rendered_option_reads_back() {
        let mut args = RunArgs::for_url("http://h:1/a?b=1").unwrap();
        args.connections = Some(20);
        args.threads = Some(2);
        args.rate = Some(1500.5);
        args.duration = Some(Duration::from_millis(2500));
        args.requests = Some(7);
        args.method = "POST".into();
        args.headers = vec![stampede_plan::parse_header("X-A:1").unwrap()];
        args.body_file = Some("body.txt".into());
        args.content_type = Some("application/json".into());
        args.timeout = Duration::from_micros(1500);
        args.connect_timeout = Duration::from_secs(30);
        args.source_addrs = Some(crate::flags::run_args::SourceAddrs(vec![
            "127.0.0.2".parse().unwrap(),
            "127.0.0.3".parse().unwrap(),
        ]));
        args.transport.proxy = Some("p:3128".into());
        args.transport.cert = Some("c.pem".into());
        args.transport.key = Some("c.pem".into());
        args.transport.tls_min = Some(stampede_plan::TlsVersion::Tls12);
        args.transport.tls_max = Some(stampede_plan::TlsVersion::Tls13);
        args.transport.ciphers = vec!["A".into(), "B".into()];
        args.transport.insecure = true;
        args.http10 = true;
        args.transport.sse = true;
        args.transport.sse_for = Some(Duration::from_secs(3));
        args.no_keepalive = true;
        args.exports.csv = Some("out.csv".into());
        args.exports.gnuplot = Some("out.tsv".into());
        args.json = Some("out.json".into());
        args.quiet = true;
        args.agent.start_at = Some(crate::flags::agent::StartAt(
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        ));
        assert_faithful(&args);
        assert_eq!(
            shell_words(&run_words(&args)),
            "'http://h:1/a?b=1' -c 20 -t 2 -r 1500.5 -d 2.5s -n 7 -m POST -H 'X-A: 1' \
             --body-file body.txt -T application/json --timeout 1500us --connect-timeout 30s \
             --source-addrs 127.0.0.2,127.0.0.3 --proxy p:3128 --cert c.pem --key c.pem \
             --tls-min 1.2 --tls-max 1.3 --ciphers A,B --insecure --http1.0 --sse --sse-for 3s --no-keepalive \
             --csv out.csv --gnuplot out.tsv --json out.json --quiet --start-at 2027-01-15T08:00:00Z"
        );
    }

    #[test]
    fn a_start_time_keeps_its_milliseconds_and_drops_only_zero_ones() {
        let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(timestamp_word(whole), "2027-01-15T08:00:00Z");
        let later = whole + Duration::from_millis(250);
        assert_eq!(timestamp_word(later), "2027-01-15T08:00:00.250Z");
    }
}
