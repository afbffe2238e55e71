//! `stampede jmeter`'s command line: JMeter's non-GUI flags read with the
//! compat getopt into [`JmeterOptions`] (remote and GUI-only modes refused
//! with one line each), and where stampede's own notes go (`-j FILE`).

use super::getopt::{split, tokenize, OptSpec};
use super::{refuse, usage, STAMPEDE_JSON};
use std::io::Write;
use std::path::PathBuf;

pub(super) const TOOL: &str = "jmeter";

pub const HELP: &str = "\
stampede jmeter -n -t PLAN.jmx [-l RESULTS.jtl] [options]   (JMeter's non-GUI mode)
  -n, --nongui                     non-GUI mode (stampede has no GUI: always on)
  -t, --testfile FILE              the .jmx test plan to run
  -l, --logfile FILE               write the samples to FILE (JTL CSV, JMeter's default columns);
                                   an existing non-empty FILE is appended to, as JMeter does
  -f, --forceDeleteResultFile      empty -l FILE and -o DIR first
  -J, --jmeterproperty NAME=VALUE  a property for ${__P(NAME)} (also -JNAME=VALUE)
  -q, --addprop FILE               properties from a Java .properties file (before -J)
  -e, --reportatendofloadtests     write stampede's HTML report at the end (needs -o)
  -o, --reportoutputfolder DIR     where -e writes it (DIR/index.html; DIR must be empty)
  -j, --jmeterlogfile FILE         stampede's own notes go to FILE instead of stderr
  -h, --help                       this help
  -v, --version                    stampede's version
  stampede only:
  --dry-run                        print the stampede scenario the plan maps to, and stop
  --skip-unsupported               run the plan without the elements stampede cannot map
  --stampede-json PATH             also write stampede's full JSON result to PATH
  Refused: -r/-R (remote engines: see `stampede k8s`), -g (dashboard from a JTL: see
  `stampede report`), -s (server mode), -G (remote properties), -H/-P (use stampede run --proxy).

Examples:
  stampede jmeter -n -t plan.jmx -l results.jtl -Jhost=127.0.0.1 -Jport=8000 -Jthreads=50
  stampede jmeter -n -t plan.jmx -l results.jtl -e -o report/
  stampede jmeter -n -t plan.jmx --dry-run > plan.toml && stampede run --scenario plan.toml";

const SPECS: &[OptSpec] = &[
    OptSpec::both("nongui", 'n', "nongui", false),
    OptSpec::both("testfile", 't', "testfile", true),
    OptSpec::both("logfile", 'l', "logfile", true),
    OptSpec::both("force", 'f', "forceDeleteResultFile", false),
    OptSpec::both("property", 'J', "jmeterproperty", true),
    OptSpec::both("addprop", 'q', "addprop", true),
    OptSpec::both("report", 'e', "reportatendofloadtests", false),
    OptSpec::both("reportdir", 'o', "reportoutputfolder", true),
    OptSpec::both("jmeterlog", 'j', "jmeterlogfile", true),
    OptSpec::both("help", 'h', "help", false),
    OptSpec::both("version", 'v', "version", false),
    OptSpec::long("dry-run", "dry-run", false),
    OptSpec::long("skip-unsupported", "skip-unsupported", false),
    STAMPEDE_JSON,
    OptSpec::both("remote", 'r', "runremote", false),
    OptSpec::both("remotestart", 'R', "remotestart", true),
    OptSpec::both("globalprop", 'G', "globalproperty", true),
    OptSpec::both("reportonly", 'g', "reportonly", true),
    OptSpec::both("server", 's', "server", false),
    OptSpec::both("proxyhost", 'H', "proxyHost", true),
    OptSpec::both("proxyport", 'P', "proxyPort", true),
];

/// What the command line asks for.
#[derive(Debug, Default, PartialEq)]
pub(super) struct JmeterOptions {
    pub plan: PathBuf,
    pub jtl: Option<PathBuf>,
    pub force: bool,
    /// -J in command-line order.
    pub props: Vec<(String, String)>,
    pub prop_files: Vec<PathBuf>,
    pub report_dir: Option<PathBuf>,
    pub log_file: Option<PathBuf>,
    pub dry_run: bool,
    pub skip_unsupported: bool,
    pub stampede_json: Option<PathBuf>,
}

pub(super) type Parsed = super::Parsed<JmeterOptions>;

pub(super) fn parse(words: &[String]) -> anyhow::Result<Parsed> {
    let tokens = tokenize(SPECS, words).map_err(|e| usage(TOOL, e))?;
    let (options, args) = split(tokens);
    let mut o = JmeterOptions::default();
    let (mut plan, mut report) = (None, false);
    for (key, spelled, value) in options {
        match key {
            "help" => return Ok(Parsed::Help),
            "version" => return Ok(Parsed::Version),
            "nongui" => {}
            "testfile" => plan = Some(PathBuf::from(value)),
            "logfile" => o.jtl = Some(PathBuf::from(value)),
            "force" => o.force = true,
            "property" => {
                let Some((name, v)) = value.split_once('=') else {
                    return Err(usage(
                        TOOL,
                        format!("{spelled} {value}: expected NAME=VALUE"),
                    ));
                };
                o.props.push((name.trim().to_string(), v.to_string()));
            }
            "addprop" => o.prop_files.push(PathBuf::from(value)),
            "report" => report = true,
            "reportdir" => o.report_dir = Some(PathBuf::from(value)),
            "jmeterlog" => o.log_file = Some(PathBuf::from(value)),
            "dry-run" => o.dry_run = true,
            "skip-unsupported" => o.skip_unsupported = true,
            "stampede-json" => o.stampede_json = Some(PathBuf::from(value)),
            "remote" | "remotestart" => {
                return Err(refuse(
                    TOOL,
                    &spelled,
                    "remote engines; stampede k8s splits a run among agents",
                ))
            }
            "globalprop" => {
                return Err(refuse(
                    TOOL,
                    &spelled,
                    "remote properties (no remote engines)",
                ))
            }
            "reportonly" => {
                return Err(refuse(
                    TOOL,
                    &spelled,
                    "stampede reads its own results: stampede report FILE.json",
                ))
            }
            "server" => return Err(refuse(TOOL, &spelled, "stampede has no remote server mode")),
            _ => {
                return Err(refuse(
                    TOOL,
                    &spelled,
                    "use stampede run --proxy for a proxy",
                ))
            }
        }
    }
    if let Some(extra) = args.first() {
        return Err(usage(TOOL, format!("unexpected argument '{extra}'")));
    }
    o.plan = plan.ok_or_else(|| usage(TOOL, "no test plan given (-t PLAN.jmx)"))?;
    match (report, &o.report_dir) {
        (true, None) => return Err(usage(TOOL, "-e needs -o DIR (where the report goes)")),
        (false, Some(_)) => return Err(usage(TOOL, "-o DIR is used with -e")),
        _ => {}
    }
    Ok(Parsed::Run(o))
}

/// Where stampede's own notes go: stderr, or the -j file.
pub(super) struct Notes(pub(super) Option<std::fs::File>);

impl Notes {
    pub(super) fn line(&mut self, line: &str) {
        match &mut self.0 {
            Some(file) => {
                let _ = writeln!(file, "{line}");
            }
            None => eprintln!("{line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn options(line: &str) -> JmeterOptions {
        match parse(&words(line)).unwrap() {
            Parsed::Run(o) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_issue_lines_parse() {
        let o = options("-n -t plan.jmx -l results.jtl -Jhost=127.0.0.1 -J port=8000 --jmeterproperty=threads=50");
        assert_eq!(o.plan, PathBuf::from("plan.jmx"));
        assert_eq!(o.jtl, Some(PathBuf::from("results.jtl")));
        assert_eq!(
            o.props,
            [("host", "127.0.0.1"), ("port", "8000"), ("threads", "50")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        let o = options("-n -t plan.jmx -l r.jtl -e -o report/ -q a.properties -j stampede.log -f");
        assert_eq!(o.report_dir, Some(PathBuf::from("report/")));
        assert_eq!(o.prop_files, [PathBuf::from("a.properties")]);
        assert_eq!(o.log_file, Some(PathBuf::from("stampede.log")));
        assert!(o.force);
        assert!(options("-nt plan.jmx --dry-run --skip-unsupported").dry_run);
    }

    #[test]
    fn refusals_are_one_line() {
        let err = |line: &str| parse(&words(line)).unwrap_err().to_string();
        assert_eq!(
            err("-n -t p.jmx -X"),
            "jmeter: unknown option -X (see `stampede jmeter -h`)"
        );
        assert!(err("-n -t p.jmx -r").starts_with("jmeter -r: not supported: remote engines"));
        assert!(err("-g r.jtl").starts_with("jmeter -g: not supported"));
        assert_eq!(
            err("-n"),
            "jmeter: no test plan given (-t PLAN.jmx) (see `stampede jmeter -h`)"
        );
        assert!(err("-n -t p.jmx -e").contains("-e needs -o DIR"));
        assert!(
            err("-n -t p.jmx -Jnovalue").contains("-J novalue: expected NAME=VALUE"),
            "{}",
            err("-n -t p.jmx -Jnovalue")
        );
        assert!(err("-n -t p.jmx extra").contains("unexpected argument 'extra'"));
        assert_eq!(parse(&words("-h")).unwrap(), Parsed::Help);
        assert_eq!(parse(&words("-v")).unwrap(), Parsed::Version);
    }
}
