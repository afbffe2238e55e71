//! Running a mapped JMeter plan: the scenario text written to a file and
//! run as `stampede run --scenario FILE` runs it, the JTL writer given to
//! the engine's request log, the HTML report for `-e -o DIR`, and the
//! closing report (jmeter_report.rs).

use super::jmeter::{JmeterOptions, Notes, TOOL};
use super::jmeter_jtl::{step_labels, JtlSink};
use super::{refuse, run_accepts, save, usage, Finished, Translated};
use crate::plan_args::build_plan;
use crate::run_args::parse_run_args;
use crate::session::{run_plan_in, RunContext};
use stampede_engine::RequestLogOptions;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The scenario file of this run, removed when the run is over.
struct ScenarioFile(PathBuf);

impl Drop for ScenarioFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `-o DIR`: absent or empty (JMeter refuses a folder with files in it);
/// with `-f` its files are removed first.
fn report_dir(dir: &Path, force: bool) -> anyhow::Result<PathBuf> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir)
            .map_err(|e| usage(TOOL, format!("-o {}: {e}", dir.display())))?;
        if entries.next().is_some() {
            if !force {
                return Err(usage(
                    TOOL,
                    format!(
                        "-o {}: the folder is not empty (-f empties it)",
                        dir.display()
                    ),
                ));
            }
            std::fs::remove_dir_all(dir)
                .map_err(|e| usage(TOOL, format!("-o {}: cannot empty it: {e}", dir.display())))?;
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| usage(TOOL, format!("-o {}: cannot create: {e}", dir.display())))?;
    Ok(dir.join("index.html"))
}

/// Runs the scenario `text` mapped from `o.plan`.
pub(super) fn run(o: &JmeterOptions, text: &str, notes: &mut Notes) -> anyhow::Result<i32> {
    if !run_accepts("--scenario") {
        return Err(refuse(
            TOOL,
            "(run)",
            "this build cannot run scenario files yet (stampede run --scenario); \
             --dry-run prints the scenario the plan maps to",
        ));
    }
    let html = o
        .report_dir
        .as_deref()
        .map(|dir| report_dir(dir, o.force))
        .transpose()?;
    let file = ScenarioFile(
        std::env::temp_dir().join(format!("stampede-jmeter-{}.toml", std::process::id())),
    );
    std::fs::write(&file.0, text)
        .map_err(|e| anyhow::anyhow!("{TOOL}: writing {}: {e}", file.0.display()))?;
    let mut words = vec!["--scenario".to_string(), file.0.display().to_string()];
    if let Some(html) = &html {
        words.extend(["--html".to_string(), html.display().to_string()]);
    }
    let translated = Translated {
        tool: TOOL,
        run_words: words,
        stampede_json: o.stampede_json.clone(),
        quiet: true,
    };
    let args = parse_run_args(&translated.run_words).map_err(|e| usage(TOOL, e))?;
    let (plan, notices) = build_plan(&args)?;
    let base = o.plan.parent().unwrap_or(Path::new(""));
    let scenario =
        stampede_workload::Scenario::parse(&o.plan.display().to_string(), text, base, &[])
            .map_err(|e| anyhow::anyhow!("{TOOL}: {e}"))?;
    let labels = step_labels(&scenario);
    let request_log = match &o.jtl {
        Some(path) => {
            let sink = JtlSink::open(path, o.force, labels.clone())
                .map_err(|e| usage(TOOL, format!("-l {}: {e}", path.display())))?;
            Some(RequestLogOptions::new(Box::new(sink)))
        }
        None => None,
    };
    let custom = RefCell::new(request_log);
    let started = std::time::SystemTime::now();
    let mut out = std::io::stdout();
    super::jmeter_report::write_start(&o.plan, started, &mut out)?;
    let context = RunContext {
        quiet: true,
        exports: Some(&args.exports),
        request_log: Some(&custom),
        ..RunContext::default()
    };
    let result = run_plan_in(&plan, notices, &context)?;
    super::jmeter_report::write_report(&result, &labels, &mut out)?;
    out.flush()?;
    for warning in &result.warnings {
        notes.line(&format!("stampede: warning: {warning}"));
    }
    let done = Finished { args, result };
    save(&translated, &done)
}
