//! Tests of `stampede k8s`: the manifests parsed back as YAML, the words
//! through YAML, shell and Kubernetes expansion, and what is refused.

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

#[test]
fn the_agents_words_read_back_as_the_run_that_was_checked() {
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let args = args(&["--", "-H", "X-A: 1", "--warmup", "10s"]);
    for index in [0, 7] {
        let words = agent_words(&args, start, &index.to_string()).unwrap();
        let back = parse_run_args(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
        let checked = agent_run(&args, start, index).unwrap();
        assert_eq!(format!("{back:?}"), format!("{checked:?}"), "{words:?}");
    }
}

#[test]
fn a_load_option_before_and_after_the_separator_is_refused() {
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let twice = args(&["--", "-c", "5"]);
    let error = render(&twice, start).unwrap_err().to_string();
    assert!(
        error.contains("-c is given both before and after --"),
        "{error}"
    );
    // Given only after `--`, it is the agents' (split among them as before).
    let after = K8sArgs {
        connections: None,
        ..args(&["--", "-c", "80"])
    };
    let run = agent_run(&after, start, 0).unwrap();
    assert_eq!(run.connections, Some(80));
}
