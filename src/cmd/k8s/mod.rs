//! `stampede k8s URL ...`: prints the Kubernetes manifests of a distributed
//! run: an Indexed Job whose pods are the agents (`JOB_COMPLETION_INDEX` is
//! the agent index), all starting at one `--start-at` a little in the future,
//! each writing its result to a volume and holding it until collected; the
//! collect-and-merge commands are YAML comments. Owns the manifest text only:
//! it talks to no cluster. The YAML is written by hand (a fixed shape, every
//! user value quoted as a JSON string, which YAML reads as a double-quoted
//! scalar), so no YAML serializer is needed at run time. The arguments, the
//! agents' run (typed, checked once; its words rendered by run_words.rs)
//! and the checks are here; the text is manifest.rs.

mod manifest;
#[cfg(test)]
mod tests;

use crate::flags::agent::{Share, StartAt};
use crate::flags::plan_args::build_plan;
use crate::flags::run_args::{parse_run_args, RunArgs};
use crate::flags::run_words::run_words;
use anyhow::{bail, Context};
use manifest::render;
use stampede_plan::parse_duration;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const EXAMPLES: &str = "Examples:
  stampede k8s http://svc.prod:8080/ -c 16000 -d 5m --agents 8 --image registry.example/stampede:0.1 > job.yaml
  stampede k8s http://svc:8080/api -r 40000 -d 2m --agents 4 --image IMG --namespace load -- -H 'X-Test: 1' --warmup 10s
  kubectl apply -f job.yaml      # then follow the collect-and-merge commands at the top of job.yaml";

/// Where each agent writes its result inside its pod.
const RESULTS_DIR: &str = "/results";

#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct K8sArgs {
    /// URL every agent loads (as the pods reach it: a Service name works)
    pub url: String,
    /// Connections in total, split evenly among the agents
    #[arg(short = 'c', long, value_name = "N")]
    pub connections: Option<usize>,
    /// Open model: requests per second in total, split among the agents
    #[arg(short = 'r', long, value_name = "PER_S")]
    pub rate: Option<f64>,
    /// How long the agents run
    #[arg(short = 'd', long, value_parser = parse_duration, value_name = "DUR")]
    pub duration: Option<Duration>,
    /// Requests in total, split exactly among the agents
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,
    /// Agents (pods), ideally each on its own node
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "N")]
    pub agents: u32,
    /// Container image with stampede on its PATH, /bin/sh and tar (see the Dockerfile)
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// Namespace of the Job
    #[arg(long, default_value = "default", value_name = "NS")]
    pub namespace: String,
    /// Name of the Job
    #[arg(long, default_value = "stampede", value_name = "NAME")]
    pub name: String,
    /// The agents start this long after the manifests are printed (time to
    /// apply them, schedule the pods and pull the image)
    #[arg(long, default_value = "30s", value_parser = parse_duration, value_name = "DUR")]
    pub start_delay: Duration,
    /// CPU each agent requests (and is limited to: a guaranteed share)
    #[arg(long, default_value = "2", value_name = "CPU")]
    pub cpu: String,
    /// Memory each agent requests (and is limited to)
    #[arg(long, default_value = "1Gi", value_name = "BYTES")]
    pub memory: String,
    /// Keep results on this PersistentVolumeClaim (ReadWriteMany) instead of
    /// an emptyDir that disappears with the pod
    #[arg(long, value_name = "CLAIM")]
    pub pvc: Option<String>,
    /// How long a pod keeps its result for `kubectl cp` after its run
    #[arg(long, default_value = "10m", value_parser = parse_duration, value_name = "DUR")]
    pub hold: Duration,
    /// Any further `stampede run` options, after --
    #[arg(last = true, value_name = "RUN OPTIONS")]
    pub run_args: Vec<String>,
}

pub fn execute(args: K8sArgs) -> anyhow::Result<i32> {
    let start = start_time(SystemTime::now(), args.start_delay);
    let manifest = render(&args, start)?;
    print!("{manifest}");
    Ok(crate::process::exit::OK)
}

/// Now plus the delay, rounded up to a whole second (easier to read and type).
fn start_time(now: SystemTime, delay: Duration) -> SystemTime {
    let at = now + delay;
    let seconds = at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() + u64::from(d.subsec_nanos() > 0));
    UNIX_EPOCH + Duration::from_secs(seconds)
}

/// What `stampede k8s` itself sets on every agent's run, typed: its own
/// load options, the common start, `--quiet`, and the result file (whose
/// path holds the agent `index`: Kubernetes fills in the placeholder).
fn owned_args(args: &K8sArgs, start: SystemTime, index: &str) -> anyhow::Result<RunArgs> {
    let mut run = RunArgs::for_url(&args.url)?;
    run.connections = args.connections;
    run.rate = args.rate;
    run.duration = args.duration;
    run.requests = args.requests;
    run.agent.start_at = Some(StartAt(start));
    run.quiet = true;
    run.json = Some(PathBuf::from(format!("{RESULTS_DIR}/out-{index}.json")));
    Ok(run)
}

