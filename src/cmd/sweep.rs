//! `stampede sweep`: a ladder of full runs (connections or rates), each
//! classified, then the answer a person used to work out by hand: stable
//! range, knee, capacity, effective throughput and a USL fit, with the rule
//! behind every verdict printed.

use crate::process::exports::write_file;
use crate::process::output::write_json_value;
use crate::process::{exit, interrupt};
use crate::session::check_pids;
use crate::session::spawn::SpawnedServer;
use crate::session::sweep::{prepare, run_steps, Unwatched};
use anyhow::bail;
use stampede_report::{render_sweep_html, SweepStep};

pub use crate::flags::sweep_args::SweepArgs;

pub fn execute(args: SweepArgs) -> anyhow::Result<i32> {
    // Bad paths and pids fail before the first step, not after the last.
    crate::process::output::preflight_given(&[
        ("--json", args.json.as_ref()),
        ("--html", args.html.as_ref()),
    ])?;
    check_pids(&args.pids)?;
    let prepared = prepare(&args)?;
    let mut pids = args.pids.clone();
    let spawned = match &args.spawn {
        Some(command) => {
            let server = SpawnedServer::start(command, prepared.addr()?)?;
            pids.push(server.pid());
            Some(server)
        }
        None => None,
    };
    let stop = interrupt::stop_handle()?;
    let hlog = (args.hlog.clone()).map(|path| crate::process::hlog_file::HlogTarget {
        path,
        interval: args.hlog_interval,
    });
    let outcome = run_steps(&args, &prepared, &pids, &[], hlog.as_ref(), &mut Unwatched)?;
    drop(spawned);
    let Some(document) = outcome.document else {
        bail!("no step completed");
    };
    let (analysis, results) = (&document.analysis, &document.steps);
    let json = document.to_value()?;
    let saved = args
        .json
        .as_ref()
        .map(|path| write_json_value(&json, path))
        .transpose();
    let steps: Vec<SweepStep<'_>> = results
        .iter()
        .map(|(load, result)| SweepStep {
            load: *load,
            result,
        })
        .collect();
    let html = args
        .html
        .as_ref()
        .map(|path| write_file(path, |out| render_sweep_html(&steps, analysis, out)))
        .transpose();
    let on_stderr = args
        .json
        .as_deref()
        .is_some_and(crate::process::output::is_stdout);
    crate::process::output::print_text(on_stderr, |out| {
        stampede_report::render_sweep_text(analysis, results, out)
    })?;
    saved?;
    html?;
    Ok(if stop.is_stopped() {
        crate::process::interrupt::status()
    } else {
        exit::OK
    })
}
