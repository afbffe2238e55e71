//! The compat front-ends: `stampede ab|wrk|webbench|press` accept those tools'
//! command lines and print in their layouts, so a line pasted from a seed
//! report just works. Each tool file owns its syntax (read with [`getopt`]
//! and translated into `stampede run` words, so validation and defaults stay
//! in one place) and its report; watch.rs prints what a tool prints during
//! the run (ab's heartbeat, press's connection line) and collects wrk's
//! 100 ms samples. This file owns what they share: running the
//! translated words, the stampede-only `--stampede-json PATH`, the one closing
//! line that points at what stampede adds, refusals, shell quoting and base64.
//!
//! It does not render anything tool-specific and never touches the engine.

pub mod ab;
mod ab_options;
mod ab_report;
pub mod getopt;
pub mod jmeter;
mod jmeter_jtl;
mod jmeter_options;
mod jmeter_report;
mod jmeter_run;
mod jmeter_summariser;
pub mod press;
pub mod watch;
pub mod webbench;
pub mod wrk;
mod wrk_report;

use crate::delivery::never_connected;
use crate::exit;
use crate::plan_args::build_plan;
use crate::run_args::{parse_run_args, RunArgs};
use crate::session::{run_plan_in, RunContext};
use getopt::OptSpec;
use stampede_metrics::RunResult;
use stampede_report::format_latency_us;
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
pub use watch::{Watch, WatchSpec};

/// The stampede-only option every front-end accepts: the full result as JSON.
pub const STAMPEDE_JSON: OptSpec = OptSpec::long("stampede-json", "stampede-json", true);

/// A foreign command line, translated.
#[derive(Debug, Clone)]
pub struct Translated {
    pub tool: &'static str,
    /// `stampede run` words, URL first, that describe the same run.
    pub run_words: Vec<String>,
    /// `--stampede-json PATH`.
    pub stampede_json: Option<PathBuf>,
    /// No progress line on stderr.
    pub quiet: bool,
}

/// What a front-end's command line asks for.
#[derive(Debug, PartialEq)]
pub enum Parsed<T> {
    Help,
    Version,
    Run(T),
}

/// What each front-end provides; [`execute`] does the rest the same way for all.
pub trait FrontEnd {
    /// Remarks about accepted options that change nothing (printed on stderr).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The equivalent `stampede run` words.
    fn translate(&self) -> Translated;
    /// What to print or collect during the run (ab's heartbeat, press's
    /// connection line, wrk's 100 ms samples).
    fn watch(&self) -> WatchSpec {
        WatchSpec::default()
    }
    /// The tool's banner, printed before the run starts.
    fn write_header(&self, out: &mut dyn Write) -> anyhow::Result<()>;
    /// What the tool prints instead of its report when no connection could
    /// be opened (wrk's "unable to connect to …"), on stderr; None: the
    /// report is printed as usual. Either way the run exits 2.
    fn unable_to_connect(&self, _result: &RunResult) -> Option<String> {
        None
    }
    /// The tool's report of the finished run, ending with the closing line.
    fn write_report(
        &self,
        result: &RunResult,
        watch: &mut Watch,
        closing: &str,
        out: &mut dyn Write,
    ) -> anyhow::Result<()>;
}

impl<T: FrontEnd> FrontEnd for Box<T> {
    fn notes(&self) -> Vec<String> {
        self.as_ref().notes()
    }
    fn translate(&self) -> Translated {
        self.as_ref().translate()
    }
    fn watch(&self) -> WatchSpec {
        self.as_ref().watch()
    }
    fn unable_to_connect(&self, result: &RunResult) -> Option<String> {
        self.as_ref().unable_to_connect(result)
    }
    fn write_header(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        self.as_ref().write_header(out)
    }
    fn write_report(
        &self,
        result: &RunResult,
        watch: &mut Watch,
        closing: &str,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        self.as_ref().write_report(result, watch, closing, out)
    }
}

/// Runs a parsed front-end command line: help or version, or the banner, the
/// run, the tool's report and the saved result. `tool` names the version line.
pub fn execute<F: FrontEnd>(parsed: Parsed<F>, help: &str, tool: &str) -> anyhow::Result<i32> {
    let options = match parsed {
        Parsed::Help => {
            println!("{help}");
            return Ok(exit::OK);
        }
        Parsed::Version => {
            println!("{}", version_line(tool));
            return Ok(exit::OK);
        }
        Parsed::Run(options) => options,
    };
    for note in options.notes() {
        eprintln!("stampede: note: {note}");
    }
    let translated = options.translate();
    // A bad output path fails before the banner, not after the load.
    if let Ok(args) = parse_run_args(&translated.run_words) {
        check_outputs(&translated, &args)?;
    }
    // With `--stampede-json -` the JSON is stdout: the tool's layout moves to stderr.
    let on_stderr = translated
        .stampede_json
        .as_deref()
        .is_some_and(crate::output::is_stdout);
    let report_out = || crate::output::text_out(on_stderr);
    {
        let mut out = report_out();
        options.write_header(&mut out)?;
        out.flush()?;
    }
    let watch = RefCell::new(Watch::new(options.watch()));
    let done = run(&translated, &watch)?;
    let closing = closing_line(&translated, &done.result);
    let unreachable = never_connected(&done.result) && !done.result.interrupted;
    match options.unable_to_connect(&done.result) {
        // The tool's own failure line, as it prints it, then where the result is.
        Some(line) if unreachable => eprintln!("{line}\n{closing}"),
        _ => {
            let mut out = report_out();
            options.write_report(&done.result, &mut watch.borrow_mut(), &closing, &mut out)?;
            out.flush()?;
        }
    }
    let status = save(&translated, &done)?;
    Ok(if unreachable { exit::ERROR } else { status })
}

