//! The top-level command line: subcommands, and `stampede URL ...` as a
//! shorthand for `stampede run URL ...`. A first word that is neither a
//! subcommand nor something that reads as a URL is a mistyped command, not
//! a host name (see [`reads_as_url_or_flag`]).
//!
//! Every subcommand but the compat front-ends (src/compat/) has one file
//! here; no command imports another.

pub mod compare;
pub mod demo;
pub mod experiment;
pub mod import;
pub mod k8s;
pub mod merge;
pub mod replay;
pub mod report;
pub mod run;
pub mod serve;
pub mod sweep;

use clap::{Parser, Subcommand};
use std::ffi::OsString;

const ABOUT: &str = "HTTP load-testing workbench: exact counts, honest latency, one fast binary";

const EXAMPLES: &str = "Examples:
  stampede demo                                        # built-in target + a 5 s load, no setup
  stampede http://127.0.0.1:3000/index.html -c 1000 -d 60s
  stampede run http://127.0.0.1:3000/ -c 200 -n 1000000 --no-keepalive
  stampede serve --threads 4 --port 3000";

/// The shorthand first: a bare URL runs a load.
const USAGE: &str = "stampede [run] <URL> [OPTIONS]    (run is the default command)
       stampede <COMMAND> [ARGS]";

#[derive(Debug, Parser)]
#[command(name = "stampede", version, about = ABOUT, after_help = EXAMPLES, args_override_self = true)]
#[command(override_usage = USAGE)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load a URL and report counts and latency (the default subcommand)
    Run(Box<crate::flags::run_args::RunArgs>),
    /// Run the built-in target server (reactor per core)
    Serve(serve::ServeArgs),
    /// Start the built-in target in-process and load it for a few seconds
    Demo(demo::DemoArgs),
    /// Run a ladder of steps and find the stable range, knee and capacity
    Sweep(sweep::SweepArgs),
    /// Compare a server's configurations: start each, load it, cost per request, verdicts
    Experiment(experiment::ExperimentArgs),
    /// Compare saved results: a column per run, the change against the first
    Compare(compare::CompareArgs),
    /// Re-render a saved result as text, HTML or CSV
    Report(report::ReportArgs),
    /// Merge agents' results losslessly: stampede merge out-*.json --json merged.json
    Merge(merge::MergeArgs),
    /// Print Kubernetes manifests for a run split among N synchronized agents
    K8s(k8s::K8sArgs),
    /// Print a scenario file from another tool's request: stampede import curl 'curl …'
    Import(import::ImportArgs),
    /// Send an access log's requests again at their recorded offsets: stampede replay access.log --base URL
    Replay(Box<crate::flags::replay_args::ReplayArgs>),
    /// ApacheBench's command line and report: stampede ab -n 1000 -c 10 -k URL
    #[command(disable_help_flag = true)]
    Ab {
        /// ab's options and URL (see `stampede ab -h`)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// wrk's command line and report: stampede wrk -t4 -c500 -d10s --latency URL
    #[command(disable_help_flag = true)]
    Wrk {
        /// wrk's options and URL (see `stampede wrk -h`)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// WebBench's command line and report: stampede webbench -t 60 -c 1000 URL
    #[command(disable_help_flag = true)]
    Webbench {
        /// webbench's options and URL (see `stampede webbench -h`)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// The kedao/cinatra press tool's command line and report: stampede press -t 2 -c 40 -d 30s URL
    #[command(disable_help_flag = true, visible_alias = "kedao_press_tool")]
    Press {
        /// the press tool's options and URL (see `stampede press -?`)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// JMeter's non-GUI command line: stampede jmeter -n -t plan.jmx -l results.jtl -Jport=8000
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Jmeter {
        /// JMeter's options (see `stampede jmeter -h`)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
}

const SUBCOMMANDS: &[&str] = &[
    "run",
    "serve",
    "demo",
    "sweep",
    "experiment",
    "compare",
    "report",
    "merge",
    "k8s",
    "import",
    "replay",
    "ab",
    "wrk",
    "webbench",
    "press",
    "jmeter",
    "help",
];
/// The other names of subcommands (their `alias`es above): the seeds' tool
/// names, so that a command line pasted from a seed's report runs.
const ALIASES: &[&str] = &["kedao_press_tool"];
const TOP_LEVEL_FLAGS: [&str; 4] = ["-h", "--help", "-V", "--version"];

/// A first word that is no command and does not read as a URL.
#[derive(Debug, PartialEq, Eq)]
pub struct UnknownCommand(String);

impl std::fmt::Display for UnknownCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = &self.0;
        match closest_command(word) {
            Some(command) => write!(f, "unknown command '{word}' (did you mean {command}?)"),
            None => write!(
                f,
                "unknown command '{word}'; see stampede --help \
                 (to load a host of that name: stampede http://{word}/)"
            ),
        }
    }
}

/// True for a word the implicit `run` may take: a flag (`-c 10 URL`), or
/// what reads as a URL: a scheme, a dot, a colon, a slash or a bracket
/// (`http://x`, `127.0.0.1`, `host:8080`, `host/`, `[::1]`), or `localhost`.
/// A bare word such as `swep` or `bogus` is far likelier a mistyped command
/// than a host; `stampede run web` or `stampede web/` still load host `web`.
fn reads_as_url_or_flag(word: &str) -> bool {
    word.starts_with('-')
        || word.contains(['.', ':', '/', '['])
        || word.eq_ignore_ascii_case("localhost")
}

/// The command within a typo or two of `word`, if any.
fn closest_command(word: &str) -> Option<&'static str> {
    let allowed = if word.chars().count() <= 3 { 1 } else { 2 };
    SUBCOMMANDS
        .iter()
        .map(|command| (edit_distance(word, command), *command))
        .filter(|(distance, _)| *distance <= allowed)
        .min()
        .map(|(_, command)| command)
}

/// Levenshtein distance (insertions, deletions, substitutions).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Inserts `run` when the first argument is not a subcommand or a top-level
/// flag, so that `stampede URL -c 10` means `stampede run URL -c 10`; a
/// first word that reads neither as a command nor as a URL is refused.
pub fn with_default_subcommand(
    args: impl Iterator<Item = OsString>,
) -> Result<Vec<OsString>, UnknownCommand> {
    let mut args: Vec<OsString> = args.collect();
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        let known = SUBCOMMANDS.contains(&first)
            || ALIASES.contains(&first)
            || TOP_LEVEL_FLAGS.contains(&first);
        if !known {
            if !reads_as_url_or_flag(first) {
                return Err(UnknownCommand(first.to_string()));
            }
            args.insert(1, "run".into());
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(args: &[&str]) -> Vec<String> {
        with_default_subcommand(args.iter().map(OsString::from))
            .unwrap()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn a_url_first_means_run() {
        assert_eq!(expand(&["stampede", "http://x/", "-c", "1"])[1], "run");
        assert_eq!(expand(&["stampede", "-c", "1", "http://x/"])[1], "run");
        assert_eq!(expand(&["stampede", "serve"])[1], "serve");
        assert_eq!(
            expand(&["stampede", "kedao_press_tool"])[1],
            "kedao_press_tool"
        );
        assert_eq!(expand(&["stampede", "--help"])[1], "--help");
        assert_eq!(expand(&["stampede"]).len(), 1);
        assert_eq!(expand(&["stampede", "localhost"])[1], "run");
        assert_eq!(expand(&["stampede", "127.0.0.1:3000"])[1], "run");
        assert_eq!(expand(&["stampede", "web/"])[1], "run");
        assert_eq!(expand(&["stampede", "[::1]:80"])[1], "run");
    }

    #[test]
    fn a_bare_word_is_a_mistyped_command() {
        let refuse = |word: &str| {
            with_default_subcommand(["stampede", word, "http://x/"].iter().map(OsString::from))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refuse("swep"),
            "unknown command 'swep' (did you mean sweep?)"
        );
        assert_eq!(
            refuse("comapre"),
            "unknown command 'comapre' (did you mean compare?)"
        );
        assert_eq!(refuse("rn"), "unknown command 'rn' (did you mean run?)");
        let bogus = refuse("bogus");
        assert!(bogus.starts_with("unknown command 'bogus'; see"), "{bogus}");
        assert!(bogus.contains("http://bogus/"), "{bogus}");
    }

    #[test]
    fn the_cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        // Each name the first-word check lets through is one clap knows.
        for name in SUBCOMMANDS.iter().chain(ALIASES).filter(|n| **n != "help") {
            assert!(Cli::command().find_subcommand(name).is_some(), "{name}");
        }
    }
}
