//! `--script FILE [-- ARGS...]` (wrk's `-s`): a wrk Lua script and the words
//! its `init(args)` receives. The script is loaded before any connection
//! (a syntax error is one line naming file:line, exit 2), prepared once the
//! target is resolved (`setup` and `init` per thread), handed to the engine
//! as the workload's script, and after the report its `done` runs; a script
//! error during the run ends it with that error. The script's API is
//! crates/stampede-lua (docs/lua.md).

use crate::process::exit;
use crate::process::plan_flags::DelayWithRate;
use stampede_lua::{LoadedScript, LuaScript, RequestDefaults, ScriptConfig};
use stampede_metrics::RunResult;
use stampede_plan::{LoadModel, Plan, RequestSpec, StopCondition};
use std::path::PathBuf;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScriptArgs {
    /// A wrk Lua script (setup, init, delay, request, response, done; the
    /// wrk table): wrk's scripts run unchanged; see docs/lua.md
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// After `--`: the script's arguments (init's `args[1]`, `args[2]`, ...)
    #[arg(last = true, value_name = "SCRIPT_ARGS", requires = "script")]
    pub script_args: Vec<String>,
}

impl ScriptArgs {
    /// The script read and run once in its setup state; None without
    /// `--script`. The `wrk` table starts with `request`'s method, headers
    /// (-H, -T, ...) and body (-b, -D).
    pub fn load(&self, url: &str, request: &RequestSpec) -> anyhow::Result<Option<LoadedScript>> {
        let Some(path) = &self.script else {
            return Ok(None);
        };
        let config = ScriptConfig {
            path: path.clone(),
            url: url.to_string(),
            request: RequestDefaults {
                headers: request
                    .headers
                    .iter()
                    .map(|h| format!("{}: {}", h.name, h.value))
                    .collect(),
                method: request.method.clone(),
                body: (!request.body.is_empty()).then(|| request.body.clone()),
            },
            args: self.script_args.clone(),
        };
        LoadedScript::load(&config)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// Loads the script and runs `setup` and `init` for each of the plan's
    /// threads, against the resolved target. With `-r`, a `delay()` is
    /// refused: the rate paces the requests.
    pub fn prepare(
        &self,
        url: Option<&str>,
        plan: &Plan,
    ) -> anyhow::Result<Option<Arc<LuaScript>>> {
        let Some(path) = &self.script else {
            return Ok(None);
        };
        let Some(url) = url else {
            anyhow::bail!("--script builds its requests on one URL: give the URL (not --targets or --scenario)");
        };
        // Before setup() and init() run: they may print. HTTP/2 sends each
        // request the script returns as a stream of its own; HTTP/3 has no
        // workload path yet.
        if plan.transport.http3 {
            anyhow::bail!(
                "--script {}: HTTP/3 scripts are not supported yet (a script's requests are HTTP/1.1 or HTTP/2): drop --http3",
                path.display()
            );
        }
        if plan.request.http10 {
            // request() writes its own request line (wrk.format: HTTP/1.1):
            // the flag would be claimed in the header and never sent.
            anyhow::bail!(
                "--script {}: the script writes its own request lines (HTTP/1.1): drop --http1.0",
                path.display()
            );
        }
        let loaded = self
            .load(url, &plan.request)?
            .ok_or_else(|| anyhow::anyhow!("no script"))?;
        let open_model = matches!(plan.model, LoadModel::Rate { .. });
        let refused = |in_init| DelayWithRate {
            script: path.display().to_string(),
            in_init,
        };
        if open_model && loaded.hooks().delay {
            return Err(refused(false).into());
        }
        let addr = stampede_engine::resolve(plan)?;
        let duration = match plan.stop {
            StopCondition::Duration(d) => Some(d),
            StopCondition::Requests { limit, .. } => limit,
        };
        let watch = HookWatch::start(loaded.main_busy(), path.display(), duration)?;
        let script = loaded.prepare(plan.threads, addr)?;
        drop(watch);
        if open_model && script.hooks(0).delay {
            return Err(refused(true).into());
        }
        Ok(Some(Arc::new(script)))
    }
}

/// Right after the run, before anything is printed or written: the result
/// names the script (`plan.script`; the text's first line says it instead
/// of the plan's method), and a run a script error ended says so
/// (`stop_reason: "script_error"`; the engine sees only that it stopped).
pub fn annotate(script: Option<&LuaScript>, result: &mut RunResult) {
    let Some(script) = script else {
        return;
    };
    result.plan.script = Some(script.name().to_string());
    if script.failure().is_some() && result.stop_reason.is_none() {
        result.stop_reason = Some("script_error".into());
    }
}

/// After the run's report: the error that ended the run (its traceback on
/// stderr, exit status 2), or else the script's `done` with the result.
/// `rates`: per-thread request rates to give `done` (wrk's samples), or
/// None for one sample per second of the result.
pub fn finish(
    script: Option<&LuaScript>,
    result: &RunResult,
    rates: Option<&[f64]>,
    status: i32,
) -> anyhow::Result<i32> {
    let Some(script) = script else {
        return Ok(status);
    };
    if let Some(failure) = script.failure() {
        // As every error: its later lines (the traceback) under the message.
        return Ok(exit::report_error(&anyhow::anyhow!("{failure}")));
    }
    let duration = (result.plan.duration_s).map(Duration::from_secs_f64);
    let watch = HookWatch::start(script.main_busy(), script.name(), duration)?;
    match rates {
        Some(rates) => script.done_with_rates(result, rates)?,
        None => script.done(result)?,
    }
    drop(watch);
    // A worker given up on (a hook that never returned; the warning was
    // printed when the run ended): the run failed.
    let stuck = result.stop_reason.as_deref() == Some("worker_stuck");
    Ok(if stuck { exit::ERROR } else { status })
}

/// Watches the hooks the main thread runs (`setup` and `init` before the
/// run, `done` after it) as the engine's watchdog watches the workers'
/// (crates/stampede-engine/src/run/watchdog.rs): one that has not returned
/// within the run's duration and the grace period, or within the grace
/// period of a Ctrl-C, ends the process with one line and exit status 2.
/// Its thread cannot be stopped (LuaJIT's compiled loops are not
/// interruptible); everything measured has been written by then.
struct HookWatch {
    _done: std::sync::mpsc::Sender<()>,
}

impl HookWatch {
    fn start(
        busy: Arc<stampede_lua::Busy>,
        script: impl std::fmt::Display,
        duration: Option<Duration>,
    ) -> anyhow::Result<HookWatch> {
        let grace = stampede_engine::watchdog_grace(None);
        let limit = duration.map(|d| d + grace);
        let stop = crate::process::interrupt::stop_handle()?;
        let script = script.to_string();
        let (done, watched) = std::sync::mpsc::channel::<()>();
        let started = Instant::now();
        std::thread::Builder::new()
            .name("stampede-hook-watch".into())
            .spawn(move || {
                let mut stopped_at = None;
                loop {
                    match watched.recv_timeout(Duration::from_millis(100)) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                    let now = Instant::now();
                    if stop.is_stopped() {
                        stopped_at.get_or_insert(now);
                    }
                    let over = limit.is_some_and(|limit| now >= started + limit);
                    let interrupted = stopped_at.is_some_and(|at| now >= at + grace);
                    if over || interrupted {
                        let hook = busy.hook().map_or("a Lua hook", stampede_lua::Hook::call);
                        let within = if over {
                            let limit = limit.unwrap_or_default().as_secs_f64();
                            format!("{limit} s (the run's duration and {} s)", grace.as_secs_f64())
                        } else {
                            format!("{} s of the interrupt", grace.as_secs_f64())
                        };
                        eprintln!(
                            "stampede: error: {script}: did not return from the Lua hook {hook} within {within}; exiting"
                        );
                        std::process::exit(exit::ERROR);
                    }
                }
            })?;
        Ok(HookWatch { _done: done })
    }
}
