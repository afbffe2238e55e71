//! `stampede ab`: ApacheBench's command line (the option list of seed 003),
//! read with ab's syntax (`-n1000`, `-kc 10`), translated into `stampede
//! run` words, run by stampede's engine and printed in ab's layout
//! (ab_report.rs). Every ab option is honoured or refused with one line.
//!
//! Deliberately not here: the report layout, the engine, TLS and proxies.

use super::ab_report::{self, AbView};
use super::getopt::{split, tokenize, OptSpec};
use super::{base64, one_url, refuse, usage, Translated, STAMPEDE_JSON};
use stampede_metrics::RunResult;
use stampede_plan::{parse_duration, Target};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

const TOOL: &str = "ab";

/// ab's `-t` implies this many requests at most (ab's MAX_REQUESTS).
const TIMELIMIT_REQUESTS: u64 = 50_000;

pub const HELP: &str = "\
Usage: stampede ab [options] [http://]hostname[:port]/path
ApacheBench's options, run by stampede's engine (docs/compat.md has the mapping).
Options are:
    -n requests     Number of requests to perform (exactly; default 1)
    -c concurrency  Number of multiple requests to make at a time
    -t timelimit    Seconds to max. to spend on benchmarking
                    This implies -n 50000
    -s timeout      Seconds to max. wait for each response (and connect)
                    Default is 30 seconds
    -b windowsize   Refused: TCP buffer sizes are not configurable in stampede
    -B address      Address to bind to when making outgoing connections
    -p postfile     File containing data to POST. Remember also to set -T
    -u putfile      File containing data to PUT. Remember also to set -T
    -T content-type Content-type header to use for POST/PUT data, eg.
                    'application/x-www-form-urlencoded'
                    Default is 'text/plain'
    -v verbosity    How much troubleshooting info to print: 2 or 3 add
                    status code and error counts; 4 and above are refused
    -w              Print out results in HTML tables
    -i              Use HEAD instead of GET
    -x attributes   String to insert as table attributes (with -w)
    -y attributes   String to insert as tr attributes (with -w)
    -z attributes   String to insert as td or th attributes (with -w)
    -C attribute    Add cookie, eg. 'Apache=1234'. (repeatable)
    -H attribute    Add Arbitrary header line, eg. 'Accept-Encoding: gzip'
                    Inserted after all normal header lines. (repeatable)
    -A attribute    Add Basic WWW Authentication, the attributes
                    are a colon separated username and password.
    -P attribute    Add Basic Proxy Authentication, the attributes
                    are a colon separated username and password.
    -X proxy:port   Proxyserver and port number to use
    -V              Print version number and exit
    -k              Use HTTP KeepAlive feature
    -d              Do not show percentiles served table.
    -S              Do not show confidence estimators and warnings.
    -q              Do not show progress when doing more than 150 requests
    -l              Accept variable document length (stampede always does)
    -g filename     Output collected data to gnuplot format file.
    -e filename     Output CSV file with percentages served
    -r              Don't exit on socket receive errors (stampede never does)
    -m method       Method name
    -h, --help      Display usage information (this message)
    -I              Refused: stampede always sends SNI (https URLs work without flags)
    -Z ciphersuite  Refused: cipher suites are rustls's defaults, not selectable
    -f protocol     Refused: TLS versions are rustls's (1.2, 1.3), not selectable
    -E certfile     Refused: client certificates are not supported
stampede only:
    --stampede-json PATH  Also write stampede's full JSON result to PATH

Example:
  stampede ab -n 1000000 -c 200 -k http://127.0.0.1:8888/kit";

