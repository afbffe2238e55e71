//! `stampede jmeter`: JMeter's non-GUI command line (`-n -t plan.jmx -l
//! results.jtl -Jname=value -q FILE -e -o DIR -j FILE`, in JMeter's own
//! option grammar: args.rs, options.rs). The plan is mapped
//! by crates/stampede-jmeter onto a stampede scenario (typed values);
//! `--dry-run` prints it; otherwise it runs as `stampede run --scenario`
//! would (run.rs), the samples are written to the JTL file as JMeter
//! writes them and the report ends with JMeter's `summary =` line
//! (stampede_jmeter::runtime).
//!
//! Refused with one line each (exit 2): unknown flags, JMeter's remote and
//! GUI-only modes, a plan with elements that cannot be mapped (unless
//! `--skip-unsupported`), and every bad-input case of the plan.

mod args;
mod options;
mod run;

use super::{usage, version_line};
use crate::process::exit;
use options::{parse, JmeterOptions, Notes, Parsed, PropSource, HELP, TOOL};
use stampede_jmeter::runtime::summariser::{self, Summariser};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A properties file, its errors naming `flag`.
fn read_file(flag: &str, path: &Path) -> anyhow::Result<HashMap<String, String>> {
    stampede_jmeter::read_properties(path)
        .map_err(|e| usage(TOOL, e.to_string().replacen("-q ", &format!("{flag} "), 1)))
}

/// `sources` applied in order on `props`: a file's keys, a NAME=VALUE, or
/// (an empty VALUE) NAME removed.
fn apply(
    props: &mut HashMap<String, String>,
    sources: &[PropSource],
    file_flag: &str,
) -> anyhow::Result<()> {
    for source in sources {
        match source {
            PropSource::File(path) => props.extend(read_file(file_flag, path)?),
            PropSource::Set(name, value) if value.is_empty() => {
                props.remove(name);
            }
            PropSource::Set(name, value) => {
                props.insert(name.clone(), value.clone());
            }
        }
    }
    Ok(())
}

/// The properties as JMeter.java's initializeProperties builds them: the
/// `-p` file (and the `user.properties` file it names, found as given or
/// beside it, as JMeterUtils.findFile looks in JMeter's bin directory),
/// then -q files and -J in command-line order (later values win, an empty
/// value removes); a name none of them sets falls back to the system
/// properties (-S files and -D), as JMeter's properties default to Java's.
fn properties(o: &JmeterOptions) -> anyhow::Result<HashMap<String, String>> {
    let mut props = HashMap::new();
    apply(&mut props, &o.system_props, "-S")?;
    let mut jmeter = HashMap::new();
    if let Some(file) = &o.prop_file {
        jmeter = read_file("-p", file)?;
        if let Some(user) = jmeter.get("user.properties").filter(|u| !u.is_empty()) {
            let user = PathBuf::from(user);
            let beside = file.parent().unwrap_or(Path::new("")).join(&user);
            let found = [user, beside].into_iter().find(|p| p.is_file());
            if let Some(found) = found {
                let read = read_file("-p", &found)?;
                jmeter.extend(read);
            }
        }
    }
    apply(&mut jmeter, &o.props, "-q")?;
    props.extend(jmeter);
    Ok(props)
}

