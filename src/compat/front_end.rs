//! What a compat front-end is: the [`FrontEnd`] trait each tool implements
//! (notes, the typed translation, what to watch, banner, failure line,
//! report), the [`Translated`] run it asks for and what its command line
//! asked for ([`Parsed`]). `compat::execute` drives any of them.

use super::watch::{Watch, WatchSpec};
use crate::flags::run_args::RunArgs;
use stampede_metrics::RunResult;
use stampede_plan::Setting;
use std::io::Write;
use std::path::PathBuf;

/// A foreign command line, translated.
#[derive(Debug)]
pub struct Translated {
    pub tool: &'static str,
    /// The `stampede run` arguments that describe the same run.
    pub args: RunArgs,
    /// The tool's own flag for each plan setting, to name in errors.
    pub flags: fn(Setting) -> Option<&'static str>,
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

/// What each front-end provides; `execute` (compat/mod.rs) does the rest the same way for all.
pub trait FrontEnd {
    /// Remarks about accepted options that change nothing (printed on stderr).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The equivalent `stampede run` arguments; a value `stampede run`
    /// rejects is a usage error naming the tool's own flag.
    fn translate(&self) -> anyhow::Result<Translated>;
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
    fn translate(&self) -> anyhow::Result<Translated> {
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
