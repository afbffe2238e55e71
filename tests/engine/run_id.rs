//! Every result names itself with a random `run_id`, shown in the summary's
//! header; `stampede merge` of several gives the merge an id of its own and
//! lists each input's in `merged_run_ids`, in input order.

use stampede_testkit::{binary, one_thread, read_json, spawn_target, temp_dir, text};
use std::process::Command;

#[test]
fn runs_have_distinct_ids_and_a_merge_lists_them() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let dir = temp_dir("run-id");
    let mut ids = Vec::new();
    let mut files = Vec::new();
    for name in ["a.json", "b.json"] {
        let path = dir.join(name).display().to_string();
        let output = Command::new(binary())
            .args([
                "run", &url, "-c", "2", "-t", "1", "-n", "50", "--json", &path,
            ])
            .output()
            .expect("stampede runs");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let id = read_json(std::path::Path::new(&path))["run_id"]
            .as_str()
            .expect("run_id")
            .to_string();
        assert_eq!(id.len(), 16, "{id}");
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        let header = text(&output.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        assert!(header.ends_with(&format!("(run {id})")), "{header}");
        ids.push(id);
        files.push(path);
    }
    assert_ne!(ids[0], ids[1]);
    let merged_path = dir.join("merged.json").display().to_string();
    let output = Command::new(binary())
        .args(["merge", &files[0], &files[1], "--json", &merged_path])
        .output()
        .expect("stampede merge runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let merged = read_json(std::path::Path::new(&merged_path));
    let merged_id = merged["run_id"].as_str().expect("the merge's run_id");
    assert_eq!(merged_id.len(), 16);
    assert!(
        !ids.iter().any(|id| id == merged_id),
        "{merged_id} is an input's"
    );
    assert_eq!(merged["merged_run_ids"], serde_json::json!(ids));
    let _ = std::fs::remove_dir_all(&dir);
}