/// The mapped plan, its scenario validated as a scenario file is, after
/// the notes and the unsupported elements were shown.
fn map_plan(
    o: &JmeterOptions,
    props: &HashMap<String, String>,
    notes: &mut Notes,
) -> anyhow::Result<stampede_jmeter::Plan> {
    let format: Vec<&str> = props
        .keys()
        .filter(|k| k.starts_with("jmeter.save.saveservice."))
        .map(String::as_str)
        .collect();
    if !format.is_empty() {
        notes.line(&format!(
            "stampede: note: results-file properties are not honoured ({}): -l writes JMeter's default CSV columns",
            format.join(", ")
        ));
    }
    let plan = stampede_jmeter::load(&o.plan, props.clone())
        .map_err(|e| anyhow::anyhow!("{TOOL}: {e}"))?;
    let shown = o.plan.display().to_string();
    for note in &plan.notes {
        notes.line(&format!("stampede: note: {note}"));
    }
    if !plan.listener_files.is_empty() {
        notes.line(&format!(
            "stampede: note: the plan's listeners' files are not written ({}); {}",
            plan.listener_files.join(", "),
            match &o.jtl {
                Some(jtl) => format!("the samples go to {}", jtl.display()),
                None => "-l FILE writes the samples".to_string(),
            }
        ));
    }
    if !plan.unsupported.is_empty() {
        for element in &plan.unsupported {
            notes.line(&format!(
                "stampede: jmeter: cannot map {shown}:{}: '{}' ({}): {}",
                element.line, element.name, element.class, element.why
            ));
        }
        if !o.skip_unsupported {
            return Err(usage(
                TOOL,
                format!(
                    "{} element(s) of {shown} cannot be mapped (listed above); --skip-unsupported runs the rest",
                    plan.unsupported.len()
                ),
            ));
        }
        // Say what skipping costs: a skipped sampler is a request never
        // sent; anything else (an assertion, a config) changes how the
        // requests that are sent are checked or built, as each line says.
        let samplers = (plan.unsupported.iter())
            .filter(|u| {
                matches!(
                    u.class.as_str(),
                    "HTTPSamplerProxy" | "HTTPSampler" | "HTTPSampler2"
                )
            })
            .count();
        let requests = match samplers {
            0 => "every HTTP sampler still sends its requests".to_string(),
            n => format!("{n} HTTP sampler(s) among them send no request (no samples of them in the JTL or the summary)"),
        };
        notes.line(&format!(
            "stampede: note: --skip-unsupported: running without the {} element(s) listed; {requests}",
            plan.unsupported.len()
        ));
    }
    if plan.groups.is_empty() {
        return Err(usage(
            TOOL,
            format!("{shown}: no thread group with HTTP samplers to run"),
        ));
    }
    run::validated(o, &plan)?;
    Ok(plan)
}

/// `stampede jmeter WORDS...`.
pub fn execute(words: Vec<String>) -> anyhow::Result<i32> {
    let o = match parse(&words)? {
        Parsed::Help => {
            writeln!(std::io::stdout(), "{HELP}")?;
            return Ok(exit::OK);
        }
        Parsed::Version => {
            writeln!(std::io::stdout(), "{}", version_line(TOOL))?;
            return Ok(exit::OK);
        }
        Parsed::Run(o) => o,
    };
    let mut notes = match &o.log_file {
        Some(path) => Notes(Some(std::fs::File::create(path).map_err(|e| {
            usage(TOOL, format!("-j {}: cannot create: {e}", path.display()))
        })?)),
        None => Notes(None),
    };
    if !o.ignored.is_empty() {
        notes.line(&format!(
            "stampede: note: ignored on one machine: {} (remote engines' properties and exit, JMeter's logging and home)",
            o.ignored.join(", ")
        ));
    }
    let props = properties(&o)?;
    let plan = map_plan(&o, &props, &mut notes)?;
    if o.dry_run {
        let text = stampede_jmeter::scenario_text(&plan, &o.plan.display().to_string());
        std::io::stdout().write_all(text.as_bytes())?;
        return Ok(exit::OK);
    }
    let summariser = std::sync::Arc::new(Summariser::new(summariser::interval(&props)));
    run::run(&o, &plan, &summariser, &mut notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JMeter.java's initializeProperties: the -p file and the
    /// user.properties it names, then -q and -J in command-line order (an
    /// empty -J value removes), system properties (-D) under them all.
    #[test]
    fn properties_build_as_jmeter_builds_them() {
        let dir =
            std::env::temp_dir().join(format!("stampede-jmeter-props-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("jmeter.properties");
        std::fs::write(
            &base,
            "user.properties=user.properties\nhost=a\nport=1\nkeep=base\n",
        )
        .unwrap();
        std::fs::write(dir.join("user.properties"), "host=b\n").unwrap();
        let extra = dir.join("extra.properties");
        std::fs::write(&extra, "port=3\n").unwrap();
        let set = |n: &str, v: &str| PropSource::Set(n.to_string(), v.to_string());
        let o = JmeterOptions {
            prop_file: Some(base),
            props: vec![set("port", "2"), PropSource::File(extra), set("keep", "")],
            system_props: vec![set("keep", "system"), set("only", "system")],
            ..JmeterOptions::default()
        };
        let props = properties(&o).unwrap();
        assert_eq!(props["host"], "b", "user.properties over jmeter.properties");
        assert_eq!(props["port"], "3", "the -q after the -J wins");
        assert_eq!(
            props["keep"], "system",
            "-Jkeep= removed it: the system value shows"
        );
        assert_eq!(props["only"], "system");
        let missing = JmeterOptions {
            prop_file: Some(dir.join("none.properties")),
            ..JmeterOptions::default()
        };
        let err = properties(&missing).unwrap_err().to_string();
        assert!(err.starts_with("jmeter: -p "), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