const SPECS: &[OptSpec] = &[
    OptSpec::short("n", 'n', true),
    OptSpec::short("c", 'c', true),
    OptSpec::short("t", 't', true),
    OptSpec::short("s", 's', true),
    OptSpec::short("b", 'b', true),
    OptSpec::short("B", 'B', true),
    OptSpec::short("p", 'p', true),
    OptSpec::short("u", 'u', true),
    OptSpec::short("T", 'T', true),
    OptSpec::short("v", 'v', true),
    OptSpec::short("w", 'w', false),
    OptSpec::short("i", 'i', false),
    OptSpec::short("x", 'x', true),
    OptSpec::short("y", 'y', true),
    OptSpec::short("z", 'z', true),
    OptSpec::short("C", 'C', true),
    OptSpec::short("H", 'H', true),
    OptSpec::short("A", 'A', true),
    OptSpec::short("P", 'P', true),
    OptSpec::short("X", 'X', true),
    OptSpec::short("V", 'V', false),
    OptSpec::short("k", 'k', false),
    OptSpec::short("d", 'd', false),
    OptSpec::short("S", 'S', false),
    OptSpec::short("q", 'q', false),
    OptSpec::short("l", 'l', false),
    OptSpec::short("g", 'g', true),
    OptSpec::short("e", 'e', true),
    OptSpec::short("r", 'r', false),
    OptSpec::short("m", 'm', true),
    OptSpec::both("h", 'h', "help", false),
    OptSpec::short("I", 'I', false),
    OptSpec::short("Z", 'Z', true),
    OptSpec::short("f", 'f', true),
    OptSpec::short("E", 'E', true),
    STAMPEDE_JSON,
];

/// What the command line asks for.
type Parsed = super::Parsed<Box<AbOptions>>;

/// ab's options, read.
#[derive(Debug, Default, PartialEq)]
struct AbOptions {
    url: String,
    requests: Option<u64>,
    concurrency: Option<u64>,
    timelimit: Option<Duration>,
    timeout: Option<Duration>,
    post_file: Option<String>,
    put_file: Option<String>,
    content_type: Option<String>,
    verbosity: u32,
    html: bool,
    /// -x, -y, -z: attributes for the HTML tables.
    table_attrs: Option<String>,
    tr_attrs: Option<String>,
    td_attrs: Option<String>,
    head: bool,
    /// -C, -H, -A, -P, in order, as `Name: value`.
    headers: Vec<String>,
    keepalive: bool,
    no_percentiles: bool,
    no_confidence: bool,
    quiet: bool,
    gnuplot: Option<String>,
    csv: Option<String>,
    /// -X proxy:port.
    proxy: Option<String>,
    /// -B address.
    source_address: Option<String>,
    method: Option<String>,
    stampede_json: Option<PathBuf>,
}

fn positive(flag: &str, value: &str) -> anyhow::Result<u64> {
    match value.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(usage(
            TOOL,
            format!("{flag} needs a whole number above zero, not '{value}'"),
        )),
    }
}

fn seconds(flag: &str, value: &str) -> anyhow::Result<Duration> {
    match parse_duration(value) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(usage(
            TOOL,
            format!("{flag} needs seconds above zero, not '{value}'"),
        )),
    }
}

/// Refuses `-e`/`-g` when `stampede run` has no such export in this build.
fn export(flag: &str, run_flag: &str, value: String) -> anyhow::Result<Option<String>> {
    if super::run_accepts(run_flag) {
        Ok(Some(value))
    } else {
        Err(refuse(
            TOOL,
            flag,
            &format!("this build of stampede has no {run_flag} export yet"),
        ))
    }
}

