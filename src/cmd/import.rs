//! `stampede import curl 'curl …'` and `stampede import har FILE`: print a
//! scenario file that sends what the curl command sends
//! (flags/curl_command.rs reads it, as `run --curl` does) or what the HAR
//! recorded (stampede-workload's `har`, as `run --har` reads it), to keep,
//! edit (add steps, checks, feeders) and run with `stampede run --scenario`.

use crate::flags::curl_command::CurlRequest;
use crate::flags::workload_args::HarArgs;

const EXAMPLES: &str = "Examples:
  stampede import curl \"curl 'http://127.0.0.1:3000/api' -H 'content-type: application/json' --data-raw '{}'\" > api.toml
  stampede run --scenario api.toml -d 30s
  stampede import har session.har --har-no-static -c 20 > visit.toml";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub what: Import,
}

#[derive(Debug, clap::Subcommand)]
pub enum Import {
    /// A curl command line (e.g. a browser's "Copy as cURL (bash)"), as one argument
    Curl {
        /// The command, quoted as one argument: 'curl URL -H … --data-raw …'
        #[arg(value_name = "'curl …'")]
        command: String,
        /// Virtual users of the scenario's group
        #[arg(short = 'c', long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        connections: u32,
    },
    /// A HAR file (a browser's DevTools "Save all as HAR"): its requests to one origin
    Har {
        /// The HAR file
        file: std::path::PathBuf,
        #[command(flatten)]
        options: HarArgs,
        /// Virtual users of the scenario's group
        #[arg(short = 'c', long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        connections: u32,
    },
}

pub fn execute(args: ImportArgs) -> anyhow::Result<i32> {
    match args.what {
        Import::Curl {
            command,
            connections,
        } => {
            let request = CurlRequest::parse(&command)?;
            let scenario = request.scenario(i64::from(connections))?;
            let mut run = String::from("stampede run --scenario FILE -d 30s");
            for option in request.run_options() {
                run.push(' ');
                run.push_str(&option);
            }
            print!(
                "# Made by stampede import curl: the request this curl command sends.\n# Run it: {run}\n\n{}",
                toml::to_string(&scenario)?
            );
            Ok(0)
        }
        Import::Har {
            file,
            options,
            connections,
        } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let options = options.options(i64::from(connections))?;
            let made = stampede_workload::har::scenario_from_har(&text, &options)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let mut head = format!(
                "# Made by stampede import har from {}: its requests as steps, with the recorded pauses.\n# Run it: stampede run --scenario FILE -d 30s\n",
                file.display()
            );
            for note in &made.notes {
                head.push_str(&format!("# {note}\n"));
            }
            print!("{head}\n{}", toml::to_string(&made.scenario)?);
            Ok(0)
        }
    }
}
