//! The one rule for tests that need something from outside the workspace (curl,
//! Chromium, oha, tmux, `ip netns`, Prometheus, kubernetes-validate): when it is missing, the
//! test skips with a notice that is visible under `cargo test`, unless
//! `STAMPEDE_REQUIRE_TOOLS=1` is set (.ci/run sets it), in which case the test
//! fails and says what to install. A test that silently passes without its tool
//! would hide a broken CI install. Owns the lookup and the skip-or-fail
//! decision; not what the tests do with the tool.

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;

/// The environment variable that turns a missing tool from a skip into a failure.
pub const REQUIRE_TOOLS: &str = "STAMPEDE_REQUIRE_TOOLS";

/// A tool the tests know: the names it goes by on PATH and how to get it.
struct Known {
    tool: &'static str,
    names: &'static [&'static str],
    install: &'static str,
}

const KNOWN: &[Known] = &[
    Known {
        tool: "curl",
        names: &["curl"],
        install: "apt-get install -y curl",
    },
    Known {
        tool: "chromium",
        names: &["chromium", "chromium-browser", "google-chrome", "chrome"],
        install: "apt-get install -y chromium",
    },
    Known {
        tool: "openssl",
        names: &["openssl"],
        install: "apt-get install -y openssl",
    },
    Known {
        tool: "nginx",
        names: &["nginx"],
        install: "apt-get install -y nginx",
    },
    Known {
        tool: "tmux",
        names: &["tmux"],
        install: "apt-get install -y tmux",
    },
    Known {
        tool: "ip",
        names: &["ip"],
        install: "apt-get install -y iproute2",
    },
    Known {
        tool: "oha",
        names: &["oha"],
        // HTTP/3 is behind a feature, and the build is long.
        install: "cargo install oha --locked --features http3",
    },
    Known {
        tool: "prometheus",
        names: &["prometheus"],
        install: "apt-get install -y prometheus",
    },
    Known {
        tool: "wrk",
        names: &["wrk"],
        install: "apt-get install -y wrk",
    },
    Known {
        tool: "kubernetes-validate",
        names: &["kubernetes-validate"],
        install: "pip install kubernetes-validate",
    },
];

/// True when `STAMPEDE_REQUIRE_TOOLS` asks for missing tools to fail the tests.
pub(crate) fn tools_required() -> bool {
    required(std::env::var_os(REQUIRE_TOOLS).as_deref())
}

/// Set and neither empty nor `0` means required.
fn required(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// The path of `tool` (one of `KNOWN`'s: curl, chromium, openssl, nginx, tmux, …)
/// on PATH. When it is not there: panics under `STAMPEDE_REQUIRE_TOOLS=1`,
/// otherwise prints a skip notice and returns `None` (the caller returns).
pub fn tool_or_skip(tool: &str) -> Option<PathBuf> {
    let known = KNOWN
        .iter()
        .find(|k| k.tool == tool)
        .unwrap_or_else(|| panic!("testkit knows no tool {tool:?}: add it to tools::KNOWN"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = find_in(known.names, &path);
    if found.is_none() {
        skip_or_fail(
            &format!("{tool} is not on PATH"),
            &format!("install it: {}", known.install),
        );
    }
    found
}

/// The same rule for a requirement that is not a program on PATH (root, a
/// feature of a tool): panics under `STAMPEDE_REQUIRE_TOOLS=1`, otherwise
/// prints `SKIPPED <test>: <missing>` and returns, and the caller skips.
pub fn skip_or_fail(missing: &str, remedy: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if tools_required() {
        panic!("{test}: {missing} and {REQUIRE_TOOLS}=1 requires it; {remedy}");
    }
    // Straight to the stderr handle, not eprintln!: libtest captures the
    // print macros of a passing test, and a skip nobody sees is the problem
    // this module exists to solve.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {missing}; {remedy} (or set {REQUIRE_TOOLS}=1 to make this a failure)"
    );
}

/// The first of `names` that is an executable file in one of `path`'s directories.
fn find_in(names: &[&str], path: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Returns from the calling test (skips it) when `tool` is missing, or fails
/// it under `STAMPEDE_REQUIRE_TOOLS=1`; evaluates to the tool's path.
///
/// ```no_run
/// let curl = stampede_testkit::require_tool!("curl");
/// std::process::Command::new(curl).arg("--version").status().unwrap();
/// ```
#[macro_export]
macro_rules! require_tool {
    ($tool:expr) => {
        match $crate::tool_or_skip($tool) {
            Some(path) => path,
            None => return,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_set_non_zero_value_requires() {
        assert!(!required(None));
        assert!(!required(Some(OsStr::new(""))));
        assert!(!required(Some(OsStr::new("0"))));
        assert!(required(Some(OsStr::new("1"))));
        assert!(required(Some(OsStr::new("yes"))));
    }

    #[test]
    fn finds_executables_only_in_path_order() {
        let dir = crate::temp_dir("tools-path");
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        // Not executable: not a tool.
        std::fs::write(a.join("chromium"), "").unwrap();
        std::fs::write(b.join("chromium"), "").unwrap();
        std::fs::set_permissions(b.join("chromium"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(find_in(&["chromium"], &path), Some(b.join("chromium")));
        assert_eq!(find_in(&["curl"], &path), None);
        assert_eq!(find_in(&["curl"], OsStr::new("")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_known_tool_says_how_to_install_it() {
        for known in KNOWN {
            assert!(!known.names.is_empty() && !known.install.is_empty());
        }
    }
}