fn parse(words: &[String]) -> anyhow::Result<Parsed> {
    let tokens = tokenize(SPECS, words).map_err(|e| usage(TOOL, e))?;
    let mut o = AbOptions::default();
    let (options, urls) = split(tokens);
    for (key, spelled, value) in options {
        let f = spelled.as_str();
        match key {
            "h" => return Ok(Parsed::Help),
            "V" => return Ok(Parsed::Version),
            "n" => o.requests = Some(positive(f, &value)?),
            "c" => o.concurrency = Some(positive(f, &value)?),
            "t" => o.timelimit = Some(seconds(f, &value)?),
            "s" => o.timeout = Some(seconds(f, &value)?),
            "b" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "TCP buffer sizes are not configurable in stampede's engine",
                ))
            }
            "B" => o.source_address = Some(value),
            "X" => o.proxy = Some(value),
            "I" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "stampede always sends SNI (the URL's host; `stampede run --sni NAME` to change it)",
                ))
            }
            "Z" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "cipher suites are rustls's defaults and cannot be chosen",
                ))
            }
            "f" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "TLS versions are rustls's (TLS 1.2 and 1.3) and cannot be chosen",
                ))
            }
            "E" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "client certificates are not supported by stampede yet",
                ))
            }
            "p" => o.post_file = Some(value),
            "u" => o.put_file = Some(value),
            "T" => o.content_type = Some(value),
            "v" => {
                o.verbosity = value
                    .trim()
                    .parse()
                    .map_err(|_| usage(TOOL, format!("-v needs a number, not '{value}'")))?;
                if o.verbosity >= 4 {
                    return Err(refuse(
                        TOOL,
                        &format!("-v {}", o.verbosity),
                        "levels 4 and up print every request's headers, which stampede does not; -v 2 prints status and error counts",
                    ));
                }
            }
            "w" => o.html = true,
            "x" => o.table_attrs = Some(value),
            "y" => o.tr_attrs = Some(value),
            "z" => o.td_attrs = Some(value),
            "i" => o.head = true,
            "C" => o.headers.push(format!("Cookie: {value}")),
            "H" => o.headers.push(value),
            "A" => o
                .headers
                .push(format!("Authorization: Basic {}", base64(value.as_bytes()))),
            "P" => o.headers.push(format!(
                "Proxy-Authorization: Basic {}",
                base64(value.as_bytes())
            )),
            "k" => o.keepalive = true,
            "d" => o.no_percentiles = true,
            "S" => o.no_confidence = true,
            "q" => o.quiet = true,
            // stampede never counts a varying body length as a failure and
            // never stops on a receive error, which is what these two ask.
            "l" | "r" => {}
            "g" => o.gnuplot = export(f, "--gnuplot", value)?,
            "e" => o.csv = export(f, "--csv", value)?,
            "m" => o.method = Some(value),
            "stampede-json" => o.stampede_json = Some(PathBuf::from(value)),
            // Every key of SPECS is matched above; a new one must be handled.
            other => return Err(usage(TOOL, format!("option {other} is not handled"))),
        }
    }
    o.url = one_url(TOOL, urls, "a URL is required")?;
    let bodies = [o.head, o.post_file.is_some(), o.put_file.is_some()];
    if bodies.iter().filter(|b| **b).count() > 1 {
        return Err(usage(TOOL, "only one of -i, -p and -u can be used"));
    }
    Ok(Parsed::Run(Box::new(o)))
}

