//! `stampede jmeter`'s command line: JMeter's options read with its own
//! grammar (args.rs) into [`JmeterOptions`] (remote and GUI-only
//! modes refused with one line each), and where stampede's own notes go
//! (`-j FILE`).

use super::args::{read, Arity, JOpt, Word};
use crate::compat::{refuse, usage};
use std::io::Write;
use std::path::PathBuf;

pub(super) const TOOL: &str = "jmeter";

pub const HELP: &str = "\
stampede jmeter -n -t PLAN.jmx [-l RESULTS.jtl] [options]   (JMeter's non-GUI mode)
  -n, --nongui                     non-GUI mode (stampede has no GUI: always on)
  -t, --testfile FILE              the .jmx test plan to run (-t FILE, -tFILE, -t=FILE)
  -l, --logfile FILE               write the samples to FILE (JTL CSV, JMeter's default columns);
                                   an existing non-empty FILE is appended to, as JMeter does
  -f, --forceDeleteResultFile      empty -l FILE and -o DIR first
  -J, --jmeterproperty NAME=VALUE  a property for ${__P(NAME)} (also -JNAME=VALUE; an empty
                                   VALUE removes NAME)
  -p, --propfile FILE              the jmeter.properties to start from (and the user.properties
                                   file it names)
  -q, --addprop FILE               more properties from a Java .properties file
                                   (-q and -J apply in command-line order, later values win)
  -D, --systemproperty NAME=VALUE  a system property: ${__P(NAME)} falls back to it
  -S, --systemPropertyFile FILE    system properties from a file
  -e, --reportatendofloadtests     write stampede's HTML report at the end (needs -o)
  -o, --reportoutputfolder DIR     where -e writes it (DIR/index.html; DIR must be empty)
  -j, --jmeterlogfile FILE         stampede's own notes go to FILE instead of stderr
  -G, -L, -X, -i, -d               accepted and ignored with a note (remote engines' properties
                                   and exit, log levels and config, JMeter's home)
  -h, --help, -?                   this help
  -v, --version                    stampede's version
  stampede only:
  --dry-run                        print the stampede scenario the plan maps to, and stop
  --skip-unsupported               run the plan without the elements stampede cannot map
  --stampede-json PATH             also write stampede's full JSON result to PATH
  --hlog PATH                      write an HdrHistogram interval log to PATH
                                   (several thread groups: PATH.group-N before the extension)
  --hlog-interval DUR              with --hlog: the length of one interval (default 1s; 100ms works)
  Refused: -r/-R (remote engines: see `stampede k8s`), -g (dashboard from a JTL: see
  `stampede report`), -s (server mode), -H/-P/-E/-N/-u/-a (use stampede run --proxy).

Examples:
  stampede jmeter -n -t plan.jmx -l results.jtl -Jhost=127.0.0.1 -Jport=8000 -Jthreads=50
  stampede jmeter -n -t plan.jmx -l results.jtl -e -o report/
  stampede jmeter -n -t plan.jmx --dry-run > plan.toml && stampede run --scenario plan.toml";

/// JMeter's options (JMeter.java's CLOptionDescriptors), then stampede's.
const SPECS: &[JOpt] = &[
    JOpt::new("options", '?', "?", Arity::Flag),
    JOpt::new("help", 'h', "help", Arity::Flag),
    JOpt::new("version", 'v', "version", Arity::Flag),
    JOpt::new("propfile", 'p', "propfile", Arity::One),
    JOpt::new("addprop", 'q', "addprop", Arity::One).repeated(),
    JOpt::new("testfile", 't', "testfile", Arity::One),
    JOpt::new("logfile", 'l', "logfile", Arity::One),
    JOpt::new("jmeterlogconf", 'i', "jmeterlogconf", Arity::One),
    JOpt::new("jmeterlog", 'j', "jmeterlogfile", Arity::One),
    JOpt::new("nongui", 'n', "nongui", Arity::Flag),
    JOpt::new("server", 's', "server", Arity::Flag),
    JOpt::new("proxyScheme", 'E', "proxyScheme", Arity::One),
    JOpt::new("proxyHost", 'H', "proxyHost", Arity::One),
    JOpt::new("proxyPort", 'P', "proxyPort", Arity::One),
    JOpt::new("nonProxyHosts", 'N', "nonProxyHosts", Arity::One),
    JOpt::new("username", 'u', "username", Arity::One),
    JOpt::new("password", 'a', "password", Arity::One),
    JOpt::new("property", 'J', "jmeterproperty", Arity::Two).repeated(),
    JOpt::new("globalprop", 'G', "globalproperty", Arity::Two).repeated(),
    JOpt::new("sysprop", 'D', "systemproperty", Arity::Two).repeated(),
    JOpt::new("sysfile", 'S', "systemPropertyFile", Arity::One).repeated(),
    JOpt::new("force", 'f', "forceDeleteResultFile", Arity::Flag),
    JOpt::new("loglevel", 'L', "loglevel", Arity::Two).repeated(),
    JOpt::new("remote", 'r', "runremote", Arity::Flag),
    JOpt::new("remotestart", 'R', "remotestart", Arity::One),
    JOpt::new("homedir", 'd', "homedir", Arity::One),
    JOpt::new("remoteexit", 'X', "remoteexit", Arity::Flag),
    JOpt::new("reportonly", 'g', "reportonly", Arity::One),
    JOpt::new("report", 'e', "reportatendofloadtests", Arity::Flag),
    JOpt::new("reportdir", 'o', "reportoutputfolder", Arity::One),
    JOpt::long("dry-run", "dry-run", Arity::Flag),
    JOpt::long("skip-unsupported", "skip-unsupported", Arity::Flag),
    JOpt::long("stampede-json", "stampede-json", Arity::One),
    JOpt::long("hlog", "hlog", Arity::One),
    JOpt::long("hlog-interval", "hlog-interval", Arity::One),
];

/// Where a property comes from, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PropSource {
    /// `-J NAME=VALUE` (`-D` for system properties); an empty value
    /// removes NAME, as JMeter.java's initializeProperties does.
    Set(String, String),
    /// `-q FILE` (`-S FILE` for system properties).
    File(PathBuf),
}

/// What the command line asks for.
#[derive(Debug, Default, PartialEq)]
pub(super) struct JmeterOptions {
    pub plan: PathBuf,
    pub jtl: Option<PathBuf>,
    pub force: bool,
    /// `-p FILE`: the jmeter.properties the properties start from.
    pub prop_file: Option<PathBuf>,
    /// -q and -J in command-line order.
    pub props: Vec<PropSource>,
    /// -S and -D in command-line order.
    pub system_props: Vec<PropSource>,
    pub report_dir: Option<PathBuf>,
    pub log_file: Option<PathBuf>,
    pub dry_run: bool,
    pub skip_unsupported: bool,
    pub stampede_json: Option<PathBuf>,
    /// stampede's `--hlog`: each group's interval log.
    pub hlog: Option<PathBuf>,
    /// stampede's `--hlog-interval`, when given.
    pub hlog_interval: Option<std::time::Duration>,
    /// Options accepted with no effect here, as `-G NAME=VALUE`: one note.
    pub ignored: Vec<String>,
}

pub(super) type Parsed = crate::compat::Parsed<JmeterOptions>;

pub(super) fn parse(words: &[String]) -> anyhow::Result<Parsed> {
    let words = read(SPECS, words).map_err(|e| usage(TOOL, e))?;
    let mut o = JmeterOptions::default();
    let (mut plan, mut report) = (None, false);
    for word in words {
        let (key, spelled, mut args) = match word {
            Word::Opt { key, spelled, args } => (key, spelled, args),
            Word::Text(extra) => return Err(usage(TOOL, format!("unexpected argument '{extra}'"))),
        };
        // As written: `-G NAME=VALUE`, `-G FILE`, `-X`.
        let shown = match &args[..] {
            [name, value] if value.is_empty() => format!("{spelled} {name}"),
            args => format!("{spelled} {}", args.join("=")),
        };
        let value = args.first().cloned().unwrap_or_default();
        match key {
            "help" | "options" => return Ok(Parsed::Help),
            "version" => return Ok(Parsed::Version),
            "nongui" => {}
            "testfile" => plan = Some(PathBuf::from(value)),
            "logfile" => o.jtl = Some(PathBuf::from(value)),
            "force" => o.force = true,
            "propfile" => o.prop_file = Some(PathBuf::from(value)),
            "addprop" => o.props.push(PropSource::File(PathBuf::from(value))),
            "sysfile" => o.system_props.push(PropSource::File(PathBuf::from(value))),
            "property" | "sysprop" => {
                let v = args.pop().unwrap_or_default();
                let set = PropSource::Set(value.trim().to_string(), v);
                match key {
                    "property" => o.props.push(set),
                    _ => o.system_props.push(set),
                }
            }
            "report" => report = true,
            "reportdir" => o.report_dir = Some(PathBuf::from(value)),
            "jmeterlog" => o.log_file = Some(PathBuf::from(value)),
            "dry-run" => o.dry_run = true,
            "skip-unsupported" => o.skip_unsupported = true,
            "stampede-json" => o.stampede_json = Some(PathBuf::from(value)),
            "hlog" => o.hlog = Some(PathBuf::from(value)),
            "hlog-interval" => {
                let interval = crate::process::hlog_file::parse_hlog_interval(&value)
                    .map_err(|e| usage(TOOL, format!("--hlog-interval {value}: {e}")))?;
                o.hlog_interval = Some(interval);
            }
            // JMeter sends -G only to remote engines and -X only stops
            // them; -L, -i and -d tune its own logging and home.
            "globalprop" | "remoteexit" | "loglevel" | "jmeterlogconf" | "homedir" => {
                o.ignored.push(shown.trim_end().to_string())
            }
            "remote" | "remotestart" => {
                return Err(refuse(
                    TOOL,
                    &spelled,
                    "remote engines; stampede k8s splits a run among agents",
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
            // -E, -H, -P, -N, -u, -a: the proxy.
            _ => {
                return Err(refuse(
                    TOOL,
                    &spelled,
                    "use stampede run --proxy for a proxy",
                ))
            }
        }
    }
    o.plan = plan.ok_or_else(|| usage(TOOL, "no test plan given (-t PLAN.jmx)"))?;
    match (report, &o.report_dir) {
        (true, None) => return Err(usage(TOOL, "-e needs -o DIR (where the report goes)")),
        (false, Some(_)) => return Err(usage(TOOL, "-o DIR is used with -e")),
        _ => {}
    }
    if o.hlog_interval.is_some() && o.hlog.is_none() {
        return Err(usage(TOOL, "--hlog-interval is used with --hlog PATH"));
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

    fn set(name: &str, value: &str) -> PropSource {
        PropSource::Set(name.to_string(), value.to_string())
    }

    #[test]
    fn jmeter_non_gui_command_lines_parse() {
        let o = options("-n -t plan.jmx -l results.jtl -Jhost=127.0.0.1 -J port=8000 --jmeterproperty=threads=50");
        assert_eq!(o.plan, PathBuf::from("plan.jmx"));
        assert_eq!(o.jtl, Some(PathBuf::from("results.jtl")));
        assert_eq!(
            o.props,
            [
                set("host", "127.0.0.1"),
                set("port", "8000"),
                set("threads", "50")
            ]
        );
        let o = options("-n -t plan.jmx -l r.jtl -e -o report/ -q a.properties -j stampede.log -f");
        assert_eq!(o.report_dir, Some(PathBuf::from("report/")));
        assert_eq!(o.props, [PropSource::File(PathBuf::from("a.properties"))]);
        assert_eq!(o.log_file, Some(PathBuf::from("stampede.log")));
        assert!(o.force);
        assert!(options("-nt plan.jmx --dry-run --skip-unsupported").dry_run);
    }

    #[test]
    fn hlog_interval_goes_with_hlog() {
        let o = options("-n -t plan.jmx --hlog a.hlog --hlog-interval 100ms");
        assert_eq!(o.hlog, Some(PathBuf::from("a.hlog")));
        assert_eq!(o.hlog_interval, Some(std::time::Duration::from_millis(100)));
        for (line, says) in [
            (
                "-n -t plan.jmx --hlog-interval 100ms",
                "is used with --hlog",
            ),
            (
                "-n -t plan.jmx --hlog a.hlog --hlog-interval 300ms",
                "--hlog-interval 300ms",
            ),
        ] {
            let error = parse(&words(line)).unwrap_err().to_string();
            assert!(error.contains(says), "{line}: {error}");
        }
    }

    /// JMeter.java's option descriptors read by CLArgsParser.java: `=`
    /// after a short option, long options with `=` or a separate word.
    #[test]
    fn every_form_jmeter_accepts() {
        let o = options("-n -t=/p/a.jmx -j=/log/j.log -l=/out/a.jtl");
        assert_eq!(o.plan, PathBuf::from("/p/a.jmx"));
        assert_eq!(o.log_file, Some(PathBuf::from("/log/j.log")));
        assert_eq!(o.jtl, Some(PathBuf::from("/out/a.jtl")));
        let o = options("--nongui --testfile=a.jmx --logfile b.jtl");
        assert_eq!(
            (o.plan, o.jtl),
            (PathBuf::from("a.jmx"), Some(PathBuf::from("b.jtl")))
        );
        let o = options(
            "-n -ta.jmx -p jmeter.properties -q user.properties -Jx=1 -S s.properties -Dy=2",
        );
        assert_eq!(o.prop_file, Some(PathBuf::from("jmeter.properties")));
        assert_eq!(
            o.props,
            [
                PropSource::File(PathBuf::from("user.properties")),
                set("x", "1")
            ]
        );
        assert_eq!(
            o.system_props,
            [
                PropSource::File(PathBuf::from("s.properties")),
                set("y", "2")
            ]
        );
        // No value: JMeter removes the property.
        assert_eq!(options("-n -t a.jmx -Jnovalue").props, [set("novalue", "")]);
        let o = options("-n -t a.jmx -Gport=1 -G remote.properties -X -L jmeter=DEBUG -i log4j2.xml -d /opt/jmeter");
        assert_eq!(
            o.ignored,
            [
                "-G port=1",
                "-G remote.properties",
                "-X",
                "-L jmeter=DEBUG",
                "-i log4j2.xml",
                "-d /opt/jmeter"
            ]
        );
    }

    #[test]
    fn refusals_are_one_line() {
        let err = |line: &str| parse(&words(line)).unwrap_err().to_string();
        assert_eq!(
            err("-n -t p.jmx -Z"),
            "jmeter: unknown option -Z (see `stampede jmeter -h`)"
        );
        assert!(err("-n -t p.jmx -r").starts_with("jmeter -r: not supported: remote engines"));
        assert!(err("-g r.jtl").starts_with("jmeter -g: not supported"));
        assert!(err("-n -t p.jmx -H proxy -P 8080").starts_with("jmeter -H: not supported"));
        assert_eq!(
            err("-n"),
            "jmeter: no test plan given (-t PLAN.jmx) (see `stampede jmeter -h`)"
        );
        assert!(err("-n -t p.jmx -e").contains("-e needs -o DIR"));
        assert!(err("-n -t p.jmx -t q.jmx").contains("duplicate options for -t/--testfile"));
        assert!(err("-n -t").contains("missing argument to option -t"));
        assert!(err("-n -t p.jmx extra").contains("unexpected argument 'extra'"));
        assert_eq!(parse(&words("-h")).unwrap(), Parsed::Help);
        assert_eq!(parse(&words("-?")).unwrap(), Parsed::Help);
        assert_eq!(parse(&words("-v")).unwrap(), Parsed::Version);
    }
}
