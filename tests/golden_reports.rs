//! Golden files of the text renderers: `stampede report FILE` prints exactly
//! what the command that wrote FILE printed. Each `tests/golden/NAME.json`
//! was written by a real command (a run, an open-model run, a `--targets`
//! mix, `--repeat 3`, a sweep with an SLO, a comparison) and `NAME.txt` is
//! that command's stdout, byte for byte. A renderer change that is meant
//! shows up here as a diff; rewrite the goldens with `UPDATE_GOLDEN=1 cargo
//! test --test golden_reports` and read the diff before committing it.

use stampede_testkit::{stampede, text};
use std::path::{Path, PathBuf};

const GOLDEN: [&str; 6] = ["run", "open", "targets", "repeat", "sweep", "compare"];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The first line where `got` and `want` differ, for a readable failure.
fn first_difference(got: &str, want: &str) -> String {
    let (mut got_lines, mut want_lines) = (got.lines(), want.lines());
    for number in 1.. {
        match (got_lines.next(), want_lines.next()) {
            (None, None) => break,
            (g, w) if g == w => continue,
            (g, w) => {
                return format!(
                    "line {number}:\n  got:  {}\n  want: {}",
                    g.unwrap_or("<end>"),
                    w.unwrap_or("<end>")
                )
            }
        }
    }
    "only line endings differ".into()
}

#[test]
fn report_prints_what_the_fresh_command_printed() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for name in GOLDEN {
        let json = golden_dir().join(format!("{name}.json"));
        let expected_path = golden_dir().join(format!("{name}.txt"));
        let output = stampede(&["report", json.to_str().expect("a UTF-8 path")]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "report {name}.json: {}",
            text(&output.stderr)
        );
        let got = text(&output.stdout);
        if update {
            std::fs::write(&expected_path, &got).expect("the golden file is writable");
            continue;
        }
        let want = std::fs::read_to_string(&expected_path).expect("the golden text");
        if got != want {
            failures.push(format!("{name}: {}", first_difference(&got, &want)));
        }
    }
    assert!(
        failures.is_empty(),
        "report differs from the golden text (UPDATE_GOLDEN=1 rewrites it):\n{}",
        failures.join("\n")
    );
}
