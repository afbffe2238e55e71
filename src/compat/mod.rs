//! The compat front-ends: `stampede ab|wrk|webbench|press` accept those tools'
//! command lines and print in their layouts, so a line pasted from a seed
//! report just works. Each tool file owns its syntax (read with [`getopt`]
//! and translated into typed `stampede run` arguments, so validation and
//! defaults stay in one place); front_end.rs is what a tool provides,
//! usage.rs what they share when reading a command line, watch.rs what a
//! tool prints during the run (ab's heartbeat, press's connection line) and
//! wrk's 100 ms samples; the layouts are stampede-report's `compat`. This
//! file runs a translated command line: the banner, the run, the tool's
//! report, the one closing line that points at what stampede adds, the
//! saved result and the exit status.
//!
//! It does not render anything tool-specific and never touches the engine.

pub mod ab;
mod ab_options;
mod front_end;
pub mod getopt;
pub mod jmeter;
pub mod press;
mod usage;
pub mod watch;
pub mod webbench;
pub mod wrk;

use crate::flags::plan_args::{build_run, BuiltRun};
use crate::flags::run_words::{run_words, shell_words, with_words_before_script_args};
use crate::process::exit;
use crate::session::delivery::never_connected;
use crate::session::{run_plan_in, RunContext};
pub use front_end::{FrontEnd, Parsed, Translated};
use stampede_metrics::RunResult;
use stampede_report::format_latency_us;
use std::cell::RefCell;
use std::io::Write;
pub use usage::{base64, base_args, headers, one_url, refuse, usage, STAMPEDE_JSON};
pub use watch::{Watch, WatchSpec};

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
    let translated = options.translate()?;
    // A bad output path fails before the banner, not after the load.
    check_outputs(&translated)?;
    // With `--stampede-json -` the JSON is stdout: the tool's layout moves
    // to stderr, and so does what a script prints.
    let on_stderr = translated
        .stampede_json
        .as_deref()
        .is_some_and(crate::process::output::is_stdout);
    stampede_lua::print_to_stderr(on_stderr);
    // So is a plan stampede cannot run (ab's -E over http://); wrk's -s
    // script is loaded here, its setup() and init() printing before the
    // banner as in wrk.
    let built = build(&translated)?;
    // Bad input is one line: the notes come once the plan is built.
    for note in options.notes() {
        eprintln!("stampede: note: {note}");
    }
    let report_out = || crate::process::output::text_out(on_stderr);
    {
        let mut out = report_out();
        options.write_header(&mut out)?;
        out.flush()?;
    }
    let watch = RefCell::new(Watch::new(options.watch()));
    let done = run(translated, built, &watch)?;
    let closing = closing_line(&done);
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
    let status = save(&done)?;
    let rates = watch.borrow().samples(&done.result);
    let status = crate::flags::script_args::finish(
        done.script.as_deref(),
        &done.result,
        Some(&rates),
        status,
    )?;
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
    pub translated: Translated,
    pub result: RunResult,
    /// wrk's `-s`: the script, for its `done` after the report.
    pub script: Option<std::sync::Arc<stampede_lua::LuaScript>>,
}

/// The plan of the translated arguments (and, for wrk's `-s`, the workload
/// that carries the prepared script).
fn build(translated: &Translated) -> anyhow::Result<BuiltRun> {
    let built = build_run(&translated.args).map_err(|error| in_own_flags(translated, error))?;
    if built.workload.is_some() && built.script.is_none() {
        anyhow::bail!(
            "{}: only a script (-s) changes the requests",
            translated.tool
        );
    }
    Ok(built)
}

