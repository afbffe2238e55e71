//! `stampede run`'s workload flags: `--var`, `--feed`,
//! `--check`, `--extract`, `--capture-max`, `--scenario` and `--har`. Turning them
//! into the engine's workload is workload_plan.rs.

use std::path::PathBuf;

/// Templates, feeders, checks, extracted values and scenario files.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WorkloadArgs {
    /// A constant for {{NAME}} in the URL, headers and body (repeatable)
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Rows for templates, one per iteration: a CSV file with a header row
    /// or JSON Lines; :circular (default), :random, or :unique (each row
    /// once across the run, which stops when they run out) (repeatable)
    #[arg(long = "feed", value_name = "FILE[:MODE]")]
    pub feeds: Vec<String>,
    /// A condition every response must meet, else it counts as
    /// check_failed: 'status == 200', 'body contains "ok"',
    /// 'json($.id) exists', 'header(Content-Type) ~ json', 'time < 200ms' (repeatable)
    #[arg(long = "check", value_name = "EXPR")]
    pub checks: Vec<String>,
    /// A value taken from each response for later requests of the same
    /// connection: NAME=json($.token), header(X-Id), regex(id=(\d+)), cookie(sid) (repeatable)
    #[arg(long = "extract", value_name = "NAME=SOURCE")]
    pub extracts: Vec<String>,
    /// The most of a response's head and body kept for checks and extractors
    #[arg(long, default_value = "64KiB", value_parser = parse_capture_max, value_name = "SIZE")]
    pub capture_max: usize,
    /// Keep a cookie jar per connection (virtual user): Set-Cookie in,
    /// Cookie out on its later requests
    #[arg(long)]
    pub cookie_jar: bool,
    /// Groups of steps walked by each virtual user (TOML; see docs/scenarios.md);
    /// replaces the URL
    #[arg(long, value_name = "FILE", conflicts_with = "targets")]
    pub scenario: Option<PathBuf>,
    /// Replay a HAR file (a browser's DevTools "Save all as HAR"): its
    /// requests to one origin as steps, with the recorded pauses; -c users
    /// (default 1) or -r iterations per second walk them
    #[arg(long, value_name = "FILE", conflicts_with_all = ["targets", "scenario", "url"])]
    pub har: Option<PathBuf>,
    #[command(flatten)]
    pub har_options: HarArgs,
    /// Feeders a program built in memory (`stampede replay`'s rows), after
    /// the `--feed` ones: no file is written and read back for them.
    #[arg(skip)]
    pub built_feeders: Vec<std::sync::Arc<stampede_workload::Feeder>>,
}

/// How `--har` (and `stampede import har`) reads a HAR file.
#[derive(Debug, Clone, clap::Args)]
pub struct HarArgs {
    /// The origin whose requests to keep (https://host:port, or a host);
    /// default: the first request's
    #[arg(long, value_name = "ORIGIN")]
    pub har_origin: Option<String>,
    /// Leave out images, style sheets, scripts, fonts and media
    #[arg(long)]
    pub har_no_static: bool,
    /// The recorded pauses between requests × K (0: none)
    #[arg(long, value_name = "K", default_value_t = 1.0)]
    pub har_think: f64,
}

impl Default for HarArgs {
    fn default() -> HarArgs {
        HarArgs {
            har_origin: None,
            har_no_static: false,
            har_think: 1.0,
        }
    }
}

impl HarArgs {
    /// The HAR reading's options, for a group of `connections` users.
    pub fn options(&self, connections: i64) -> anyhow::Result<stampede_workload::har::HarOptions> {
        if !(0.0..=1000.0).contains(&self.har_think) {
            anyhow::bail!("--har-think {}: a factor from 0 to 1000", self.har_think);
        }
        Ok(stampede_workload::har::HarOptions {
            origin: self.har_origin.clone(),
            no_static: self.har_no_static,
            think_scale: self.har_think,
            connections,
        })
    }
}

fn parse_capture_max(text: &str) -> Result<usize, String> {
    match stampede_workload::parse_size(text) {
        Some(bytes) if bytes >= 1.0 => Ok(bytes as usize),
        _ => Err(format!(
            "'{text}' is not a size such as 64KiB, 1MiB or 4096"
        )),
    }
}

/// A `--feed FILE:MODE` whose MODE is misspelt reads as a file named
/// `FILE:MODE` (a colon may be part of a name), so the user would be told
/// that file is missing; when `FILE` exists, this says what is wrong.
pub fn refuse_misspelt_feed_modes(feeds: &[String]) -> anyhow::Result<()> {
    for feed in feeds {
        let Some((path, mode)) = feed.rsplit_once(':') else {
            continue;
        };
        let misspelt = !path.is_empty()
            && stampede_workload::FeedMode::parse(mode).is_none()
            && !std::path::Path::new(feed).exists()
            && std::path::Path::new(path).is_file();
        if misspelt {
            anyhow::bail!("--feed {feed}: unknown mode '{mode}' (circular, random or unique)");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_mode_of_an_existing_file_is_named() {
        let dir = std::env::temp_dir().join(format!("feed-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("ids.csv");
        std::fs::write(&file, "id\n1\n").expect("write");
        let file = file.display().to_string();
        let error = refuse_misspelt_feed_modes(&[format!("{file}:uniqe")]).unwrap_err();
        assert!(
            error.to_string().contains("unknown mode 'uniqe'"),
            "{error}"
        );
        for fine in [
            file.clone(),
            format!("{file}:unique"),
            "missing.csv:x".into(),
        ] {
            assert!(refuse_misspelt_feed_modes(&[fine]).is_ok());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