/// The first error message of the run without its " (os error N)" tail,
/// and the errno: "Connection refused", Some(111).
pub fn first_error(result: &RunResult) -> (String, Option<i32>) {
    let Some(sample) = result.error_samples.values().flatten().next() else {
        return ("no connection could be opened".into(), None);
    };
    match sample.rsplit_once(" (os error ") {
        Some((text, code)) => (
            text.to_string(),
            code.trim_end_matches(')').parse::<i32>().ok(),
        ),
        None => (sample.clone(), None),
    }
}

/// A finished run with the arguments it was built from.
pub struct Finished {
    pub args: RunArgs,
    pub result: RunResult,
}

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

/// A flag stampede cannot honour: one line naming it and why, exit status 2.
pub fn refuse(tool: &str, flag: &str, why: &str) -> anyhow::Error {
    anyhow::anyhow!("{tool} {flag}: not supported: {why}")
}

/// The first line of a clap error, without its `error: ` prefix.
fn clap_message(error: &clap::Error) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// True when `stampede run` accepts `flag VALUE` in this build (the CSV and
/// gnuplot exports are added by another module; the front-ends follow it).
pub fn run_accepts(flag: &str) -> bool {
    parse_run_args(["http://127.0.0.1/", flag, "stampede-probe"]).is_ok()
}

/// Runs the translated words with the engine, `watch` fed the snapshots.
pub fn run(translated: &Translated, watch: &RefCell<Watch>) -> anyhow::Result<Finished> {
    let args = parse_run_args(&translated.run_words)
        .map_err(|e| usage(translated.tool, clap_message(&e)))?;
    let (plan, notices) = build_plan(&args)?;
    // The exports ride along: ab's -g gnuplot rows are written during the run.
    let snapshot_interval = watch.borrow().rate_window();
    let context = RunContext {
        quiet: translated.quiet,
        exports: Some(&args.exports),
        watcher: Some(watch),
        snapshot_interval,
        ..RunContext::default()
    };
    let result = run_plan_in(&plan, notices, &context)?;
    Ok(Finished { args, result })
}

/// Checks every output path before the first request, naming each by the
/// tool's own flag (ab's -g and -e are --gnuplot and --csv underneath).
fn check_outputs(translated: &Translated, args: &RunArgs) -> anyhow::Result<()> {
    let own_flag = |flag: &'static str| match (translated.tool, flag) {
        ("ab", "--gnuplot") => "-g",
        ("ab", "--csv") => "-e",
        _ => flag,
    };
    let mut outputs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(path) = &translated.stampede_json {
        outputs.push(("--stampede-json", path));
    }
    outputs.extend(
        args.exports
            .outputs()
            .into_iter()
            .map(|(flag, path)| (own_flag(flag), path)),
    );
    crate::output::preflight(&outputs)
        .map_err(|error| anyhow::anyhow!("{}: {error:#}", translated.tool))
}

/// Writes `--stampede-json` and any exports, and returns the exit status:
/// 130 when the run was interrupted (its partial result was printed).
pub fn save(translated: &Translated, done: &Finished) -> anyhow::Result<i32> {
    let saved = translated
        .stampede_json
        .as_ref()
        .map(|path| crate::output::write_json(&done.result, path))
        .transpose();
    crate::exports::write_exports(&done.result, &done.args.exports)?;
    saved?;
    Ok(if done.result.interrupted {
        crate::interrupt::status()
    } else {
        exit::OK
    })
}

/// The one line after a tool's report: the tail it cannot show, and how to
/// get every figure.
pub fn closing_line(translated: &Translated, result: &RunResult) -> String {
    let l = &result.latency_us;
    let full = match &translated.stampede_json {
        Some(path) => format!("full result in {}", path.display()),
        None => format!(
            "full result: stampede run {} --json result.json",
            shell_words(&translated.run_words)
        ),
    };
    // Tools that count any complete response as a success (webbench, ab's
    // "Complete requests") hide server errors; say so once.
    let statuses = match result.requests.failed_status {
        0 => String::new(),
        n => format!(", {n} responses with status >= 400"),
    };
    if result.requests.completed == 0 {
        let errors: Vec<String> = result
            .errors
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        return format!(
            "stampede: no complete responses (errors: {}); {full}",
            errors.join(", ")
        );
    }
    format!(
        "stampede: honest p99 = {}, p99.9 = {}, max = {} (every response, HDR){statuses}; {full}",
        format_latency_us(l.p99 as f64),
        format_latency_us(l.p99_9 as f64),
        format_latency_us(l.max as f64),
    )
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

/// Standard base64 with padding (RFC 4648), for Basic authentication headers
/// (the `base64` crate, as `--basic-auth` of `stampede run` uses it).
pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The version line the front-ends print for `-V`/`--version`.
pub fn version_line(tool: &str) -> String {
    format!(
        "stampede {} ({tool}-compatible front-end)",
        env!("CARGO_PKG_VERSION")
    )
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
    fn clap_errors_become_one_line() {
        let error = parse_run_args(["http://x/", "--no-such-flag"]).unwrap_err();
        let message = clap_message(&error);
        assert!(!message.contains('\n'));
        assert!(message.contains("--no-such-flag"), "{message}");
    }
}
