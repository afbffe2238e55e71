//! The top-level command line: subcommands, and `stampede URL ...` as a
//! shorthand for `stampede run URL ...`.

use crate::cmd;
use clap::{Parser, Subcommand};
use std::ffi::OsString;

const ABOUT: &str = "HTTP load-testing workbench: exact counts, honest latency, one fast binary";

const EXAMPLES: &str = "Examples:
  stampede demo                                        # built-in target + a 5 s load, no setup
  stampede http://127.0.0.1:3000/index.html -c 1000 -d 60s
  stampede run http://127.0.0.1:3000/ -c 200 -n 1000000 --no-keepalive
  stampede serve --threads 4 --port 3000";

#[derive(Debug, Parser)]
#[command(name = "stampede", version, about = ABOUT, after_help = EXAMPLES, args_override_self = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load a URL and report counts and latency (the default subcommand)
    Run(Box<cmd::run::RunArgs>),
    /// Run the built-in target server (reactor per core)
    Serve(cmd::serve::ServeArgs),
    /// Start the built-in target in-process and load it for a few seconds
    Demo(cmd::demo::DemoArgs),
    /// Run a ladder of steps and find the stable range, knee and capacity
    Sweep(cmd::sweep::SweepArgs),
    /// Compare saved results: a column per run, the change against the first
    Compare(cmd::compare::CompareArgs),
    /// Re-render a saved result as text, HTML or CSV
    Report(cmd::report::ReportArgs),
    /// Merge agents' results losslessly: stampede merge out-*.json --json merged.json
    Merge(cmd::merge::MergeArgs),
    /// Print Kubernetes manifests for a run split among N synchronized agents
    K8s(cmd::k8s::K8sArgs),
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
    #[command(disable_help_flag = true)]
    Press {
        /// the press tool's options and URL (see `stampede press -?`)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
}

const SUBCOMMANDS: &[&str] = &[
    "run", "serve", "demo", "sweep", "compare", "report", "merge", "k8s", "ab", "wrk", "webbench",
    "press", "help",
];
const TOP_LEVEL_FLAGS: [&str; 4] = ["-h", "--help", "-V", "--version"];

/// Inserts `run` when the first argument is not a subcommand or a top-level
/// flag, so that `stampede URL -c 10` means `stampede run URL -c 10`.
pub fn with_default_subcommand(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.collect();
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        let known = SUBCOMMANDS.contains(&first) || TOP_LEVEL_FLAGS.contains(&first);
        if !known {
            args.insert(1, "run".into());
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(args: &[&str]) -> Vec<String> {
        with_default_subcommand(args.iter().map(OsString::from))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn a_url_first_means_run() {
        assert_eq!(expand(&["stampede", "http://x/", "-c", "1"])[1], "run");
        assert_eq!(expand(&["stampede", "-c", "1", "http://x/"])[1], "run");
        assert_eq!(expand(&["stampede", "serve"])[1], "serve");
        assert_eq!(expand(&["stampede", "--help"])[1], "--help");
        assert_eq!(expand(&["stampede"]).len(), 1);
    }

    #[test]
    fn the_cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
