//! `stampede k8s` against the real Kubernetes schema: the manifests it prints
//! for the plain, `--rate` and `--slo` variants (and one with a claim and
//! awkward quoting) pass `kubernetes-validate --strict` (offline JSON schemas of
//! the Kubernetes releases, PyPI `kubernetes-validate`) for the three releases
//! upstream supports; what the schema cannot check but the API server refuses
//! (a resource that is not a quantity, an empty image) is refused before
//! anything is printed. Skips without kubernetes-validate, or fails under
//! STAMPEDE_REQUIRE_TOOLS=1 (.ci/run installs it and sets that).

use stampede_testkit::{require_tool, skip_or_fail, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The Kubernetes releases upstream supports (the three newest minors) as of
/// this test; every one of them must accept the manifests.
const KUBERNETES_VERSIONS: [&str; 3] = ["1.35.0", "1.36.0", "1.37.0"];

fn k8s(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stampede"))
        .arg("k8s")
        .args(args)
        .output()
        .expect("stampede runs")
}

/// The manifest `stampede k8s ARGS` prints, written to `dir/name.yaml`.
fn manifest(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let output = k8s(args);
    assert!(output.status.success(), "stampede k8s {args:?}: {output:?}");
    assert!(
        !output.stdout.is_empty(),
        "stampede k8s {args:?} printed nothing"
    );
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, &output.stdout).expect("writing the manifest");
    path
}

#[test]
fn the_manifests_pass_strict_kubernetes_validation() {
    let validate = require_tool!("kubernetes-validate");
    let dir = temp_dir("k8s-manifest");
    let base = ["--image", "registry.example/stampede:0.1", "--agents", "4"];
    let variants: [(&str, Vec<&str>); 4] = [
        (
            "plain",
            vec!["http://svc.prod:8080/", "-c", "400", "-d", "5m"],
        ),
        (
            "rate",
            vec![
                "http://svc:8080/api",
                "-r",
                "40000",
                "-d",
                "2m",
                "--namespace",
                "load",
                "--",
                "-H",
                "X-Test: 1",
                "--warmup",
                "10s",
            ],
        ),
        (
            "slo",
            vec![
                "http://svc:8080/",
                "-c",
                "400",
                "-d",
                "1m",
                "--",
                "--slo",
                "p99<250ms,errors<0.5%,rps>50000",
            ],
        ),
        (
            "claim-and-quoting",
            vec![
                "http://svc:8080/",
                "-n",
                "100000",
                "--pvc",
                "results",
                "--cpu",
                "1500m",
                "--memory",
                "512Mi",
                "--",
                "-H",
                "X-Quote: it's $(HOME) \"x\"\ttab",
            ],
        ),
    ];
    let files: Vec<PathBuf> = variants
        .iter()
        .map(|(name, args)| {
            let all: Vec<&str> = base.iter().chain(args.iter()).copied().collect();
            manifest(&dir, name, &all)
        })
        .collect();
    // One process per release, all at once: each takes a few tenths of a second.
    let runs: Vec<_> = KUBERNETES_VERSIONS
        .iter()
        .map(|version| {
            let child = Command::new(&validate)
                .args(["--strict", "--kubernetes-version", version])
                .args(&files)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("kubernetes-validate starts");
            (version, child)
        })
        .collect();
    for (version, child) in runs {
        let output = child.wait_with_output().expect("kubernetes-validate runs");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if said.contains("does not support kubernetes version") {
            skip_or_fail(
                &format!("this kubernetes-validate has no schema for Kubernetes {version}"),
                "upgrade it: pip install -U kubernetes-validate",
            );
            return;
        }
        assert!(output.status.success(), "Kubernetes {version}:\n{said}");
        // An empty document also "passes": each file must name the Job it checked.
        for file in &files {
            let line = format!("{} passed for resource job/stampede", file.display());
            assert!(
                said.contains(&line),
                "Kubernetes {version}: {line:?} in\n{said}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_the_api_server_would_refuse_is_refused_first() {
    let base = ["http://svc:8080/", "-c", "40", "-d", "1m", "--agents", "2"];
    for (extra, named) in [
        (&["--image", "IMG", "--cpu", "two"][..], "--cpu 'two'"),
        (
            &["--image", "IMG", "--memory", "1 GB"][..],
            "--memory '1 GB'",
        ),
        (&["--image", "IMG", "--cpu=-1"][..], "--cpu '-1'"),
        (&["--image", ""][..], "--image is empty"),
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let output = k8s(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(output.stdout.is_empty(), "no manifest for {args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    }
}
