//! `stampede webbench`: WebBench 1.5's command line (`-t 60 -c 1000`, `-1`
//! `-2` `--get` `--head` `--options` `--trace`, `-r`), translated into
//! typed `stampede run` arguments and printed in webbench's layout: "Speed=N
//! pages/min, M bytes/sec. Requests: X susceed, Y failed." Like webbench,
//! every request goes on a new connection, HTTP/1.0 unless `-2`.
//!
//! Deliberately not here: `-f` (not waiting for replies) and `-9`
//! (HTTP/0.9) are refused with one line each.

use super::getopt::{split, tokenize, OptSpec};
use super::{base_args, headers, one_url, refuse, usage, Translated, STAMPEDE_JSON};
use stampede_metrics::RunResult;
use stampede_plan::{parse_duration, Setting};
use stampede_report::compat::render_webbench;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

const TOOL: &str = "webbench";

pub const HELP: &str = "\
webbench [option]... URL   (as `stampede webbench`)
  -f|--force               Refused: stampede always reads the reply
  -r|--reload              Send reload request - Pragma: no-cache.
  -t|--time <sec>          Run benchmark for <sec> seconds. Default 30.
  -p|--proxy <server:port> Use proxy server for request.
  -c|--clients <n>         Run <n> HTTP clients at once. Default one.
  -9|--http09              Refused: HTTP/0.9 requests are not supported
  -1|--http10              Use HTTP/1.0 protocol (the default).
  -2|--http11              Use HTTP/1.1 protocol.
  --get                    Use GET request method.
  --head                   Use HEAD request method.
  --options                Use OPTIONS request method.
  --trace                  Use TRACE request method.
  -?|-h|--help             This information.
  -V|--version             Display program version.
  --stampede-json <path>   stampede only: also write the full JSON result to <path>

Example:
  stampede webbench -t 60 -c 1000 http://127.0.0.1:3000/index.html";

const SPECS: &[OptSpec] = &[
    OptSpec::both("force", 'f', "force", false),
    OptSpec::both("reload", 'r', "reload", false),
    OptSpec::both("time", 't', "time", true),
    OptSpec::both("proxy", 'p', "proxy", true),
    OptSpec::both("clients", 'c', "clients", true),
    OptSpec::both("http09", '9', "http09", false),
    OptSpec::both("http10", '1', "http10", false),
    OptSpec::both("http11", '2', "http11", false),
    OptSpec::long("get", "get", false),
    OptSpec::long("head", "head", false),
    OptSpec::long("options", "options", false),
    OptSpec::long("trace", "trace", false),
    OptSpec::both("help", '?', "help", false),
    OptSpec::short("help", 'h', false),
    OptSpec::both("version", 'V', "version", false),
    STAMPEDE_JSON,
];

type Parsed = super::Parsed<WebbenchOptions>;

#[derive(Debug, PartialEq)]
struct WebbenchOptions {
    url: String,
    time: Duration,
    clients: u64,
    reload: bool,
    /// 1 for HTTP/1.0, 2 for HTTP/1.1 (webbench's `http10` variable).
    http: u8,
    method: &'static str,
    /// -p server:port.
    proxy: Option<String>,
    stampede_json: Option<PathBuf>,
}

fn parse(words: &[String]) -> anyhow::Result<Parsed> {
    let tokens = tokenize(SPECS, words).map_err(|e| usage(TOOL, e))?;
    let mut o = WebbenchOptions {
        url: String::new(),
        time: Duration::from_secs(30),
        clients: 1,
        reload: false,
        http: 1,
        method: "GET",
        proxy: None,
        stampede_json: None,
    };
    let (options, urls) = split(tokens);
    for (key, spelled, value) in options {
        let f = spelled.as_str();
        match key {
            "help" => return Ok(Parsed::Help),
            "version" => return Ok(Parsed::Version),
            "force" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "stampede always reads the reply (its engine has no send-and-forget mode, and counts need answers)",
                ))
            }
            "proxy" => o.proxy = Some(value),
            "http09" => {
                return Err(refuse(
                    TOOL,
                    f,
                    "HTTP/0.9 requests are not supported; -1 (HTTP/1.0) is the default",
                ))
            }
            "reload" => o.reload = true,
            "time" => {
                o.time = match parse_duration(&value) {
                    Ok(d) if !d.is_zero() => d,
                    _ => return Err(usage(TOOL, format!("Error in option --time {value}."))),
                }
            }
            "clients" => {
                o.clients = match value.trim().parse::<u64>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(usage(TOOL, format!("Error in option --clients {value}."))),
                }
            }
            "http10" => o.http = 1,
            "http11" => o.http = 2,
            "get" => o.method = "GET",
            "head" => o.method = "HEAD",
            "options" => o.method = "OPTIONS",
            "trace" => o.method = "TRACE",
            "stampede-json" => o.stampede_json = Some(PathBuf::from(value)),
            other => return Err(usage(TOOL, format!("option {other} is not handled"))),
        }
    }
    o.url = one_url(TOOL, urls, "missing URL")?;
    // webbench upgrades the protocol for methods HTTP/1.0 lacks.
    if matches!(o.method, "OPTIONS" | "TRACE") {
        o.http = 2;
    }
    Ok(Parsed::Run(o))
}