/// Runs the plan of the translated arguments with the engine, `watch` fed
/// the snapshots.
fn run(
    translated: Translated,
    built: BuiltRun,
    watch: &RefCell<Watch>,
) -> anyhow::Result<Finished> {
    // The exports ride along: ab's -g gnuplot rows are written during the run.
    let snapshot_interval = watch.borrow().rate_window();
    let context = RunContext {
        quiet: translated.quiet,
        exports: Some(&translated.args.exports),
        watcher: Some(watch),
        snapshot_interval,
        workload: built.workload,
        ..RunContext::default()
    };
    let mut result = run_plan_in(&built.plan, built.notices, &context)?;
    crate::flags::script_args::annotate(built.script.as_deref(), &mut result);
    Ok(Finished {
        translated,
        result,
        script: built.script,
    })
}

/// A plan error as a usage error naming the tool's flags (ab's -E and -f
/// for TLS, wrk's -R for the rate); any other error as it is.
fn in_own_flags(translated: &Translated, error: anyhow::Error) -> anyhow::Error {
    if !error
        .chain()
        .any(crate::process::plan_flags::names_settings)
    {
        return error;
    }
    let text: Vec<String> = error
        .chain()
        .map(|cause| crate::process::plan_flags::cause_text(cause, &translated.flags))
        .collect();
    usage(translated.tool, text.join(": "))
}

/// Checks every output path before the first request, naming each by the
/// tool's own flag (ab's -g and -e are --gnuplot and --csv underneath).
fn check_outputs(translated: &Translated) -> anyhow::Result<()> {
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
        translated
            .args
            .exports
            .outputs()
            .into_iter()
            .map(|(flag, path)| (own_flag(flag), path)),
    );
    crate::process::output::preflight(&outputs)
        .map_err(|error| anyhow::anyhow!("{}: {error:#}", translated.tool))
}

/// Writes `--stampede-json` and any exports, and returns the exit status:
/// 130 when the run was interrupted (its partial result was printed).
pub fn save(done: &Finished) -> anyhow::Result<i32> {
    let saved = done
        .translated
        .stampede_json
        .as_ref()
        .map(|path| crate::process::output::write_json(&done.result, path))
        .transpose();
    crate::process::exports::write_exports(&done.result, &done.translated.args.exports)?;
    saved?;
    Ok(if done.result.interrupted {
        crate::process::interrupt::status()
    } else {
        exit::OK
    })
}

/// The one line after a tool's report: the tail it cannot show, and how to
/// get every figure.
pub fn closing_line(done: &Finished) -> String {
    let result = &done.result;
    let l = &result.latency_us;
    let full = match &done.translated.stampede_json {
        Some(path) => format!("full result in {}", path.display()),
        None => format!(
            "full result: stampede run {}",
            shell_words(&with_words_before_script_args(
                run_words(&done.translated.args),
                &["--json", "result.json"]
            ))
        ),
    };
    // Tools that count any complete response as a success (webbench, ab's
    // "Complete requests") hide server errors; say so once.
    let statuses = match result.requests.failed_status {
        0 => String::new(),
        n => format!(", {n} responses with status >= 400"),
    };
    if result.requests.completed == 0 {
        return format!(
            "stampede: no complete responses{}; {full}",
            errors_in_brackets(&result.errors)
        );
    }
    format!(
        "stampede: honest p99 = {}, p99.9 = {}, max = {} (every response, HDR){statuses}; {full}",
        format_latency_us(l.p99 as f64),
        format_latency_us(l.p99_9 as f64),
        format_latency_us(l.max as f64),
    )
}

/// ` (errors: connect_refused 14, timeout 2)`, or nothing when no request
/// failed (a run whose only requests were still in flight at its end).
fn errors_in_brackets(errors: &std::collections::BTreeMap<String, u64>) -> String {
    if errors.is_empty() {
        return String::new();
    }
    let listed: Vec<String> = errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(" (errors: {})", listed.join(", "))
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
    fn no_errors_are_no_brackets() {
        let mut errors = std::collections::BTreeMap::new();
        assert_eq!(errors_in_brackets(&errors), "");
        errors.insert("connect_refused".to_string(), 14);
        errors.insert("timeout".to_string(), 2);
        assert_eq!(
            errors_in_brackets(&errors),
            " (errors: connect_refused 14, timeout 2)"
        );
    }
}
