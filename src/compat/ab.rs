//! `stampede ab`: ApacheBench's command line (the option list of seed 003),
//! read with ab's syntax (`-n1000`, `-kc 10`), translated into typed
//! `stampede run` arguments, run by stampede's engine and printed in ab's layout
//! (stampede-report's compat/ab_*.rs). Every ab option is honoured or refused with one line
//! (ab_options.rs reads them).
//!
//! Deliberately not here: the report layout, the engine, TLS and proxies.

pub use super::ab_options::HELP;
use super::ab_options::{parse, AbOptions, TIMELIMIT_REQUESTS, TOOL};
use super::{base_args, headers, usage, Translated};
use crate::flags::run_args::SourceAddrs;
use stampede_metrics::RunResult;
use stampede_plan::{Setting, Target};
use stampede_report::compat::{render_ab_html, render_ab_text, write_ab_preamble, AbView};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// ab is one thread with one event loop (ab.c's `test()` polls every
/// connection from `main`); its front-end is too, so that a server on the
/// same machine keeps the CPUs ab would have left it, and the tails compare.
const ONE_THREAD_NOTE: &str = "one load thread, as ab has; `stampede run -t N URL` uses more";

fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// ab's flag for a plan setting, for errors.
fn ab_flag(setting: Setting) -> Option<&'static str> {
    match setting {
        Setting::Connections => Some("-c"),
        Setting::Requests => Some("-n"),
        Setting::Duration => Some("-t"),
        Setting::Timeouts => Some("-s"),
        Setting::Tls => Some("-E, -f, -Z"),
        Setting::TlsVersion => Some("-f"),
        Setting::Proxy => Some("-X"),
        Setting::SourceAddrs => Some("-B"),
        _ => None,
    }
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
        if available_cpus() > 1 {
            notes.push(ONE_THREAD_NOTE);
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

    /// The same run as `stampede run` arguments. ab speaks HTTP/1.0 (with
    /// `Connection: Keep-Alive` under -k) and opens a connection per request
    /// without -k; -s bounds both the connect and the response.
    fn translate(&self) -> anyhow::Result<Translated> {
        let mut args = base_args(TOOL, &self.url)?;
        args.requests = Some(self.requests());
        let concurrency = self.concurrency.unwrap_or(1);
        args.connections = Some(usize::try_from(concurrency).unwrap_or(usize::MAX));
        args.threads = Some(1);
        args.duration = self.timelimit;
        let timeout = self.timeout.unwrap_or(Duration::from_secs(30));
        args.timeout = timeout;
        args.connect_timeout = timeout;
        args.method = self.method().to_string();
        args.headers = headers(TOOL, "-H", &self.headers)?;
        if let Some(file) = self.post_file.as_ref().or(self.put_file.as_ref()) {
            args.body_file = Some(PathBuf::from(file));
            let content_type = self.content_type.as_deref().unwrap_or("text/plain");
            args.content_type = Some(content_type.to_string());
        } else {
            args.content_type = self.content_type.clone();
        }
        args.exports.csv = self.csv.as_ref().map(PathBuf::from);
        args.exports.gnuplot = self.gnuplot.as_ref().map(PathBuf::from);
        args.transport.proxy = self.proxy.clone();
        if let Some(address) = &self.source_address {
            let addrs = stampede_plan::parse_address_list(address)
                .map_err(|e| usage(TOOL, e.with_flags(&ab_flag)))?;
            args.source_addrs = Some(SourceAddrs(addrs));
        }
        if let Some(file) = &self.client_cert {
            args.transport.cert = Some(PathBuf::from(file));
            args.transport.key = Some(PathBuf::from(file));
        }
        args.transport.tls_min = self.tls_version;
        args.transport.tls_max = self.tls_version;
        if let Some(ciphers) = &self.ciphers {
            args.transport.ciphers = ciphers
                .split(',')
                .filter(|name| !name.is_empty())
                .map(str::to_string)
                .collect();
        }
        // ab does not verify server certificates; neither does its front-end.
        args.transport.insecure = self.url.to_ascii_lowercase().starts_with("https://");
        args.http10 = true;
        args.no_keepalive = !self.keepalive;
        Ok(Translated {
            tool: TOOL,
            args,
            flags: ab_flag,
            stampede_json: self.stampede_json.clone(),
            // ab's own progress ("Completed N requests", see watch.rs)
            // takes the place of stampede's progress line and live view.
            quiet: true,
        })
    }

    fn view(&self) -> AbView {
        AbView {
            keepalive: self.keepalive,
            percentiles: !self.no_percentiles,
            confidence: !self.no_confidence,
            verbosity: self.verbosity,
            variable_length: self.variable_length,
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
    fn translate(&self) -> anyhow::Result<Translated> {
        AbOptions::translate(self)
    }
    fn watch(&self) -> super::WatchSpec {
        super::WatchSpec {
            heartbeat: self.heartbeat(),
            ..super::WatchSpec::default()
        }
    }
    /// ab: "apr_socket_connect(): Connection refused (111)", or for a TLS
    /// failure "SSL handshake failed" with rustls' reason.
    fn unable_to_connect(&self, result: &RunResult) -> Option<String> {
        if result.errors.contains_key("tls") {
            let reason = result.error_samples.get("tls").and_then(|s| s.first());
            return Some(match reason {
                Some(reason) => format!("SSL handshake failed: {reason}"),
                None => "SSL handshake failed".into(),
            });
        }
        let (reason, code) = super::first_error(result);
        Some(match code {
            Some(code) => format!("apr_socket_connect(): {reason} ({code})"),
            None => format!("apr_socket_connect(): {reason}"),
        })
    }
    fn write_header(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        if !self.html {
            let target = Target::parse(&self.url)?;
            write_ab_preamble(&target, self.heartbeat().is_some(), out)?;
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
            render_ab_html(result, &target, &view, closing, out)?;
        } else {
            render_ab_text(result, &target, &view, closing, out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::ab_options::Parsed;
    use super::*;

    fn options(line: &str) -> AbOptions {
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        match parse(&words).unwrap() {
            Parsed::Run(o) => *o,
            other => panic!("{other:?}"),
        }
    }

    /// The rendered equivalent line, checked to read back the same.
    fn run_words(line: &str) -> String {
        let args = options(line).translate().unwrap().args;
        crate::flags::run_words::tests::assert_faithful(&args);
        crate::flags::run_words::run_words(&args).join(" ")
    }

    #[test]
    fn the_seed_lines_translate() {
        assert_eq!(
            run_words("-n 1000000 -c 200 -k http://h:8888/kit"),
            "http://h:8888/kit -c 200 -t 1 -n 1000000 --timeout 30s --connect-timeout 30s --http1.0"
        );
        assert_eq!(
            run_words("-c 500 -n 1000000 http://h/view"),
            "http://h/view -c 500 -t 1 -n 1000000 --timeout 30s --connect-timeout 30s --http1.0 --no-keepalive"
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
        assert!(run_words("-t 3 http://h/").contains("-c 1 -t 1 -d 3s -n 50000"));
        assert!(run_words("-t 3 -n 10 http://h/").contains("-c 1 -t 1 -d 3s -n 10"));
        assert!(run_words("http://h/").contains("-c 1 -t 1 -n 1"));
    }

    #[test]
    fn bodies_methods_and_headers() {
        let words = run_words("-p body.txt -T application/json http://h/");
        assert!(
            words.contains("-m POST --body-file body.txt -T application/json"),
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
        assert!(err("-Z x http://h/").starts_with("ab -Z x: not supported"));
        assert!(err("-f TLS1 https://h/").starts_with("ab -f TLS1: not supported"));
        assert!(run_words("-E c.pem -f TLS1.2 -Z ECDHE-RSA-AES128-GCM-SHA256 https://h/")
            .contains("--cert c.pem --key c.pem --tls-min 1.2 --tls-max 1.2 --ciphers TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 --insecure"));
        assert!(err("-v 4 http://h/").starts_with("ab -v 4: not supported"));
        let translate_err = |line: &str| options(line).translate().unwrap_err().to_string();
        assert!(
            translate_err("-H NoColon http://h/").starts_with("ab: -H: invalid header 'NoColon'")
        );
        assert!(translate_err("-B nonsense http://h/")
            .starts_with("ab: invalid -B 'nonsense': not an IP address"));
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
            words.contains("--source-addrs 127.0.0.2 --proxy p:3128 --insecure --http1.0"),
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