/// webbench's flag for a plan setting, for errors.
fn webbench_flag(setting: Setting) -> Option<&'static str> {
    match setting {
        Setting::Connections => Some("-c"),
        Setting::Duration => Some("-t"),
        Setting::Proxy => Some("-p"),
        Setting::Http10 => Some("-1"),
        _ => None,
    }
}

impl WebbenchOptions {
    /// A new connection per request, as webbench does (it closes after each
    /// reply, sending `Connection: close` under HTTP/1.1).
    fn translate(&self) -> anyhow::Result<Translated> {
        let mut args = base_args(TOOL, &self.url)?;
        args.connections = Some(usize::try_from(self.clients).unwrap_or(usize::MAX));
        args.duration = Some(self.time);
        args.method = self.method.to_string();
        args.no_keepalive = true;
        args.http10 = self.http == 1;
        args.transport.proxy = self.proxy.clone();
        if self.reload {
            let reload = ["Pragma: no-cache", "Cache-Control: no-cache"].map(String::from);
            args.headers = headers(TOOL, "-r", &reload)?;
        }
        Ok(Translated {
            tool: TOOL,
            args,
            flags: webbench_flag,
            stampede_json: self.stampede_json.clone(),
            quiet: false,
        })
    }
}

fn write_header(o: &WebbenchOptions, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Webbench - Simple Web Benchmark (stampede {}, reading webbench's command line)",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out)?;
    let version = if o.http == 2 { " (using HTTP/1.1)" } else { "" };
    writeln!(out, "Benchmarking: {} {}{version}", o.method, o.url)?;
    let clients = if o.clients == 1 {
        "1 client".to_string()
    } else {
        format!("{} clients", o.clients)
    };
    let seconds = o.time.as_secs_f64();
    let proxy = match &o.proxy {
        Some(proxy) => format!(", via proxy server {proxy}"),
        None => String::new(),
    };
    let reload = if o.reload { ", forcing reload" } else { "" };
    writeln!(out, "{clients}, running {seconds} sec{proxy}{reload}.")
}

/// `stampede webbench WORDS...`.
pub fn execute(words: Vec<String>) -> anyhow::Result<i32> {
    super::execute(parse(&words)?, HELP, "webbench")
}

impl super::FrontEnd for WebbenchOptions {
    fn translate(&self) -> anyhow::Result<Translated> {
        WebbenchOptions::translate(self)
    }
    fn write_header(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        Ok(write_header(self, out)?)
    }
    /// webbench's check before the benchmark.
    fn unable_to_connect(&self, _result: &RunResult) -> Option<String> {
        Some("\nConnect to server failed. Aborting benchmark.".into())
    }
    fn write_report(
        &self,
        result: &RunResult,
        _watch: &mut super::Watch,
        closing: &str,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        Ok(render_webbench(result, closing, out)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn run_words(line: &str) -> String {
        match parse(&words(line)).unwrap() {
            Parsed::Run(o) => {
                let args = o.translate().unwrap().args;
                crate::flags::run_words::tests::assert_faithful(&args);
                crate::flags::run_words::run_words(&args).join(" ")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_seed_line_translates() {
        assert_eq!(
            run_words("-t 60 -c 1000 http://127.0.0.1:3000/index.html"),
            "http://127.0.0.1:3000/index.html -c 1000 -d 60s --http1.0 --no-keepalive"
        );
    }

    #[test]
    fn versions_methods_and_reload() {
        assert_eq!(
            run_words("http://h/"),
            "http://h/ -c 1 -d 30s --http1.0 --no-keepalive"
        );
        assert!(!run_words("-2 http://h/").contains("--http1.0"));
        assert!(!run_words("-1 --options http://h/").contains("--http1.0"));
        assert!(run_words("--trace http://h/").contains("-m TRACE"));
        assert!(run_words("-12 --head http://h/").ends_with("-m HEAD --no-keepalive"));
        assert!(run_words("-rt5 -c3 http://h/").ends_with(
            "-c 3 -d 5s -H Pragma: no-cache -H Cache-Control: no-cache --http1.0 --no-keepalive"
        ));
    }

    #[test]
    fn refusals_and_help() {
        let err = |line: &str| parse(&words(line)).unwrap_err().to_string();
        assert!(err("-f http://h/").starts_with("webbench -f: not supported"));
        assert!(run_words("-p p:1 http://h/").ends_with("--proxy p:1 --http1.0 --no-keepalive"));
        assert!(err("-9 http://h/").starts_with("webbench -9: not supported"));
        assert!(err("-c x http://h/").contains("Error in option --clients x."));
        assert!(err("-t").contains("option -t needs a value"));
        for help in ["-?", "-h", "--help"] {
            assert_eq!(parse(&words(help)).unwrap(), Parsed::Help);
        }
        assert_eq!(parse(&words("-V")).unwrap(), Parsed::Version);
    }
}
