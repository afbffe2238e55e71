//! `--script FILE [-- ARGS...]` (wrk's `-s`): a wrk Lua script and the words
//! its `init(args)` receives, and loading it before any connection, so a
//! syntax error is one line naming file:line (exit 2). The script's API is
//! crates/stampede-lua (docs/lua.md).

use stampede_lua::{LoadedScript, ScriptConfig};
use stampede_plan::Header;
use std::path::PathBuf;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScriptArgs {
    /// A wrk Lua script (setup, init, delay, request, response, done; the
    /// wrk table): wrk's scripts run unchanged; see docs/lua.md
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// After `--`: the script's arguments (init's args[1], args[2], ...)
    #[arg(last = true, value_name = "SCRIPT_ARGS", requires = "script")]
    pub script_args: Vec<String>,
}

impl ScriptArgs {
    /// The script read and run once in its setup state; None without
    /// `--script`. `open_model` (`-r`): a `delay()` is refused, the
    /// schedule paces the requests.
    pub fn load(
        &self,
        url: &str,
        headers: &[Header],
        open_model: bool,
    ) -> anyhow::Result<Option<LoadedScript>> {
        let Some(path) = &self.script else {
            return Ok(None);
        };
        let config = ScriptConfig {
            path: path.clone(),
            url: url.to_string(),
            headers: headers
                .iter()
                .map(|h| format!("{}: {}", h.name, h.value))
                .collect(),
            args: self.script_args.clone(),
        };
        let script = LoadedScript::load(&config).map_err(|e| anyhow::anyhow!("{e}"))?;
        if open_model && script.hooks().delay {
            anyhow::bail!(
                "--script: {} defines delay(), which paces a connection's requests; with -r the rate does: drop -r or delay()",
                path.display()
            );
        }
        Ok(Some(script))
    }

    /// Loads the script to check it, then refuses to run: the engine does
    /// not take scripts yet (its hook is being wired; see docs/lua.md).
    pub fn check_until_wired(
        &self,
        url: &str,
        headers: &[Header],
        open_model: bool,
    ) -> anyhow::Result<()> {
        if let (Some(path), Some(_)) = (&self.script, self.load(url, headers, open_model)?) {
            anyhow::bail!(
                "--script: {} loads, but this build's engine cannot run scripts yet",
                path.display()
            );
        }
        Ok(())
    }
}
