//! `stampede k8s URL ...`: prints the Kubernetes manifests of a distributed
//! run: an Indexed Job whose pods are the agents (`JOB_COMPLETION_INDEX` is
//! the agent index), all starting at one `--start-at` a little in the future,
//! each writing its result to a volume and holding it until collected; the
//! collect-and-merge commands are YAML comments. Owns the manifest text only:
//! it talks to no cluster. The YAML is written by hand (a fixed shape, every
//! user value quoted as a JSON string, which YAML reads as a double-quoted
//! scalar), so no YAML serializer is needed at run time.

use crate::plan_args::build_plan;
use crate::run_args::parse_run_args;
use anyhow::{bail, Context};
use stampede_metrics::format_timestamp;
use stampede_plan::{format_duration, parse_duration};
use std::fmt::Write as _;
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
    Ok(crate::exit::OK)
}

/// Now plus the delay, rounded up to a whole second (easier to read and type).
fn start_time(now: SystemTime, delay: Duration) -> SystemTime {
    let at = now + delay;
    let seconds = at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() + u64::from(d.subsec_nanos() > 0));
    UNIX_EPOCH + Duration::from_secs(seconds)
}

/// The `stampede run` words every agent runs, with `$(JOB_COMPLETION_INDEX)`
/// where the agent index goes.
fn run_words(args: &K8sArgs, start_at: &str, index: &str) -> Vec<String> {
    let mut words = vec![args.url.clone()];
    let mut option = |flag: &str, value: Option<String>| {
        if let Some(value) = value {
            words.push(flag.to_string());
            words.push(value);
        }
    };
    option("-c", args.connections.map(|c| c.to_string()));
    option("-r", args.rate.map(|r| r.to_string()));
    option("-d", args.duration.map(format_duration));
    option("-n", args.requests.map(|n| n.to_string()));
    words.extend(args.run_args.iter().cloned());
    words.extend([
        "--agent".into(),
        format!("{index}/{}", args.agents),
        "--start-at".into(),
        start_at.into(),
        "--quiet".into(),
        "--json".into(),
        format!("{RESULTS_DIR}/out-{index}.json"),
    ]);
    words
}

