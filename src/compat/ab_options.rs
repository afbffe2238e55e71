//! ab's options as ab reads them: the help text, the option table (seed
//! 003's list) and the parse into [`AbOptions`], every option honoured or
//! refused with one line. The translation into `stampede run` arguments
//! and the report are ab.rs and stampede-report's compat/ab_*.rs.

use super::getopt::{split, tokenize, OptSpec};
use super::{base64, one_url, refuse, usage, STAMPEDE_JSON};
use stampede_plan::{parse_duration, TlsVersion};
use stampede_report::compat::OPENSSL_CIPHERS;
use std::path::PathBuf;
use std::time::Duration;

pub(super) const TOOL: &str = "ab";

/// ab's `-t` implies this many requests at most (ab's MAX_REQUESTS).
pub(super) const TIMELIMIT_REQUESTS: u64 = 50_000;

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
    -Z ciphersuite  OpenSSL cipher names (as rustls has them), : separated
    -f protocol     TLS1.2, TLS1.3 or ALL (rustls has no older protocols)
    -E certfile     Client certificate and its key, both in this PEM file
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
pub(super) type Parsed = super::Parsed<Box<AbOptions>>;

/// ab's options, read.
#[derive(Debug, Default, PartialEq)]
pub(super) struct AbOptions {
    pub(super) url: String,
    pub(super) requests: Option<u64>,
    pub(super) concurrency: Option<u64>,
    pub(super) timelimit: Option<Duration>,
    pub(super) timeout: Option<Duration>,
    pub(super) post_file: Option<String>,
    pub(super) put_file: Option<String>,
    pub(super) content_type: Option<String>,
    pub(super) verbosity: u32,
    pub(super) html: bool,
    /// -x, -y, -z: attributes for the HTML tables.
    pub(super) table_attrs: Option<String>,
    pub(super) tr_attrs: Option<String>,
    pub(super) td_attrs: Option<String>,
    pub(super) head: bool,
    /// -C, -H, -A, -P, in order, as `Name: value`.
    pub(super) headers: Vec<String>,
    pub(super) keepalive: bool,
    pub(super) no_percentiles: bool,
    pub(super) no_confidence: bool,
    /// -l: report the document length as "Variable".
    pub(super) variable_length: bool,
    pub(super) quiet: bool,
    pub(super) gnuplot: Option<String>,
    pub(super) csv: Option<String>,
    /// -X proxy:port.
    pub(super) proxy: Option<String>,
    /// -B address.
    pub(super) source_address: Option<String>,
    /// -E: a PEM file holding the client certificate and its key.
    pub(super) client_cert: Option<String>,
    /// -f: the one TLS version to speak (`1.2`/`1.3`), or None for ALL.
    pub(super) tls_version: Option<TlsVersion>,
    /// -Z: the rustls names of the OpenSSL cipher suites given.
    pub(super) ciphers: Option<String>,
    pub(super) method: Option<String>,
    pub(super) stampede_json: Option<PathBuf>,
}

/// ab's `-f`: TLS1.2, TLS1.3 or ALL; older protocols are refused (rustls
/// speaks only 1.2 and 1.3).
fn ab_tls_version(value: &str) -> anyhow::Result<Option<TlsVersion>> {
    match value.to_ascii_uppercase().as_str() {
        "ALL" => Ok(None),
        "TLS1.2" => Ok(Some(TlsVersion::Tls12)),
        "TLS1.3" => Ok(Some(TlsVersion::Tls13)),
        _ => Err(refuse(
            TOOL,
            &format!("-f {value}"),
            "stampede (rustls) speaks only TLS1.2 and TLS1.3 (or ALL)",
        )),
    }
}

/// ab's `-Z` (an OpenSSL cipher list, `:` or `,` separated) as `--ciphers`.
fn openssl_ciphers(value: &str) -> anyhow::Result<String> {
    let mut names = Vec::new();
    for name in value.split([':', ',']).filter(|n| !n.trim().is_empty()) {
        let Some((_, rustls_name)) = OPENSSL_CIPHERS
            .iter()
            .find(|(openssl, _)| openssl.eq_ignore_ascii_case(name.trim()))
        else {
            let known: Vec<&str> = OPENSSL_CIPHERS.iter().map(|(o, _)| *o).collect();
            // The whole list as the user typed it (quoted: `!` and `+` are
            // common in OpenSSL's), then the name that has no suite.
            return Err(refuse(
                TOOL,
                &crate::flags::run_words::shell_words(&["-Z".to_string(), value.to_string()]),
                &format!(
                    "no rustls suite for {} (known: {})",
                    name.trim(),
                    known.join(":")
                ),
            ));
        };
        names.push(*rustls_name);
    }
    Ok(names.join(","))
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

pub(super) fn parse(words: &[String]) -> anyhow::Result<Parsed> {
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
            "Z" => o.ciphers = Some(openssl_ciphers(&value)?),
            "f" => o.tls_version = ab_tls_version(&value)?,
            "E" => o.client_cert = Some(value),
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
            // stampede never counts a varying body length as a failure, what
            // -l asks; what is left of -l is ab's "Document Length: Variable".
            "l" => o.variable_length = true,
            // stampede never stops on a receive error, which is what -r asks.
            "r" => {}
            "g" => o.gnuplot = Some(value),
            "e" => o.csv = Some(value),
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
