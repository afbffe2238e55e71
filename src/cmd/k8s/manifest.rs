//! The manifest text of `stampede k8s`: the collect-and-merge comments, the
//! script each pod runs, and the Indexed Job around it, every user value
//! quoted as a JSON string (which YAML reads as a double-quoted scalar).

use super::{agent_words, check, K8sArgs, RESULTS_DIR};
use crate::flags::run_words::timestamp_word;
use stampede_plan::format_duration;
use std::fmt::Write as _;
use std::time::SystemTime;

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
fn script(args: &K8sArgs, start: SystemTime) -> anyhow::Result<String> {
    const INDEX: &str = "$(JOB_COMPLETION_INDEX)";
    let words: Vec<String> = agent_words(args, start, INDEX)?
        .iter()
        .map(|w| {
            // The index placeholder must stay visible to Kubernetes' expansion.
            let word = shell_word(w);
            word.replace("$$(JOB_COMPLETION_INDEX)", INDEX)
        })
        .collect();
    let hold = args.hold.as_secs();
    let result = format!("{RESULTS_DIR}/out-{INDEX}.json");
    Ok(format!(
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
    ))
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
pub(super) fn render(args: &K8sArgs, start: SystemTime) -> anyhow::Result<String> {
    check(args, start)?;
    let start_at = timestamp_word(start);
    let name = quoted(&args.name);
    let agents = args.agents;
    let script = script(args, start)?;
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
