//! docs/result-schema.md cannot drift from the files stampede writes: one
//! bounded run writes every export, and the columns of each file's header line
//! must be exactly the columns documented, in order, in that file's section of
//! the doc; every top-level key of the JSON result must be in the doc's table,
//! and every key of a second of its `timeseries` (with its histograms' tags)
//! in that row.

use stampede_testkit::{spawn_target, temp_dir, TargetConfig};
use std::path::Path;
use std::process::Command;

fn doc() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result-schema.md");
    std::fs::read_to_string(&path).expect("docs/result-schema.md")
}

/// The text of the `### `FLAG …` section, up to the next heading.
fn section<'a>(doc: &'a str, flag: &str) -> &'a str {
    let heading = format!("\n### `{flag} ");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("docs/result-schema.md has no section {heading:?}"));
    let body = &doc[start + heading.len()..];
    // The next heading (`## ` or `### `; a `# ` line in a code block is not one).
    let end = ["\n## ", "\n### "]
        .iter()
        .filter_map(|h| body.find(h))
        .min()
        .unwrap_or(body.len());
    &body[..end]
}

/// The column names a section's table documents, in order: the backticked
/// names of each row's first cell (`| `a`, `b` | … |`).
fn documented_columns(section: &str) -> Vec<String> {
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .flat_map(|line| {
            let cell = line[1..].split('|').next().unwrap_or("");
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn header(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("an export file");
    text.lines().next().expect("a header line").to_string()
}

#[test]
fn every_exported_column_and_result_key_is_documented() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let dir = temp_dir("schema-doc");
    let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let url = format!("http://{}/", target.local_addr());
    let output = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args([
            "run", &url, "-n", "200", "-c", "2", "-t", "1", "--quiet", "--json",
        ])
        .arg(file("r.json"))
        // `compression` is in the result only when asked for.
        .arg("--decode")
        .args(["--csv", &file("p.csv")])
        .args(["--csv-timeseries", &file("ts.csv")])
        .args(["--gnuplot", &file("g.tsv")])
        .args(["--log-requests", &file("log.txt")])
        .output()
        .expect("stampede runs");
    assert!(output.status.success(), "{output:?}");
    let doc = doc();

    let columns = |name: &str, separator: char| -> Vec<String> {
        let line = header(&dir.join(name));
        // The request log's header is a comment, for tools that skip `#` lines.
        let line = line.strip_prefix("# ").unwrap_or(&line);
        line.split(separator).map(str::to_string).collect()
    };
    assert!(header(&dir.join("log.txt")).starts_with("# "));
    let exports = [
        ("--csv", columns("p.csv", ',')),
        ("--csv-timeseries", columns("ts.csv", ',')),
        ("--gnuplot", columns("g.tsv", '\t')),
        ("--log-requests", columns("log.txt", ' ')),
    ];
    for (flag, written) in &exports {
        assert!(
            written.len() > 1,
            "{flag}: a header of columns, got {written:?}"
        );
        let documented = documented_columns(section(&doc, flag));
        assert_eq!(
            &documented, written,
            "{flag}: the columns documented in docs/result-schema.md (left) \
             must be those the file's header has (right), in order"
        );
    }

    // The JSON keys: the main table ends where the invariants begin.
    let table = &doc[..doc.find("## Invariants").expect("an Invariants section")];
    let json: serde_json::Value = stampede_testkit::read_json(&dir.join("r.json"));
    let keys = json.as_object().expect("a JSON object").keys();
    let missing: Vec<&String> = keys
        .filter(|key| {
            !table.contains(&format!("| `{key}`")) && !table.contains(&format!("| `{key}."))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "top-level result keys missing from docs/result-schema.md: {missing:?}"
    );
    // Each second's keys, and its histograms' tags, in the `timeseries` row.
    let row = table
        .lines()
        .find(|line| line.starts_with("| `timeseries`"))
        .expect("a timeseries row");
    let point = json["timeseries"][0].as_object().expect("a first second");
    let tags = point["histograms"].as_object().expect("its histograms");
    assert!(tags.contains_key("latency"), "{tags:?}");
    let undocumented: Vec<&String> = (point.keys().chain(tags.keys()))
        .filter(|key| !row.contains(&format!("`{key}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "timeseries keys missing from docs/result-schema.md's timeseries row: {undocumented:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