impl AbOptions {
    /// Notes for flags that are honoured but only matter with another one.
    fn notes(&self) -> Vec<&'static str> {
        let mut notes = Vec::new();
        let attrs =
            self.table_attrs.is_some() || self.tr_attrs.is_some() || self.td_attrs.is_some();
        if attrs && !self.html {
            notes.push("-x, -y and -z only apply to the HTML tables of -w (as in ab)");
        }
        notes
    }

    /// The requests ab would send (`-t` alone implies 50,000).
    fn requests(&self) -> u64 {
        match (self.requests, self.timelimit) {
            (Some(n), _) => n,
            (None, Some(_)) => TIMELIMIT_REQUESTS,
            (None, None) => 1,
        }
    }

    /// ab's "Completed N requests" step, if it prints them.
    fn heartbeat(&self) -> Option<u64> {
        super::watch::ab_heartbeat(self.requests(), self.quiet)
    }

    fn method(&self) -> &str {
        match (&self.method, self.head, &self.post_file, &self.put_file) {
            (Some(method), ..) => method,
            (None, true, ..) => "HEAD",
            (None, _, Some(_), _) => "POST",
            (None, _, _, Some(_)) => "PUT",
            _ => "GET",
        }
    }

    /// The same run as `stampede run` words. ab speaks HTTP/1.0 (with
    /// `Connection: Keep-Alive` under -k) and opens a connection per request
    /// without -k; -s bounds both the connect and the response.
    fn translate(&self) -> Translated {
        let mut w: Vec<String> = vec![self.url.clone()];
        let mut push = |flag: &str, value: String| {
            w.push(flag.to_string());
            w.push(value);
        };
        push("-n", self.requests().to_string());
        push("-c", self.concurrency.unwrap_or(1).to_string());
        if let Some(limit) = self.timelimit {
            push("-d", stampede_plan::format_duration(limit));
        }
        let timeout =
            stampede_plan::format_duration(self.timeout.unwrap_or(Duration::from_secs(30)));
        push("--timeout", timeout.clone());
        push("--connect-timeout", timeout);
        push("-m", self.method().to_string());
        for header in &self.headers {
            push("-H", header.clone());
        }
        if let Some(file) = self.post_file.as_ref().or(self.put_file.as_ref()) {
            push("--body-file", file.clone());
            push(
                "-T",
                self.content_type
                    .clone()
                    .unwrap_or_else(|| "text/plain".into()),
            );
        } else if let Some(content_type) = &self.content_type {
            push("-T", content_type.clone());
        }
        if let Some(path) = &self.csv {
            push("--csv", path.clone());
        }
        if let Some(path) = &self.gnuplot {
            push("--gnuplot", path.clone());
        }
        if let Some(proxy) = &self.proxy {
            push("--proxy", proxy.clone());
        }
        if let Some(address) = &self.source_address {
            push("--source-addrs", address.clone());
        }
        // ab does not verify server certificates; neither does its front-end.
        if self.url.to_ascii_lowercase().starts_with("https://") {
            w.push("--insecure".into());
        }
        w.push("--http1.0".into());
        if !self.keepalive {
            w.push("--no-keepalive".into());
        }
        Translated {
            tool: TOOL,
            run_words: w,
            stampede_json: self.stampede_json.clone(),
            // ab's own progress ("Completed N requests", see watch.rs)
            // takes the place of stampede's progress line and live view.
            quiet: true,
        }
    }

    fn view(&self) -> AbView {
        AbView {
            keepalive: self.keepalive,
            percentiles: !self.no_percentiles,
            confidence: !self.no_confidence,
            verbosity: self.verbosity,
            table_attrs: self.table_attrs.clone().unwrap_or_default(),
            tr_attrs: self.tr_attrs.clone().unwrap_or_default(),
            td_attrs: self
                .td_attrs
                .clone()
                .unwrap_or_else(|| "bgcolor=white".into()),
        }
    }
}

/// `stampede ab WORDS...`.
pub fn execute(words: Vec<String>) -> anyhow::Result<i32> {
    super::execute(parse(&words)?, HELP, "ApacheBench")
}