/// The `stampede run` words every agent runs, with `index` where the agent
/// index goes: what stampede sets rendered from its typed arguments
/// (run_words.rs), `--agent`, then the user's words after `--` as given
/// (last, so that a script's own `--` arguments still end the line).
fn agent_words(args: &K8sArgs, start: SystemTime, index: &str) -> anyhow::Result<Vec<String>> {
    let mut words = run_words(&owned_args(args, start, index)?);
    words.extend(["--agent".to_string(), format!("{index}/{}", args.agents)]);
    words.extend(args.run_args.iter().cloned());
    Ok(words)
}

/// The run of agent `index`, typed: the URL and the user's words after `--`
/// read once, with what stampede sets (`owned_args`) and the agent's share.
fn agent_run(args: &K8sArgs, start: SystemTime, index: u32) -> anyhow::Result<RunArgs> {
    let mut run = parse_run_args(std::iter::once(&args.url).chain(&args.run_args))
        .map_err(|e| anyhow::anyhow!("the agents' run options: {}", e.to_string().trim()))?;
    let owned = owned_args(args, start, &index.to_string())?;
    let given_twice = |flag: &str, before: bool, after: bool| {
        if before && after {
            bail!("{flag} is given both before and after --: give it once");
        }
        Ok(())
    };
    given_twice("-c", owned.connections.is_some(), run.connections.is_some())?;
    given_twice("-r", owned.rate.is_some(), run.rate.is_some())?;
    given_twice("-d", owned.duration.is_some(), run.duration.is_some())?;
    given_twice("-n", owned.requests.is_some(), run.requests.is_some())?;
    run.connections = owned.connections.or(run.connections);
    run.rate = owned.rate.or(run.rate);
    run.duration = owned.duration.or(run.duration);
    run.requests = owned.requests.or(run.requests);
    run.agent.start_at = owned.agent.start_at;
    run.quiet = owned.quiet;
    run.json = owned.json;
    run.agent.agent = Some(Share {
        index,
        count: args.agents,
    });
    Ok(run)
}

/// Refuses, before anything is applied, what the agents would refuse.
fn check(args: &K8sArgs, start: SystemTime) -> anyhow::Result<()> {
    for name in [&args.name, &args.namespace]
        .into_iter()
        .chain(args.pvc.as_ref())
    {
        if !is_dns_label(name) {
            bail!(
                "'{name}' is not a Kubernetes name: lowercase letters, digits and '-', at most 63"
            );
        }
    }
    if args.image.trim().is_empty() {
        bail!("--image is empty: the pods need a container image with stampede on its PATH");
    }
    // The API server rejects a Job whose resources are not quantities; the
    // JSON schema cannot tell (it takes any string), so check here.
    for (flag, value) in [("--cpu", &args.cpu), ("--memory", &args.memory)] {
        if !is_quantity(value) {
            bail!("{flag} '{value}' is not a Kubernetes quantity (e.g. 2, 500m, 1.5, 1Gi, 512M)");
        }
    }
    for owned in [
        "--agent",
        "--start-at",
        "--json",
        "--repeat",
        "--until-stable",
    ] {
        if args
            .run_args
            .iter()
            .any(|w| w.split('=').next() == Some(owned))
        {
            bail!("{owned} after --: stampede k8s does not take it (it sets --agent, --start-at and --json itself)");
        }
    }
    // The last agent has the smallest share: if its plan builds, all do.
    let run = agent_run(args, start, args.agents - 1)?;
    // Each agent would refuse it at start: refused here, once.
    if let Some(url) = &run.metrics.remote_write {
        stampede_exporters::remote_write::parse_url(url)?;
    }
    // A body file lives in the image, not here: only then is the plan left unchecked.
    if run.body_file.is_none() {
        build_plan(&run).context("the agents' plan")?;
    }
    Ok(())
}

/// RFC 1123 label: what Kubernetes accepts as a namespace, Job or claim name.
fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-')
}

/// A non-negative Kubernetes resource quantity (apimachinery's grammar):
/// a decimal number, then nothing, a binary suffix (Ki … Ei), a decimal one
/// (m, k, M … E) or an exponent (e3, E-2).
fn is_quantity(text: &str) -> bool {
    let unsigned = text.strip_prefix('+').unwrap_or(text);
    let number_end = unsigned
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(number_end);
    let digits = number.chars().filter(char::is_ascii_digit).count();
    if digits == 0 || number.matches('.').count() > 1 {
        return false;
    }
    const SUFFIXES: [&str; 13] = [
        "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "k", "M", "G", "T", "P",
    ];
    if SUFFIXES.contains(&suffix) || suffix == "E" {
        return true;
    }
    // An exponent: e or E, an optional sign, digits.
    suffix
        .strip_prefix(['e', 'E'])
        .map(|rest| rest.strip_prefix(['+', '-']).unwrap_or(rest))
        .is_some_and(|exponent| {
            !exponent.is_empty() && exponent.bytes().all(|b| b.is_ascii_digit())
        })
}
