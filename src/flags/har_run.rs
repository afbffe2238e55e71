//! `stampede run --har FILE`: a HAR file read into a scenario of one group
//! (stampede-workload's `har`), whose load is the command line's: `-c`
//! users (default 1), or `-r` iterations per second with `-c` as the most
//! in flight. (`--stages`: print the scenario with `stampede import har`
//! and give the group its stages.) What the HAR reading left out becomes the run's
//! notices.

use crate::flags::run_args::RunArgs;
use crate::flags::workload_plan::ScenarioLoad;
use anyhow::Context;
use stampede_workload::{spanned, Scenario};

/// The scenario of `--har FILE`, the arguments without the load it took
/// (the scenario holds it now), and the notes of what was left out.
pub fn load(args: &RunArgs) -> anyhow::Result<Option<(ScenarioLoad, RunArgs, Vec<String>)>> {
    let Some(path) = &args.workload.har else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--har {}: reading it", path.display()))?;
    if args.stages.is_some() {
        anyhow::bail!("--har with --stages: write the scenario with `stampede import har` and give its group stages = \"...\"");
    }
    if args.connections == Some(0) {
        anyhow::bail!("-c 0: a HAR replay needs at least 1 connection");
    }
    let open = args.rate.is_some();
    let users = if open {
        1
    } else {
        args.connections.unwrap_or(1)
    };
    let options = args.workload.har_options.options(users as i64)?;
    let made = stampede_workload::har::scenario_from_har(&text, &options)
        .map_err(|e| anyhow::anyhow!("--har {}: {e}", path.display()))?;
    let mut scenario = made.scenario;
    let group = &mut scenario.group[0];
    if let Some(rate) = args.rate {
        group.connections = None;
        group.rate = Some(spanned(toml::Value::Float(rate)));
    }
    if open {
        group.max_connections = args.connections.map(|n| spanned(n as i64));
    }
    let name = path.display().to_string();
    let vars = crate::flags::workload_plan::vars_of(&args.workload)?;
    let base = path.parent().unwrap_or(std::path::Path::new("."));
    // Its errors name the file already.
    let scenario = Scenario::from_toml(&name, scenario, base, &vars)?;
    let mut rest = args.clone();
    (rest.connections, rest.rate) = (None, None);
    rest.workload.har = None;
    Ok(Some((
        ScenarioLoad::new(&name, scenario)?,
        rest,
        made.notes,
    )))
}