impl super::FrontEnd for AbOptions {
    fn notes(&self) -> Vec<String> {
        AbOptions::notes(self)
            .into_iter()
            .map(str::to_string)
            .collect()
    }
    fn translate(&self) -> Translated {
        AbOptions::translate(self)
    }
    fn watch(&self) -> super::WatchSpec {
        super::WatchSpec {
            heartbeat: self.heartbeat(),
            ..super::WatchSpec::default()
        }
    }
    /// ab: "apr_socket_connect(): Connection refused (111)".
    fn unable_to_connect(&self, result: &RunResult) -> Option<String> {
        let (reason, code) = super::first_error(result);
        Some(match code {
            Some(code) => format!("apr_socket_connect(): {reason} ({code})"),
            None => format!("apr_socket_connect(): {reason}"),
        })
    }
    fn write_header(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        if !self.html {
            let target = Target::parse(&self.url)?;
            ab_report::write_preamble(&target, self.heartbeat().is_some(), out)?;
        }
        Ok(())
    }
    fn write_report(
        &self,
        result: &RunResult,
        _watch: &mut super::Watch,
        closing: &str,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        let target = Target::parse(&self.url)?;
        let view = self.view();
        // ab's last progress word: on stderr after a heartbeat, else on stdout.
        if self.heartbeat().is_some() {
            let done = result.requests.completed + result.requests.errors;
            eprintln!("Finished {done} requests");
        } else if !self.html {
            writeln!(out, "..done")?;
        }
        if self.html {
            ab_report::render_html(result, &target, &view, closing, out)?;
        } else {
            ab_report::render_text(result, &target, &view, closing, out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(line: &str) -> AbOptions {
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        match parse(&words).unwrap() {
            Parsed::Run(o) => *o,
            other => panic!("{other:?}"),
        }
    }

    fn run_words(line: &str) -> String {
        options(line).translate().run_words.join(" ")
    }

    #[test]
    fn the_seed_lines_translate() {
        assert_eq!(
            run_words("-n 1000000 -c 200 -k http://h:8888/kit"),
            "http://h:8888/kit -n 1000000 -c 200 --timeout 30s --connect-timeout 30s -m GET --http1.0"
        );
        assert_eq!(
            run_words("-c 500 -n 1000000 http://h/view"),
            "http://h/view -n 1000000 -c 500 --timeout 30s --connect-timeout 30s -m GET --http1.0 --no-keepalive"
        );
    }

    #[test]
    fn attached_values_and_clusters() {
        let o = options("-n1000 -kqc10 -s5 http://h/");
        assert_eq!(
            (o.requests, o.concurrency, o.keepalive, o.quiet),
            (Some(1000), Some(10), true, true)
        );
        assert_eq!(o.timeout, Some(Duration::from_secs(5)));
    }

    #[test]
    fn timelimit_implies_50000_unless_n_is_given() {
        assert!(run_words("-t 3 http://h/").contains("-n 50000 -c 1 -d 3s"));
        assert!(run_words("-t 3 -n 10 http://h/").contains("-n 10 -c 1 -d 3s"));
        assert!(run_words("http://h/").contains("-n 1 -c 1"));
    }

    #[test]
    fn bodies_methods_and_headers() {
        let words = run_words("-p body.txt -T application/json http://h/");
        assert!(words.contains("-m POST"), "{words}");
        assert!(
            words.contains("--body-file body.txt -T application/json"),
            "{words}"
        );
        assert!(run_words("-u f http://h/").contains("--body-file f -T text/plain"));
        assert!(run_words("-i http://h/").contains("-m HEAD"));
        assert!(run_words("-m PATCH -p f http://h/").contains("-m PATCH"));
        let o = options("-C a=1 -A user:pass -P p:q http://h/");
        assert_eq!(
            o.headers,
            vec![
                "Cookie: a=1",
                "Authorization: Basic dXNlcjpwYXNz",
                "Proxy-Authorization: Basic cDpx"
            ]
        );
    }

    #[test]
    fn refusals_and_usage_errors_name_the_flag() {
        let err = |line: &str| {
            let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            parse(&words).unwrap_err().to_string()
        };
        assert!(err("-b 1024 http://h/").starts_with("ab -b: not supported"));
        assert!(err("-I https://h/").starts_with("ab -I: not supported"));
        assert!(err("-E c.pem https://h/").starts_with("ab -E: not supported"));
        assert!(err("-Z x http://h/").starts_with("ab -Z: not supported"));
        assert!(err("-v 4 http://h/").starts_with("ab -v 4: not supported"));
        assert!(err("-i -p f http://h/").contains("only one of -i, -p and -u"));
        assert!(err("-n 0 http://h/").contains("-n needs a whole number"));
        assert!(err("-n").contains("option -n needs a value"));
        assert!(err("-c 2").contains("a URL is required"));
        assert!(err("-j http://h/").contains("unknown option -j"));
    }

    #[test]
    fn proxy_source_address_and_https() {
        let words = run_words("-X p:3128 -B 127.0.0.2 https://h/");
        assert!(
            words.contains("--proxy p:3128 --source-addrs 127.0.0.2 --insecure --http1.0"),
            "{words}"
        );
        assert!(!run_words("http://h/").contains("--insecure"));
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse(&["-h".to_string()]).unwrap(), Parsed::Help);
        assert_eq!(parse(&["-V".to_string()]).unwrap(), Parsed::Version);
    }
}