/// Refuses, before anything is applied, what the agents would refuse.
fn check(args: &K8sArgs, start_at: &str) -> anyhow::Result<()> {
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
    let last = (args.agents - 1).to_string();
    let words = run_words(args, start_at, &last);
    let run = parse_run_args(&words)
        .map_err(|e| anyhow::anyhow!("the agents' run options: {}", e.to_string().trim()))?;
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

/// A word for `sh`, inside single quotes; `$` doubled because Kubernetes
/// itself expands `$(VAR)` in a container's args (and reads `$$` as `$`).
fn shell_word(word: &str) -> String {
    let kubernetes_safe = word.replace('$', "$$");
    format!("'{}'", kubernetes_safe.replace('\'', r"'\''"))
}

/// A YAML double-quoted scalar (a JSON string is one).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}

/// The script each pod runs: the agent's run, then holding the result until
/// it is collected (or the hold ends).
fn script(args: &K8sArgs, start_at: &str) -> String {
    const INDEX: &str = "$(JOB_COMPLETION_INDEX)";
    let words: Vec<String> = run_words(args, start_at, INDEX)
        .iter()
        .map(|w| {
            // The index placeholder must stay visible to Kubernetes' expansion.
            let word = shell_word(w);
            word.replace("$$(JOB_COMPLETION_INDEX)", INDEX)
        })
        .collect();
    let hold = args.hold.as_secs();
    let result = format!("{RESULTS_DIR}/out-{INDEX}.json");
    format!(
        "stampede run {words}\n\
         status=$?\n\
         # 1 means an SLO failed for this share: stampede merge checks the SLO on the whole.\n\
         if [ \"$status\" -eq 1 ]; then status=0; fi\n\
         echo \"stampede: agent {INDEX}/{agents} done (status $status); {result} held for collection up to {hold}s\"\n\
         waited=0\n\
         while [ ! -e {RESULTS_DIR}/collected-{INDEX} ] && [ \"$waited\" -lt {hold} ]; do sleep 5; waited=`expr \"$waited\" + 5`; done\n\
         exit \"$status\"\n",
        words = words.join(" "),
        agents = args.agents,
    )
}

/// The collect-and-merge commands, as YAML comments.
fn instructions(args: &K8sArgs, start_at: &str) -> String {
    let ns = &args.namespace;
    let last = args.agents - 1;
    let selector = format!(
        "job-name={},batch.kubernetes.io/job-completion-index=$i",
        args.name
    );
    let hold = format_duration(args.hold);
    [
        format!("# stampede k8s: {} agents load {} together.", args.agents, args.url),
        format!("# They start at {start_at}: apply before then (a late pod starts late, with a warning)."),
        "#   kubectl apply -f job.yaml".to_string(),
        format!("# Collect each agent's result while its pod holds it ({hold} after its run; Kubernetes 1.28+ labels):"),
        format!("#   for i in $(seq 0 {last}); do"),
        format!("#     pod=$(kubectl -n {ns} get pods -l {selector} -o jsonpath='{{.items[0].metadata.name}}')"),
        format!("#     until kubectl -n {ns} exec \"$pod\" -- test -e {RESULTS_DIR}/out-$i.json; do sleep 5; done"),
        format!("#     kubectl -n {ns} cp \"$pod:{RESULTS_DIR}/out-$i.json\" out-$i.json"),
        format!("#     kubectl -n {ns} exec \"$pod\" -- touch {RESULTS_DIR}/collected-$i"),
        "#   done".to_string(),
        "#   stampede merge out-*.json --json merged.json --html merged.html".to_string(),
        format!("#   kubectl -n {ns} delete job {}", args.name),
        "# See docs/distributed.md for the model and its limits.".to_string(),
    ]
    .join("\n")
}

/// Indents every line of `text` by `spaces` (a YAML literal block's body).
fn indent(text: &str, spaces: usize) -> String {
    let pad = " ".repeat(spaces);
    text.lines().map(|line| format!("{pad}{line}\n")).collect()
}

/// The manifests, checked first.
fn render(args: &K8sArgs, start: SystemTime) -> anyhow::Result<String> {
    // Second precision is enough for a start that is seconds away.
    let start_at = format_timestamp(start).replace(".000Z", "Z");
    check(args, &start_at)?;
    let name = quoted(&args.name);
    let agents = args.agents;
    let script = script(args, &start_at);
    // A literal block keeps the script readable; anything a block cannot
    // hold verbatim (control characters from user words) goes JSON-quoted.
    let script_yaml = if script.chars().all(|c| c == '\n' || !c.is_control()) {
        format!("|\n{}", indent(&script, 16))
    } else {
        format!("{}\n", quoted(&script))
    };
    let volume = match &args.pvc {
        Some(claim) => format!(
            "persistentVolumeClaim:\n            claimName: {}",
            quoted(claim)
        ),
        None => "emptyDir: {}".to_string(),
    };
    let mut out = instructions(args, &start_at);
    write!(
        out,
        r#"
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    app.kubernetes.io/name: stampede
    app.kubernetes.io/component: load-agent
spec:
  completionMode: Indexed
  completions: {agents}
  parallelism: {agents}
  # A rerun would start after the others ended: an agent runs once.
  backoffLimit: 0
  ttlSecondsAfterFinished: 86400
  template:
    metadata:
      labels:
        app.kubernetes.io/name: stampede
        app.kubernetes.io/component: load-agent
    spec:
      restartPolicy: Never
      # Agents on different nodes, so that they add machines, not just pods.
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    job-name: {name}
      containers:
        - name: stampede
          image: {image}
          command: ["/bin/sh", "-c"]
          args:
            - {script_yaml}          resources:
            requests:
              cpu: {cpu}
              memory: {memory}
            limits:
              cpu: {cpu}
              memory: {memory}
          volumeMounts:
            - name: results
              mountPath: {RESULTS_DIR}
      volumes:
        - name: results
          {volume}
"#,
        namespace = quoted(&args.namespace),
        image = quoted(&args.image),
        cpu = quoted(&args.cpu),
        memory = quoted(&args.memory),
    )
    .expect("writing to a String cannot fail");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use yaml_rust2::{Yaml, YamlLoader};

    fn args(extra: &[&str]) -> K8sArgs {
        #[derive(clap::Parser)]
        struct Words {
            #[command(flatten)]
            k8s: K8sArgs,
        }
        use clap::Parser;
        let base = [
            "k8s",
            "http://svc:8080/",
            "-c",
            "16000",
            "-d",
            "5m",
            "--agents",
            "8",
        ];
        let words = base
            .iter()
            .chain(["--image", "reg.example/stampede:0.1"].iter());
        Words::try_parse_from(words.chain(extra.iter()))
            .unwrap()
            .k8s
    }

    fn parse(args: &K8sArgs) -> (String, Yaml) {
        let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let text = render(args, start).unwrap();
        let mut docs = YamlLoader::load_from_str(&text).unwrap();
        assert_eq!(docs.len(), 1, "{text}");
        (text, docs.remove(0))
    }

    #[test]
    fn an_indexed_job_with_one_pod_per_agent() {
        let (text, job) = parse(&args(&[]));
        assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
        assert_eq!(job["kind"].as_str(), Some("Job"));
        assert_eq!(job["metadata"]["namespace"].as_str(), Some("default"));
        let spec = &job["spec"];
        assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
        assert_eq!(spec["completions"].as_i64(), Some(8));
        assert_eq!(spec["parallelism"].as_i64(), Some(8));
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
        let container = &pod["containers"][0];
        assert_eq!(
            container["image"].as_str(),
            Some("reg.example/stampede:0.1")
        );
        assert_eq!(
            container["resources"]["requests"]["cpu"].as_str(),
            Some("2")
        );
        assert_eq!(
            container["resources"]["limits"]["memory"].as_str(),
            Some("1Gi")
        );
        assert_eq!(
            container["volumeMounts"][0]["mountPath"].as_str(),
            Some("/results")
        );
        assert!(pod["volumes"][0]["emptyDir"].as_hash().is_some());
        let script = container["args"][0].as_str().unwrap();
        assert!(
            script.contains("'--agent' '$(JOB_COMPLETION_INDEX)/8'"),
            "{script}"
        );
        assert!(
            script.contains("'--start-at' '2027-01-15T08:00:00Z'"),
            "{script}"
        );
        assert!(script.contains("'/results/out-$(JOB_COMPLETION_INDEX).json'"));
        assert!(script.contains("'-d' '300s'"), "{script}");
        assert!(text.starts_with("# stampede k8s: 8 agents"));
        assert!(text.contains("#   stampede merge out-*.json --json merged.json"));
        assert!(text.contains("kubectl -n default cp"));
    }

    #[test]
    fn user_words_survive_yaml_shell_and_kubernetes_expansion() {
        let (_, job) = parse(&args(&[
            "--pvc",
            "results",
            "--",
            "-H",
            "X-Quote: it's $(HOME) \"x\"",
            "--warmup",
            "10s",
        ]));
        let pod = &job["spec"]["template"]["spec"];
        let script = pod["containers"][0]["args"][0].as_str().unwrap();
        assert!(
            script.contains(r#"'-H' 'X-Quote: it'\''s $$(HOME) "x"'"#),
            "{script}"
        );
        assert_eq!(
            pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as_str(),
            Some("results")
        );
    }

    #[test]
    fn refuses_what_the_agents_would_refuse() {
        let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let few = K8sArgs {
            connections: Some(4),
            ..args(&[])
        };
        let error = render(&few, start).unwrap_err();
        assert!(format!("{error:#}").contains("no connection"), "{error:#}");
        let owned = args(&["--", "--json", "x.json"]);
        assert!(render(&owned, start)
            .unwrap_err()
            .to_string()
            .contains("--json"));
        let bad_name = K8sArgs {
            namespace: "Load Test".into(),
            ..args(&[])
        };
        assert!(render(&bad_name, start).is_err());
    }

    #[test]
    fn quantities_follow_kubernetes_grammar() {
        for good in [
            "2", "0.5", ".5", "2.", "500m", "1Gi", "512Mi", "1.5G", "1e3", "1E-2", "+1", "8E",
        ] {
            assert!(is_quantity(good), "{good}");
        }
        for bad in [
            "", "abc", "-1", "1.2.3", "1 Gi", "1gi", "1Kb", "m", "1e", "1e+", "2 cores", "1Gi ",
        ] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }

    #[test]
    fn starts_on_a_whole_second() {
        let now = UNIX_EPOCH + Duration::from_millis(1_000_400);
        let start = start_time(now, Duration::from_secs(30));
        assert_eq!(start, UNIX_EPOCH + Duration::from_secs(1031));
    }
}
