//! `stampede import curl 'curl …'`: prints a scenario file that sends what
//! the curl command sends (flags/curl_command.rs reads it, as `run --curl`
//! does), to keep, edit (add steps, checks, feeders) and run with
//! `stampede run --scenario FILE`.

use crate::flags::curl_command::CurlRequest;

const EXAMPLES: &str = "Examples:
  stampede import curl \"curl 'http://127.0.0.1:3000/api' -H 'content-type: application/json' --data-raw '{}'\" > api.toml
  stampede run --scenario api.toml -d 30s";

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
        #[arg(short = 'c', long, default_value_t = 10, value_name = "N")]
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
            let scenario = request.scenario(i64::from(connections.max(1)))?;
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
    }
}
